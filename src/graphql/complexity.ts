/**
 * What an operation costs, in the terms of @pothos/plugin-complexity: every field 1, a list field's
 * sub-selection counted LIST_MULTIPLIER times (the plugin's default, an estimate of how many items a
 * list has), and a list whose size an argument sets (`first`, `limit`) counted that many times — read
 * from the operation's coerced variables, so `first: $n` costs what `first: 500` costs. The limit is
 * enforced before execution by cost-limit.ts.
 */
import type { FieldComplexityValue } from '@pothos/plugin-complexity';

/** Items assumed in a list without a size argument (nodes, pods, candidates, rules, reasons…). */
export const LIST_MULTIPLIER = 10;

/**
 * A field returning `size` items (or a page of them): its sub-selection counts `size` times, never more
 * than `max` (past it the resolver refuses the argument with its own message) nor less than 0.
 */
export function sizedList(size: number | null | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER) {
  return {
    field: 1,
    multiplier: Math.min(Math.max(size ?? fallback, 0), max),
  } satisfies FieldComplexityValue;
}

/** A list whose items its parent already counted (a page's `items`: the page multiplied by `first`). */
export const COUNTED_BY_PARENT = { field: 1, multiplier: 1 } satisfies FieldComplexityValue;

/**
 * metav1.LabelSelector semantics over plain label maps, shared by every layer that selects objects:
 * rules (podSelector, nodeSelector), the scheduler's pod affinity and topology spread.
 */
import type { LabelSelector, LabelSelectorRequirement } from './model.js';

function requirementMatches(req: LabelSelectorRequirement, labels: Record<string, string>): boolean {
  const present = Object.hasOwn(labels, req.key);
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return present && values.includes(labels[req.key] as string);
    case 'NotIn':
      return !present || !values.includes(labels[req.key] as string);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    default:
      // An operator the API would have rejected selects nothing rather than everything.
      return false;
  }
}

/** An undefined or empty selector matches everything (callers for which nil selects nothing check first). */
export function selectorMatches(sel: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!sel) return true;
  const ml = sel.matchLabels;
  if (ml) {
    for (const key in ml) {
      if (!Object.hasOwn(labels, key) || labels[key] !== ml[key]) return false;
    }
  }
  const exprs = sel.matchExpressions;
  if (exprs) for (const req of exprs) if (!requirementMatches(req, labels)) return false;
  return true;
}

/**
 * The labels every object the selector matches must carry, as "key=value" (each matchLabels entry, and
 * each In requirement with a single value); none when the selector requires none (Exists, NotIn, several
 * values, empty). An index keyed by one of them only has to test the objects carrying that label, and the
 * rarer the label, the fewer (pod-counts.ts picks the one fewest pods carry).
 */
export function selectorAnchors(sel: LabelSelector | undefined): string[] {
  const anchors: string[] = [];
  if (!sel) return anchors;
  for (const key in sel.matchLabels ?? {}) anchors.push(`${key}=${sel.matchLabels?.[key]}`);
  for (const req of sel.matchExpressions ?? []) {
    if (req.operator === 'In' && req.values?.length === 1) anchors.push(`${req.key}=${req.values[0]}`);
  }
  return anchors;
}

/** The selector with `key In (labels[key])` added for each key the labels have (matchLabelKeys). */
export function withMatchLabelKeys(
  sel: LabelSelector | undefined,
  keys: readonly string[],
  labels: Record<string, string>,
  operator: 'In' | 'NotIn' = 'In',
): LabelSelector | undefined {
  if (keys.length === 0) return sel;
  const extra: LabelSelectorRequirement[] = [];
  for (const k of keys) {
    if (Object.hasOwn(labels, k)) extra.push({ key: k, operator, values: [labels[k] as string] });
  }
  if (extra.length === 0) return sel;
  return { ...(sel ?? {}), matchExpressions: [...(sel?.matchExpressions ?? []), ...extra] };
}

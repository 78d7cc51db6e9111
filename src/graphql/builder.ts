/**
 * The one Pothos builder. Fields are non-null unless they say `nullable: true` (Pothos v4 defaults to
 * nullable; a dashboard is simpler to write against a schema that promises values). Fields may say what
 * they cost (`complexity`, complexity.ts).
 */
import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import { Kind } from 'graphql';
import { LIST_MULTIPLIER } from './complexity.js';
import type { GraphQLContext } from './context.js';
import { badUserInput } from './errors.js';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: string; Output: string };
    SafeInt: { Input: number; Output: number };
  };
}>({
  defaultFieldNullability: false,
  plugins: [ComplexityPlugin],
  // The plugin only records each field's cost here (extensions.complexity); cost-limit.ts enforces the
  // limit before execution, with a coded error and over every transport (its own check runs inside root
  // resolvers, after execution has begun).
  complexity: { disabled: true, defaultComplexity: 1, defaultListMultiplier: LIST_MULTIPLIER },
});

/** Accepts RFC 3339 times; hands resolvers the canonical ISO form so comparisons are plain string/number work. */
function parseDateTime(value: unknown): string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    throw badUserInput(
      `DateTime must be an RFC 3339 string such as 2026-01-01T00:00:00Z, got ${JSON.stringify(value)}`,
    );
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw badUserInput(`DateTime ${JSON.stringify(value)} is not a valid time`);
  return new Date(ms).toISOString();
}

builder.scalarType('DateTime', {
  description: 'An RFC 3339 time, e.g. 2026-11-29T22:04:24Z (always UTC on output).',
  serialize: (v) => v,
  parseValue: parseDateTime,
  parseLiteral: (ast) => parseDateTime(ast.kind === Kind.STRING ? ast.value : undefined),
});

function parseSafeInt(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw badUserInput(`SafeInt must be an integer between ±(2^53-1), got ${JSON.stringify(value)}`);
  }
  return value;
}

builder.scalarType('SafeInt', {
  description: 'An integer up to ±(2^53-1): byte counts do not fit GraphQL Int (32 bits).',
  serialize: (v) => v,
  parseValue: parseSafeInt,
  parseLiteral: (ast) => parseSafeInt(ast.kind === Kind.INT ? Number(ast.value) : undefined),
});

builder.queryType({});
builder.subscriptionType({});

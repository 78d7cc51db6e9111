// Every operation the dashboard sends must validate against the committed schema (schema/schema.graphql),
// so a schema change that would break the page fails here, not in a browser. (`npm run codegen` validates
// them too, and `tsc -p web/tsconfig.json` checks the code reading their results against the generated
// types; this test also checks what is sent: the generated documents, fragments included.)
import { readFileSync } from 'node:fs';
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import * as ops from './operations.js';

const schema = buildSchema(readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8'));

const documents: [string, string][] = Object.entries(ops as Record<string, unknown>).flatMap(
  ([name, value]) =>
    value instanceof String && /^\s*(query|subscription)\b/.test(value.toString())
      ? [[name, value.toString()] as [string, string]]
      : [],
);

describe('dashboard operations', () => {
  it('covers every operation the page sends', () => {
    expect(documents.map(([name]) => name).sort()).toEqual(
      [
        'DECISION',
        'DECISIONS',
        'HISTORY',
        'LOAD_UPDATES',
        'NODES',
        'PENDING',
        'RULES',
        'SCHEDULER_STATUS',
        'SIMULATE',
      ].sort(),
    );
  });

  it.each(documents)('%s validates against schema/schema.graphql', (_name, document) => {
    const errors = validate(schema, parse(document));
    expect(errors.map((e) => e.message)).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
// Deep imports: the same (CJS) graphql instance Pothos built the schema with, under vitest too.
import { parse } from 'graphql/language/parser.js';
import { validate } from 'graphql/validation/validate.js';
import { describe, expect, it } from 'vitest';
import { graphqlSchema } from './schema.js';

// The README's GraphQL examples are what a newcomer pastes first: they must stay valid.
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const examples = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].flatMap((m) =>
  (m[1] ?? '').split('\n').filter((line) => line.trim() !== ''),
);

describe('README GraphQL examples', () => {
  it('has examples', () => {
    expect(examples.length).toBeGreaterThan(3);
  });
  it.each(examples)('%s', (source) => {
    const errors = validate(graphqlSchema(), parse(source));
    expect(errors.map((e) => e.message)).toEqual([]);
  });
});

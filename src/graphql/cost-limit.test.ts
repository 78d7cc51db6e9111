import { readFileSync } from 'node:fs';
// Deep import: the same (CJS) graphql instance Pothos built the schema with, under vitest too.
import { parse } from 'graphql/language/parser.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_COST, operationCost } from './cost-limit.js';
import { EXAMPLE_OPERATIONS } from './examples.js';
import { graphqlSchema } from './schema.js';

const cost = (query: string, variables?: Record<string, unknown>, operationName?: string) =>
  operationCost(graphqlSchema(), parse(query), operationName, variables);

const HEAVY_DECISION = 'id pod candidates { node verdict reasons { code detail } rules { rule cpuMargin } }';

describe('operationCost', () => {
  it.each([
    {
      what: 'a literal first multiplies the page',
      query: '{ schedulingHistory(first: 500) { items { id pod } } }',
      // 1 (schedulingHistory) + 500 × (items 1 + 1 × (id + pod))
      cost: 1 + 500 * 3,
    },
    {
      what: 'a variable first multiplies it the same',
      query: 'query($n: Int) { schedulingHistory(first: $n) { items { id pod } } }',
      variables: { n: 500 },
      cost: 1 + 500 * 3,
    },
    {
      what: "a variable's default value counts when the variable is not sent",
      query: 'query($n: Int = 400) { schedulingHistory(first: $n) { items { id pod } } }',
      cost: 1 + 400 * 3,
    },
    {
      what: "the argument's default (50) counts when neither is given",
      query: '{ schedulingHistory { items { id pod } } }',
      cost: 1 + 50 * 3,
    },
    {
      what: 'a variable sent as null is the default page too',
      query: 'query($n: Int) { schedulingHistory(first: $n) { items { id pod } } }',
      variables: { n: null },
      cost: 1 + 50 * 3,
    },
    {
      what: 'past 500 the resolver refuses the page: it costs 500 pages, and its own error says why',
      query: 'query($n: Int) { schedulingHistory(first: $n) { items { id } } }',
      variables: { n: 1_000_000 },
      cost: 1 + 500 * 2,
    },
    {
      what: 'aliases add up',
      query:
        'query($n: Int) { a: schedulingHistory(first: $n) { items { id pod } } b: schedulingHistory(first: $n) { items { id pod } } }',
      variables: { n: 500 },
      cost: 2 * (1 + 500 * 3),
    },
    {
      what: 'nested lists multiply (10 items assumed where no argument says)',
      query: `query($n: Int) { schedulingHistory(first: $n) { items { ${HEAVY_DECISION} } } }`,
      variables: { n: 20 },
      // candidate: node + verdict + reasons (1 + 10 × 2) + rules (1 + 10 × 2) = 44; decision: 3 + 10 × 44
      cost: 1 + 20 * (1 + 2 + (1 + 10 * 44)),
    },
    {
      what: "a rule's suggestions count `limit` times",
      query: 'query($l: Int) { rules { name suggestions(limit: $l) { node headroom } } }',
      variables: { l: 1000 },
      cost: 1 + 10 * (1 + (1 + 1000 * 2)),
    },
    {
      what: 'fragments count where they are spread',
      query:
        'query($n: Int) { schedulingHistory(first: $n) { items { ...D } } } fragment D on SchedulingDecision { id pod }',
      variables: { n: 100 },
      cost: 1 + 100 * 3,
    },
    {
      what: 'only the operation that runs counts',
      query:
        'query Small { pendingPods { name } } query Big { schedulingHistory(first: 500) { items { id } } }',
      operationName: 'Small',
      cost: 1 + 10 * 1,
    },
  ])('$what', ({ query, variables, operationName, cost: expected }) => {
    expect(cost(query, variables, operationName)).toBe(expected);
  });

  it("leaves variables that do not coerce to execution's own error", () => {
    expect(cost('query($n: Int) { schedulingHistory(first: $n) { items { id } } }', { n: 'many' })).toBe(
      undefined,
    );
  });

  it('leaves an unknown or ambiguous operation to execution', () => {
    expect(cost('query A { nodes { name } } query B { nodes { name } }')).toBe(undefined);
    expect(cost('query A { nodes { name } }', undefined, 'Nope')).toBe(undefined);
  });
});

/** Every operation a real client sends, with the variables it sends. */
function realOperations(): { name: string; query: string; variables?: Record<string, unknown> }[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const fromReadme = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)]
    .flatMap((m) => (m[1] ?? '').split('\n').filter((line) => line.trim() !== ''))
    .map((query, i) => ({ name: `README #${i + 1}`, query }));
  // The dashboard's documents, read as text (web/ is not imported from src/): each operation with every
  // fragment, and the variables it is sent with (web/src/live.ts).
  const dashboard = readFileSync(new URL('../../web/src/operations.ts', import.meta.url), 'utf8');
  const blocks = [...dashboard.matchAll(/graphql\(`([\s\S]*?)`\)/g)].map((m) => m[1] ?? '');
  const fragments = blocks.filter((b) => /^\s*fragment\b/.test(b)).join('\n');
  const variables: Record<string, Record<string, unknown>> = {
    DashboardHistory: { first: 100 },
    DashboardDecision: { id: 'x' },
    DashboardSimulate: { namespace: 'default', name: 'web', spec: { maxCPU: 60 } },
  };
  const fromDashboard = blocks
    .filter((b) => /^\s*(query|subscription)\b/.test(b))
    .map((b) => {
      const name = /(?:query|subscription)\s+(\w+)/.exec(b)?.[1] ?? '?';
      const used = fragments.replace(/fragment (\w+)[\s\S]*?(?=fragment |$)/g, (f, n: string) =>
        b.includes(`...${n}`) ? f : '',
      );
      return { name, query: `${b}\n${used}`, ...(variables[name] ? { variables: variables[name] } : {}) };
    });
  const fromGraphiQL = EXAMPLE_OPERATIONS.map((op) => ({ ...op, name: `GraphiQL ${op.name}` }));
  return [...fromReadme, ...fromDashboard, ...fromGraphiQL];
}

describe('the operations real clients send', () => {
  const operations = realOperations();

  it("prices the dashboard's history at 500 decisions as the README says (8,001)", () => {
    const history = operations.find((op) => op.name === 'DashboardHistory');
    expect(history && cost(history.query, { first: 500 })).toBe(8001);
  });

  it('covers the README, every dashboard operation and every GraphiQL tab', () => {
    expect(operations.length).toBeGreaterThanOrEqual(5 + 8 + EXAMPLE_OPERATIONS.length);
  });

  it.each(operations)('$name stays under the default limit', ({ query, variables }) => {
    const c = cost(query, variables);
    expect(c).toBeDefined();
    expect(c).toBeLessThanOrEqual(DEFAULT_MAX_COST);
  });

  it('leaves room: the heaviest costs at most half the limit', () => {
    // The History tab (20 decisions with candidates) costs 12,061; the dashboard's rules 6,151.
    const costs = operations.map((op) => cost(op.query, op.variables) ?? 0);
    expect(Math.max(...costs)).toBeLessThanOrEqual(DEFAULT_MAX_COST / 2);
  });
});

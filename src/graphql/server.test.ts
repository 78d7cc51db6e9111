import { Writable } from 'node:stream';
import { getIntrospectionQuery } from 'graphql';
import { afterEach, describe, expect, it } from 'vitest';
import { rawNode, rawPod, rawRule } from '../../test/kit/objects.js';
import { componentLogger, createLogger } from '../server/log.js';
import { EXAMPLE_OPERATIONS } from './examples.js';
import { createGraphQLYoga } from './server.js';
import { FakeScheduling, FixtureCluster, fixtureSources, post } from './testing.js';

let cluster: FixtureCluster;

afterEach(() => cluster?.stop());

/** A component=graphql logger whose JSON lines are kept for assertions. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: componentLogger(createLogger('debug', sink), 'graphql'), lines };
}

function setup(opts: { graphiql?: boolean } = {}) {
  cluster = new FixtureCluster().add(
    rawNode('node-a'),
    rawPod('default', 'web-1', { node: 'node-a', labels: { app: 'web' } }),
    rawPod('default', 'waiting', { labels: { app: 'web' } }),
    rawRule('default', 'web', { maxCPU: 80 }),
  );
  const scheduling = new FakeScheduling(cluster);
  const { log, lines } = capturedLogger();
  const yoga = createGraphQLYoga({ sources: fixtureSources(cluster, { scheduling }), log, ...opts });
  return { yoga, scheduling, lines };
}

describe('errors', () => {
  it('masks unexpected errors: a code, no message detail, no stack — and logs the original', async () => {
    const { yoga, scheduling, lines } = setup();
    scheduling.status = () => {
      throw new Error('secret detail from /etc/nodeload');
    };
    const res = await post(yoga, '{ schedulerStatus { bound } }');
    expect(res.errors).toEqual([
      {
        message: 'Unexpected error.',
        locations: [{ line: 1, column: 3 }],
        path: ['schedulerStatus'],
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      },
    ]);
    expect(JSON.stringify(res)).not.toContain('secret');
    const logged = lines.find((l) => l['level'] === 50);
    expect(logged).toMatchObject({ component: 'graphql', service: 'nodeload' });
    expect(JSON.stringify(logged)).toContain('secret detail from /etc/nodeload');
  });
});

describe('graphql-armor limits', () => {
  it.each([
    {
      what: 'depth',
      query:
        '{ __type(name: "Node") { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } }',
      error: {
        message: 'Query depth limit of 8 exceeded, found 10.',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: 'maxDepth' },
      },
    },
    {
      what: 'aliases',
      query: `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: schedulerStatus { bound }`).join(' ')} }`,
      error: {
        message: 'Aliases limit of 15 exceeded, found 16.',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: 'maxAliases' },
      },
    },
    {
      what: 'cost',
      // armor multiplies by a literal `first`: (2 + 1.5 × 8.75) × 500
      query: '{ schedulingHistory(first: 500) { items { id candidates { node } } } }',
      error: {
        message: 'Query Cost limit of 5000 exceeded, found 7562.5.',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: 'costLimit' },
      },
    },
    {
      what: 'tokens',
      query: `{ nodes { ${'name '.repeat(1100)} } }`,
      error: {
        message: 'Syntax Error: Token limit of 1000 exceeded.',
        extensions: { code: 'GRAPHQL_PARSE_FAILED' },
      },
    },
  ])('rejects an operation over the $what limit, with a code', async ({ query, error }) => {
    const { yoga } = setup();
    const res = await post(yoga, query);
    expect(res.data ?? null).toBeNull();
    expect(res.errors).toEqual([expect.objectContaining(error)]);
  });

  it('does not suggest field names to a prober', async () => {
    const { yoga } = setup();
    const res = await post(yoga, '{ nodez { name } }');
    expect(res.errors?.[0]?.message).toBe('Cannot query field "nodez" on type "Query". [Suggestion hidden]');
  });

  it("lets GraphiQL's full introspection query through", async () => {
    const { yoga } = setup();
    const query = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
    });
    const res = await post<{ __schema: { types: { name: string }[] } }>(yoga, query);
    expect(res.errors).toBeUndefined();
    expect(res.data?.__schema.types.map((t) => t.name)).toEqual(
      expect.arrayContaining(['Node', 'Rule', 'SchedulingDecision']),
    );
  });

  it.each(
    EXAMPLE_OPERATIONS.filter((op) => !op.query.trimStart().includes('subscription ')).map((op) => ({
      ...op,
    })),
  )('runs the GraphiQL example $name within the limits', async ({ query, variables }) => {
    const { yoga } = setup();
    const res = await post(yoga, query, variables);
    expect(res.errors).toBeUndefined();
    expect(res.data).toBeTruthy();
  });
});

describe('GraphiQL', () => {
  async function page(yoga: ReturnType<typeof setup>['yoga']) {
    return yoga.fetch('http://yoga/graphql', { headers: { accept: 'text/html' } });
  }

  it('is served from the gateway itself, with nothing loaded from the internet', async () => {
    const { yoga } = setup();
    const res = await page(yoga);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('<title>nodeload GraphQL</title>');
    for (const remote of [
      /<script[^>]+src=["']https?:/i,
      /<link[^>]+href=["']https?:/i,
      /@import\s+url\(["']?https?:/i,
      /unpkg\.com|jsdelivr|googleapis/,
    ]) {
      expect(html).not.toMatch(remote);
    }
  });

  it('opens with the example operations as tabs', async () => {
    const { yoga } = setup();
    const html = await (await page(yoga)).text();
    for (const op of EXAMPLE_OPERATIONS) expect(html).toContain(JSON.stringify(op.query).slice(1, 40));
    expect(html).toContain('"subscriptionsProtocol":"SSE"');
  });

  it('can be switched off', async () => {
    const { yoga } = setup({ graphiql: false });
    const res = await page(yoga);
    expect(await res.text()).not.toContain('<title>');
  });
});

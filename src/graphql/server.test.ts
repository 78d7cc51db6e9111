import { Writable } from 'node:stream';
import { getIntrospectionQuery } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import { Registry, register } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { IN_PROCESS_URL, postGraphQL } from '../../test/kit/graphql.js';
import { rawNode, rawPod, rawRule } from '../../test/kit/objects.js';
import { componentLogger, createLogger } from '../server/log.js';
import { fakeUserPortAuth } from '../server/testing.js';
import { DEFAULT_COALESCE_WINDOW_MS } from '../server/write-coalescer.js';
import { EXAMPLE_OPERATIONS } from './examples.js';
import { createGraphQLServer, createGraphQLYoga } from './server.js';
import {
  createTestYoga,
  FakeScheduling,
  FixtureCluster,
  firstResult,
  fixtureSources,
  post,
  serveWebSocket,
} from './testing.js';
import type { WebSocketOptions } from './websocket.js';

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

function setup(opts: { graphiql?: boolean; introspection?: boolean } = {}) {
  cluster = new FixtureCluster().add(
    rawNode('node-a'),
    rawPod('default', 'web-1', { node: 'node-a', labels: { app: 'web' } }),
    rawPod('default', 'waiting', { labels: { app: 'web' } }),
    rawRule('default', 'web', { maxCPU: 80 }),
  );
  const scheduling = new FakeScheduling(cluster);
  const { log, lines } = capturedLogger();
  const yoga = createTestYoga({ sources: fixtureSources(cluster, { scheduling }), log, ...opts });
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
      // 1 + 500 decisions × (items 1 + id 1 + candidates (1 + 10 × (node 1 + reasons (1 + 10 × 2))))
      query: '{ schedulingHistory(first: 500) { items { id candidates { node reasons { code detail } } } } }',
      error: {
        message: 'Query cost limit of 25000 exceeded, found 111501.',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: 'costLimit', cost: 111501, maxCost: 25000 },
      },
    },
    {
      what: 'cost, with `first` a variable',
      query:
        'query($n: Int) { schedulingHistory(first: $n) { items { id candidates { node reasons { code detail } } } } }',
      variables: { n: 500 },
      error: {
        message: 'Query cost limit of 25000 exceeded, found 111501.',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: 'costLimit', cost: 111501, maxCost: 25000 },
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
  ] as { what: string; query: string; variables?: Record<string, unknown>; error: object }[])(
    'rejects an operation over the $what limit, with a code',
    async ({ query, variables, error }) => {
      const { yoga } = setup();
      const res = await post(yoga, query, variables);
      expect(res.data ?? null).toBeNull();
      expect(res.errors).toEqual([expect.objectContaining(error)]);
    },
  );

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

  it('refuses introspection when it is switched off (--production), and still runs operations', async () => {
    const { yoga } = setup({ introspection: false });
    const res = await post(yoga, '{ __schema { types { name } } }');
    expect(res.errors?.[0]?.message).toContain('GraphQL introspection has been disabled');
    expect((await post(yoga, '{ schedulerStatus { bound } __typename }')).errors).toBeUndefined();
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

  it("sends this tab's token (from the dashboard's link or session storage) as every tab's header", async () => {
    const { yoga } = setup();
    const html = await (await page(yoga)).text();
    expect(html).toContain('function nodeloadWithToken(opts)');
    expect(html).toMatch(
      /renderYogaGraphiQL\(\s*window\.document\.querySelector\('#root'\),\s*nodeloadWithToken\(\{/,
    );
    expect(html).not.toMatch(/Bearer [A-Za-z0-9]/);
  });

  it('can be switched off', async () => {
    const { yoga } = setup({ graphiql: false });
    const res = await page(yoga);
    expect(await res.text()).not.toContain('<title>');
  });
});

describe('the gate', () => {
  it('refuses an operation whose request did not pass the user port gate', async () => {
    cluster = new FixtureCluster().add(rawNode('node-a'));
    const yoga = createGraphQLYoga({ sources: fixtureSources(cluster), log: capturedLogger().log });
    const res = await postGraphQL(yoga, IN_PROCESS_URL, '{ nodes { name } }');
    expect(res.errors?.[0]).toMatchObject({
      message: expect.stringContaining('authentication required'),
      extensions: { code: 'UNAUTHENTICATED' },
    });
  });
});

describe('subscription write metrics', () => {
  it('exports the write window to the registry it is given, and nowhere without one', async () => {
    cluster = new FixtureCluster();
    const registry = new Registry();
    const server = createGraphQLServer({
      sources: fixtureSources(cluster),
      log: capturedLogger().log,
      registry,
    });
    const window = await registry.getSingleMetric('nodeload_graphql_push_write_window_seconds')?.get();
    expect(window?.values[0]?.value).toBe(DEFAULT_COALESCE_WINDOW_MS / 1000);
    expect(registry.getSingleMetric('nodeload_graphql_push_flush_duration_seconds')).toBeDefined();
    await server.close();
    const bare = createGraphQLServer({ sources: fixtureSources(cluster), log: capturedLogger().log });
    expect(register.getSingleMetric('nodeload_graphql_push_write_window_seconds')).toBeUndefined();
    await bare.close();
  });
});

describe('graphql-ws', () => {
  const gate = fakeUserPortAuth({
    users: {
      'tok-viewer': { name: 'viewer', can: ['list pods', 'list nodes', 'get /scheduler/status'] },
      'tok-shop': { name: 'shop-dev', can: ['list pods in shop'] },
    },
  });
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  async function serve(opts: Partial<WebSocketOptions> = {}): Promise<string> {
    cluster = new FixtureCluster().add(rawNode('node-a'), rawPod('shop', 'web-1', { node: 'node-a' }));
    const yoga = createGraphQLYoga({ sources: fixtureSources(cluster), log: capturedLogger().log });
    const served = await serveWebSocket(yoga, { auth: gate.auth, ...opts }, capturedLogger().log);
    servers.push(served);
    return served.url;
  }

  function client(
    url: string,
    opts: { token?: string; header?: string; headers?: Record<string, string> } = {},
  ): Client {
    const headers = { ...opts.headers, ...(opts.header ? { authorization: opts.header } : {}) };
    const c = createClient({
      url,
      webSocketImpl: class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers });
        }
      },
      retryAttempts: 0,
      lazy: true,
      ...(opts.token ? { connectionParams: { authorization: `Bearer ${opts.token}` } } : {}),
    });
    return c;
  }

  it('authenticates with the token of connection_init, or of the upgrade request', async () => {
    const url = await serve();
    const viaInit = client(url, { token: 'tok-viewer' });
    expect(await firstResult(viaInit, '{ nodes { name } }')).toEqual({
      data: { nodes: [{ name: 'node-a' }] },
    });
    await viaInit.dispose();
    const viaHeader = client(url, { header: 'Bearer tok-viewer' });
    expect(await firstResult(viaHeader, '{ schedulerStatus { running } }')).toEqual({
      data: { schedulerStatus: { running: true } },
    });
    await viaHeader.dispose();
  });

  it('closes an unauthenticated connection with 4401 and a reason; authorizes operations like HTTP', async () => {
    const url = await serve();
    const none = client(url);
    expect(await firstResult(none, '{ nodes { name } }')).toEqual({
      closed: 4401,
      reason: expect.stringContaining('Unauthorized: authentication required'),
    });
    await none.dispose();
    const wrong = client(url, { token: 'stolen' });
    expect(await firstResult(wrong, '{ nodes { name } }')).toMatchObject({ closed: 4401 });
    await wrong.dispose();
    const shop = client(url, { token: 'tok-shop' });
    expect(await firstResult(shop, '{ nodes { name } }')).toMatchObject({
      errors: [{ extensions: { code: 'FORBIDDEN', permission: 'nodes list' } }],
    });
    await shop.dispose();
  });

  it('closes with 1013 (try again later, which clients retry) while the TokenReview cannot be made', async () => {
    const { auth } = fakeUserPortAuth({ tokenReviewDown: true });
    const url = await serve({ auth });
    const c = client(url, { token: 'tok-viewer' });
    expect(await firstResult(c, '{ nodes { name } }')).toEqual({
      closed: 1013,
      reason: expect.stringContaining('Unavailable: authentication unavailable'),
    });
    await c.dispose();
  });

  describe('anonymous port: a tokenless connection only for a loopback Host (DNS rebinding)', () => {
    const anonymous = fakeUserPortAuth({ anonymous: true, users: { 'tok-viewer': { name: 'v', can: [] } } });

    it.each([
      ['localhost:8080', { data: { nodes: [{ name: 'node-a' }] } }],
      ['127.0.0.1:8080', { data: { nodes: [{ name: 'node-a' }] } }],
      ['[::1]:8080', { data: { nodes: [{ name: 'node-a' }] } }],
      [
        'evil.example:8080',
        { closed: 4403, reason: expect.stringContaining('Forbidden: no token, and the Host') },
      ],
      ['127.0.0.1.nip.io', { closed: 4403, reason: expect.stringContaining('is not a loopback name') }],
    ])('Host %s, page of the same origin', async (host, want) => {
      const url = await serve({ auth: anonymous.auth });
      const c = client(url, { headers: { host, origin: `http://${host}` } });
      expect(await firstResult(c, '{ nodes { name } }')).toEqual(want);
      await c.dispose();
    });

    it("a token is reviewed for any Host: the user's own permissions apply", async () => {
      const url = await serve({ auth: anonymous.auth });
      const c = client(url, { token: 'tok-viewer', headers: { host: 'evil.example:8080' } });
      expect(await firstResult(c, '{ nodes { name } }')).toMatchObject({
        errors: [{ extensions: { code: 'FORBIDDEN', permission: 'nodes list' } }],
      });
      await c.dispose();
    });
  });

  it('refuses a page of another origin, and lets its own and allow-listed origins in', async () => {
    const url = await serve({ allowedOrigins: ['https://console.example'] });
    const status = (origin: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(url, 'graphql-transport-ws', { headers: { origin } });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => {
          ws.close();
          resolve(101);
        });
      });
    expect(await status('https://evil.example')).toBe(403);
    expect(await status('https://console.example')).toBe(101);
    expect(await status(new URL(url.replace('ws:', 'http:')).origin)).toBe(101);
  });

  it('closes a connection sending a message over the limit (1009)', async () => {
    const url = await serve({ maxPayloadBytes: 1024 });
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url, 'graphql-transport-ws');
      ws.on('open', () => ws.send('x'.repeat(2048)));
      ws.on('close', (c) => resolve(c));
    });
    expect(code).toBe(1009);
  });

  it('caps the operations one connection runs at once', async () => {
    const url = await serve({ maxSubscriptionsPerConnection: 1 });
    const c = client(url, { token: 'tok-viewer' });
    const held = c.subscribe(
      { query: 'subscription { schedulingEvents { id } }' },
      { next() {}, error() {}, complete() {} },
    );
    expect(await firstResult(c, '{ nodes { name } }')).toMatchObject({
      errors: [{ message: 'too many operations on this connection (at most 1)' }],
    });
    held();
    await c.dispose();
  });
});

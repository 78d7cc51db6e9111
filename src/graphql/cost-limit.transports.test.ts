import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { IN_PROCESS_URL, sseSubscribe } from '../../test/kit/graphql.js';
import { rawNode } from '../../test/kit/objects.js';
import { fakeUserPortAuth } from '../server/testing.js';
import { createGraphQLYoga } from './server.js';
import {
  createTestYoga,
  FakeScheduling,
  FixtureCluster,
  fixtureSources,
  post,
  serveWebSocket,
  webSocketClient,
} from './testing.js';

const MAX_COST = 100;
const log = pino({ level: 'silent' });
// 1 + n × (items 1 + id 1): n = 10 costs 21, n = 500 costs 1,001.
const PAGE = 'query($n: Int) { schedulingHistory(first: $n) { items { id } } }';
// 1 + 1 + 1 + 10 × (node 1 + reasons (1 + 10 × 1)) = 123; without candidates, 2.
const HEAVY_EVENTS = 'subscription { schedulingEvents { id candidates { node reasons { code } } } }';
const over = (cost: number) =>
  expect.objectContaining({
    message: `Query cost limit of ${MAX_COST} exceeded, found ${cost}.`,
    extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: 'costLimit', cost, maxCost: MAX_COST },
  });

let cluster: FixtureCluster | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  cluster?.stop();
});

/** Fixture sources whose history reads and decision subscriptions are counted. */
function countedSources() {
  cluster = new FixtureCluster().add(rawNode('node-a'));
  const scheduling = new FakeScheduling(cluster);
  const calls = { history: 0, listeners: 0 };
  const history = scheduling.history;
  scheduling.history = (q) => {
    calls.history++;
    return history(q);
  };
  const onDecision = scheduling.onDecision;
  scheduling.onDecision = (fn) => {
    calls.listeners++;
    return onDecision(fn);
  };
  return { sources: fixtureSources(cluster, { scheduling }), calls };
}

describe('over HTTP', () => {
  it('refuses a page whose size a variable sets, without reading the history; allows a small one', async () => {
    const { sources, calls } = countedSources();
    const yoga = createTestYoga({ sources, log, maxCost: MAX_COST });
    const refused = await post(yoga, PAGE, { n: 500 });
    expect(refused.data ?? null).toBeNull();
    expect(refused.errors).toEqual([over(1001)]);
    expect(calls.history).toBe(0);
    const allowed = await post(yoga, PAGE, { n: 10 });
    expect(allowed.errors).toBeUndefined();
    expect(calls.history).toBe(1);
  });
});

describe('over SSE', () => {
  it('ends a subscription over the limit with the error, never listening for decisions', async () => {
    const { sources, calls } = countedSources();
    const yoga = createTestYoga({ sources, log, maxCost: MAX_COST });
    const refused = await sseSubscribe(yoga, IN_PROCESS_URL, HEAVY_EVENTS);
    expect(await refused.next()).toEqual({ errors: [over(123)] });
    await refused.close();
    expect(calls.listeners).toBe(0);
    const light = await sseSubscribe(yoga, IN_PROCESS_URL, 'subscription { schedulingEvents { id } }');
    await light.close();
    expect(calls.listeners).toBe(1);
  });
});

describe('over graphql-ws', () => {
  async function serve() {
    const { sources, calls } = countedSources();
    const yoga = createGraphQLYoga({ sources, log, maxCost: MAX_COST });
    const gate = fakeUserPortAuth({ users: { tok: { name: 'viewer', can: ['list pods'] } } });
    const served = await serveWebSocket(yoga, { auth: gate.auth });
    closers.push(served.close);
    const client = webSocketClient(served.url, 'tok');
    closers.push(() => client.dispose() as Promise<void>);
    /** Everything the operation sent until it completed. */
    const results = (query: string, variables?: Record<string, unknown>) =>
      new Promise<unknown[]>((resolve, reject) => {
        const got: unknown[] = [];
        client.subscribe(
          { query, ...(variables ? { variables } : {}) },
          { next: (r) => got.push(r), error: reject, complete: () => resolve(got) },
        );
      });
    return { results, calls };
  }

  it('refuses a query whose page size a variable sets, and a subscription over the limit', async () => {
    const { results, calls } = await serve();
    expect(await results(PAGE, { n: 500 })).toEqual([{ errors: [over(1001)] }]);
    expect(await results(HEAVY_EVENTS)).toEqual([{ errors: [over(123)] }]);
    expect(calls).toEqual({ history: 0, listeners: 0 });
    expect(await results(PAGE, { n: 10 })).toEqual([{ data: { schedulingHistory: { items: [] } } }]);
    expect(calls.history).toBe(1);
  });
});

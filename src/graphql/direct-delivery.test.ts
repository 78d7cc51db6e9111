// Shared subscriptions' results written straight to each transport (ResultQueue.attach): the same bytes
// arrive, in order, and no per-result next() runs through the iterator chain.
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { IN_PROCESS_URL, sseSubscribe } from '../../test/kit/graphql.js';
import { rawNode } from '../../test/kit/objects.js';
import { fakeUserPortAuth } from '../server/testing.js';
import { createWriteCoalescer } from '../server/write-coalescer.js';
import { ResultQueue } from './result-queue.js';
import { createGraphQLYoga } from './server.js';
import {
  createTestYoga,
  decisionFixture,
  FakeScheduling,
  FixtureCluster,
  fixtureSources,
  serveWebSocket,
  until,
  webSocketClient,
} from './testing.js';

const log = pino({ level: 'silent' });
const QUERY = 'subscription { schedulingEvents(namespace: "shop") { pod node } }';
let cluster: FixtureCluster | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  cluster?.stop();
  vi.restoreAllMocks();
});

function setup() {
  cluster = new FixtureCluster().add(rawNode('node-a'));
  const scheduling = new FakeScheduling(cluster);
  return { sources: fixtureSources(cluster, { scheduling }), scheduling };
}

const burst = (n: number) =>
  Array.from({ length: n }, (_, i) => decisionFixture({ namespace: 'shop', pod: `p${i}`, node: 'node-a' }));
const expected = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ data: { schedulingEvents: { pod: `p${i}`, node: 'node-a' } } }));

describe('direct delivery of shared subscriptions', () => {
  it('over SSE: every subscriber gets every result in order, with no next() per result', async () => {
    const attach = vi.spyOn(ResultQueue.prototype, 'attach');
    const next = vi.spyOn(ResultQueue.prototype, 'next');
    const { sources, scheduling } = setup();
    const yoga = createTestYoga({ sources, log });
    const subs = [
      await sseSubscribe(yoga, IN_PROCESS_URL, QUERY),
      await sseSubscribe(yoga, IN_PROCESS_URL, QUERY),
    ];
    for (const s of subs) closers.push(() => s.close());
    await until(() => scheduling.bus.listenerCount('decision') === 1, 'one shared execution listening');
    expect(attach).toHaveBeenCalledTimes(2);
    const before = next.mock.calls.length;
    for (const d of burst(50)) scheduling.record(d);
    await until(() => subs.every((s) => s.events.length === 50), 'all 50 results at both');
    for (const s of subs) expect(s.events).toEqual(expected(50));
    expect(next.mock.calls.length - before).toBeLessThanOrEqual(2);
  });

  it('over graphql-ws: the same next messages, in order, with no next() per result', async () => {
    const attach = vi.spyOn(ResultQueue.prototype, 'attach');
    const next = vi.spyOn(ResultQueue.prototype, 'next');
    const { sources, scheduling } = setup();
    const yoga = createGraphQLYoga({ sources, log });
    const gate = fakeUserPortAuth({ users: { tok: { name: 'viewer', can: ['list pods'] } } });
    const served = await serveWebSocket(yoga, { auth: gate.auth });
    closers.push(served.close);
    const got: unknown[][] = [[], []];
    for (const seen of got) {
      const client = webSocketClient(served.url, 'tok');
      closers.push(() => client.dispose() as Promise<void>);
      client.subscribe({ query: QUERY }, { next: (r) => seen.push(r), error: () => {}, complete: () => {} });
    }
    await until(() => attach.mock.calls.length === 2, 'both operations attached');
    await until(() => scheduling.bus.listenerCount('decision') === 1, 'one shared execution listening');
    const before = next.mock.calls.length;
    for (const d of burst(50)) scheduling.record(d);
    await until(() => got.every((g) => g.length === 50), 'all 50 results at both');
    for (const g of got) expect(g).toEqual(expected(50));
    expect(next.mock.calls.length - before).toBeLessThanOrEqual(2);
  });

  // With a write window the results of a window wait for its end and leave together (one chunk per
  // SSE stream, one buffer of frames per socket): nothing before the flush, everything in order after.
  it('over SSE with a write window: nothing before the window ends, then every result in order', async () => {
    const { sources, scheduling } = setup();
    const tasks = new Set<() => void>();
    const yoga = createTestYoga({ sources, log }, undefined, { later: (task) => void tasks.add(task) });
    const subs = [
      await sseSubscribe(yoga, IN_PROCESS_URL, QUERY),
      await sseSubscribe(yoga, IN_PROCESS_URL, QUERY),
    ];
    for (const s of subs) closers.push(() => s.close());
    await until(() => scheduling.bus.listenerCount('decision') === 1, 'one shared execution listening');
    for (const d of burst(50)) scheduling.record(d);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(subs.map((s) => s.events.length)).toEqual([0, 0]);
    expect(tasks.size).toBe(2);
    for (const task of tasks) task();
    await until(() => subs.every((s) => s.events.length === 50), 'all 50 results at both');
    for (const s of subs) expect(s.events).toEqual(expected(50));
  });

  it('over graphql-ws with a write window: nothing before the window ends, then every result in order', async () => {
    const { sources, scheduling } = setup();
    const yoga = createGraphQLYoga({ sources, log });
    const gate = fakeUserPortAuth({ users: { tok: { name: 'viewer', can: ['list pods'] } } });
    const coalescer = createWriteCoalescer({ minWindowMs: 60_000 });
    const served = await serveWebSocket(yoga, { auth: gate.auth, writeCoalescer: coalescer });
    closers.push(served.close);
    const got: unknown[][] = [[], []];
    const attach = vi.spyOn(ResultQueue.prototype, 'attach');
    // Gathered frames bypass ws.send (spied before the sockets open, whose send binds it).
    const send = vi.spyOn(WebSocket.prototype, 'send');
    for (const seen of got) {
      const client = webSocketClient(served.url, 'tok');
      closers.push(() => client.dispose() as Promise<void>);
      client.subscribe({ query: QUERY }, { next: (r) => seen.push(r), error: () => {}, complete: () => {} });
    }
    // The handshakes' own messages (connection_ack) wait for the window too: flush them along.
    await until(() => {
      coalescer.flush();
      return attach.mock.calls.length === 2;
    }, 'both operations attached');
    const sendsBefore = send.mock.calls.length;
    for (const d of burst(50)) scheduling.record(d);
    await new Promise((r) => setTimeout(r, 50));
    expect(got.map((g) => g.length)).toEqual([0, 0]);
    coalescer.flush();
    await until(() => got.every((g) => g.length === 50), 'all 50 results at both');
    for (const g of got) expect(g).toEqual(expected(50));
    expect(send.mock.calls.length).toBe(sendsBefore);
  });
});

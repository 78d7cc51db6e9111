// Cached answers replayed as bytes ahead of yoga: the same bytes yoga wrote, only to the same user and
// request, never past the response cache's time to live or a data version.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rawNode } from '../../test/kit/objects.js';
import { fakeUserPortAuth } from '../server/testing.js';
import { createUserApp, finishApp } from '../server/user-app.js';
import { DataVersion } from './response-cache.js';
import { createGraphQLServer } from './server.js';
import { FixtureCluster, fixtureSources } from './testing.js';

const log = pino({ level: 'silent' });
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0).reverse()) await close();
});

const users = {
  alice: { name: 'alice', can: ['list nodes', 'get /scheduler/status'] },
  bob: { name: 'bob', can: ['list nodes'] },
};
const NODES = JSON.stringify({ query: '{ nodes { name } }' });

/** The user app with GraphQL and a response cache, on loopback; `executed` counts yoga's answers. */
async function serve(replayMaxBytes?: number) {
  const cluster = new FixtureCluster().add(rawNode('node-a'));
  closers.push(() => cluster.stop());
  const version = new DataVersion();
  const registry = new Registry();
  const { auth } = fakeUserPortAuth({ users });
  const graphql = createGraphQLServer({
    sources: fixtureSources(cluster),
    log,
    responseCache: { version, registry, ttlMs: 1000, ...(replayMaxBytes ? { replayMaxBytes } : {}) },
  });
  const app = createUserApp({ registry, readiness: () => ({ ready: true }), auth });
  finishApp(app, log, [graphql.router]);
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () => graphql.close(),
    () => new Promise<void>((r) => server.close(() => r())),
    () => server.closeAllConnections(),
  );
  const port = (server.address() as AddressInfo).port;
  const post = async (
    token: string,
    body = NODES,
    headers: Record<string, string> = {},
    path = '/graphql',
  ) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  const counter = async (name: string, result?: string) =>
    (await registry.getSingleMetric(name)?.get())?.values
      .filter((v) => result === undefined || v.labels['result'] === result)
      .reduce((sum, v) => sum + v.value, 0) ?? 0;
  const replays = () => counter('nodeload_graphql_response_cache_replays_total');
  const hits = () => counter('nodeload_graphql_response_cache_lookups_total', 'hit');
  return { cluster, version, post, replays, hits };
}

describe('answer replay', () => {
  it('answers a repeated query with the bytes and headers yoga wrote, without yoga, as a cache hit', async () => {
    const s = await serve();
    const first = await s.post('alice');
    expect(await s.replays()).toBe(0);
    const again = await s.post('alice');
    expect(await s.replays()).toBe(1);
    expect(again.text).toBe(first.text);
    expect(JSON.parse(again.text)).toEqual({ data: { nodes: [{ name: 'node-a' }] } });
    for (const h of ['content-type', 'content-length', 'etag', 'last-modified'])
      expect([h, again.headers.get(h)]).toEqual([h, first.headers.get(h)]);
    expect(await s.hits()).toBe(1);
  });

  it('keeps recorded answers within its byte budget, the least recently used out first', async () => {
    const s = await serve(60); // room for one answer of ~40 bytes
    await s.post('alice');
    await s.post('alice');
    expect(await s.replays()).toBe(1);
    await s.post('bob');
    await s.post('alice');
    expect(await s.replays()).toBe(1);
    await s.post('alice');
    expect(await s.replays()).toBe(2);
  });

  it('never replays one user an answer recorded for another', async () => {
    const s = await serve();
    await s.post('alice');
    await s.post('bob');
    expect(await s.replays()).toBe(0);
  });

  it('answers afresh once the data version changed', async () => {
    const s = await serve();
    await s.post('alice');
    s.cluster.add(rawNode('node-b'));
    s.version.bump();
    const after = await s.post('alice');
    expect(await s.replays()).toBe(0);
    expect(
      JSON.parse(after.text)
        .data.nodes.map((n: { name: string }) => n.name)
        .sort(),
    ).toEqual(['node-a', 'node-b']);
  });

  it('answers afresh once the response cache would no longer serve the answer', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const s = await serve();
    await s.post('alice');
    vi.setSystemTime(Date.now() + 999);
    await s.post('alice');
    expect(await s.replays()).toBe(1);
    vi.setSystemTime(Date.now() + 2);
    await s.post('alice');
    expect(await s.replays()).toBe(1);
  });

  it.each<[string, { body?: string; headers?: Record<string, string>; path?: string }]>([
    ['another query', { body: JSON.stringify({ query: '{ nodes { name podCount } }' }) }],
    ['another Accept header', { headers: { accept: 'application/graphql-response+json' } }],
    ['a conditional request', { headers: { 'if-none-match': '"x"' } }],
    ['a query string', { path: '/graphql?x=1' }],
  ])('sends %s to yoga', async (_name, other) => {
    const s = await serve();
    await s.post('alice');
    await s.post('alice', other.body, other.headers, other.path);
    expect(await s.replays()).toBe(0);
  });

  it('records no answer with errors, and none the response cache did not store', async () => {
    const s = await serve();
    const broken = JSON.stringify({ query: '{ nodes { nope } }' });
    expect(JSON.parse((await s.post('alice', broken)).text).errors).toHaveLength(1);
    await s.post('alice', broken);
    // Never cached: it follows the lease, which no data version announces.
    const status = JSON.stringify({ query: '{ schedulerStatus { bound } }' });
    expect(JSON.parse((await s.post('alice', status)).text)).toEqual({
      data: { schedulerStatus: { bound: 0 } },
    });
    await s.post('alice', status);
    expect(await s.replays()).toBe(0);
  });
});

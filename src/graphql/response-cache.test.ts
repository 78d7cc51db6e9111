// Query answers reused while the data version holds: never across users, never past a change the
// gateway announced.

import { createInMemoryCache } from '@graphql-yoga/plugin-response-cache';
import { parse } from 'graphql';
import pino from 'pino';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { IN_PROCESS_URL } from '../../test/kit/graphql.js';
import { rawNode, rawRule } from '../../test/kit/objects.js';
import type { Access } from '../server/access.js';
import { fakeUserPortAuth } from '../server/testing.js';
import { DataVersion, versionScopedCache, withMemoizedJson } from './response-cache.js';
import { selectsRootField } from './response-cache-plugin.js';
import { createGraphQLYoga } from './server.js';
import { FakeScheduling, FixtureCluster, fixtureSources, IDLE_STATUS } from './testing.js';

const log = pino({ level: 'silent' });
let cluster: FixtureCluster;
afterEach(() => cluster?.stop());

const gate = fakeUserPortAuth({
  users: {
    viewer: {
      name: 'viewer',
      can: ['list nodeloadrules.example.com', 'list nodes', 'get /scheduler/status'],
    },
    shop: { name: 'shop-dev', can: ['list nodeloadrules.example.com in shop'] },
  },
});

const RULES = '{ rules { namespace name } }';

function setup(ttlMs = 1000) {
  cluster = new FixtureCluster().add(
    rawNode('node-a'),
    rawRule('shop', 'web-1', { maxCPU: 80 }),
    rawRule('ops', 'agent', { maxCPU: 90 }),
  );
  const version = new DataVersion();
  const scheduling = new FakeScheduling(cluster);
  const yoga = createGraphQLYoga({
    sources: fixtureSources(cluster, { scheduling }),
    log,
    responseCache: { version, ttlMs },
  });
  const send = (access: Access, query = RULES, headers: Record<string, string> = {}) =>
    yoga.fetch(
      IN_PROCESS_URL,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query }),
      },
      { access },
    );
  const ask = async (access: Access, query = RULES) => {
    const res = await send(access, query);
    return (await res.json()) as {
      data?: { rules: { namespace: string; name: string }[] };
      extensions?: Record<string, unknown>;
    };
  };
  const names = (r: Awaited<ReturnType<typeof ask>>) =>
    r.data?.rules.map((p) => `${p.namespace}/${p.name}`).sort();
  return { version, ask, send, names, scheduling };
}

describe('versionScopedCache', () => {
  it('drops every answer of an older data version when the version changes', async () => {
    const version = new DataVersion();
    const cache = versionScopedCache(version, () => createInMemoryCache({ max: 10 }));
    await cache.set('a', { data: { x: 1 } }, [], 60_000);
    expect(await cache.get('a')).toMatchObject({ data: { x: 1 } });
    version.bump();
    // Nothing of the old version is held: not even a key that would be asked again.
    expect(await cache.get('a')).toBeNull();
    await cache.set('b', { data: { x: 2 } }, [], 60_000);
    expect(await cache.get('b')).toMatchObject({ data: { x: 2 } });
  });

  it('counts lookups by result', async () => {
    const version = new DataVersion();
    const registry = new Registry();
    const lookups = new Counter({
      name: 'lookups',
      help: 'h',
      labelNames: ['result'],
      registers: [registry],
    });
    const cache = versionScopedCache(version, () => createInMemoryCache({ max: 10 }), lookups);
    await cache.get('a');
    await cache.set('a', { data: { x: 1 } }, [], 60_000);
    await cache.get('a');
    await cache.get('a');
    const text = await registry.metrics();
    expect(text).toContain('lookups{result="miss"} 1');
    expect(text).toContain('lookups{result="hit"} 2');
  });
});

describe('withMemoizedJson', () => {
  it('writes a cached answer once — also through the shallow copy yoga serves a hit as — and anything else as JSON.stringify would', () => {
    let writes = 0;
    const answer = withMemoizedJson({
      data: {
        nodes: [{ name: 'a' }],
        counted: {
          toJSON: () => {
            writes++;
            return 1;
          },
        },
      },
    }) as { stringify?: (r: unknown) => string };
    const write = answer.stringify as (r: unknown) => string;
    const json = '{"data":{"nodes":[{"name":"a"}],"counted":1}}';
    expect(JSON.stringify(answer)).toBe(json); // the memo itself never shows
    expect(writes).toBe(1);
    expect(write(answer)).toBe(json);
    expect(write({ ...answer, [Symbol.for('servedFromResponseCache')]: true })).toBe(json);
    expect(writes).toBe(2);
    // yoga takes the cache's http headers out of extensions before writing: the same JSON, from the memo.
    expect(write({ ...answer, extensions: undefined })).toBe(json);
    expect(writes).toBe(2);
    // A copy that changed something (a plugin adding extensions, other data) is written afresh.
    const copy = { ...answer, extensions: { x: 1 } };
    expect(write(copy)).toBe('{"data":{"nodes":[{"name":"a"}],"counted":1},"extensions":{"x":1}}');
    expect(writes).toBe(3);
    expect(write({ ...answer, data: { other: true } })).toBe('{"data":{"other":true}}');
    expect(write({ ...answer, hasNext: false })).toContain('"hasNext":false');
  });

  it('caches answers with the memo: a hit is written from it', async () => {
    const version = new DataVersion();
    const cache = versionScopedCache(version, () => createInMemoryCache({ max: 10 }));
    await cache.set('a', { data: { x: 1 } }, [], 60_000);
    const hit = (await cache.get('a')) as { stringify?: (r: unknown) => string };
    expect(hit.stringify?.(hit)).toBe('{"data":{"x":1}}');
  });
});

describe('GraphQL response cache', () => {
  it('answers the same query from the cache until the data version changes', async () => {
    const { version, ask, names } = setup();
    const viewer = gate.accessOf('viewer');
    expect(names(await ask(viewer))).toEqual(['ops/agent', 'shop/web-1']);
    // The fixture changes without announcing it: the cached answer stands...
    cluster.add(rawRule('shop', 'web-2', { maxCPU: 70 }));
    expect(names(await ask(viewer))).toEqual(['ops/agent', 'shop/web-1']);
    // ...until the version moves, as every cache, load, decision or operator event does in the gateway.
    version.bump();
    expect(names(await ask(viewer))).toEqual(['ops/agent', 'shop/web-1', 'shop/web-2']);
  });

  it('never serves one user what was cached for another, and keeps the authorization extension', async () => {
    const { ask, names } = setup();
    expect(names(await ask(gate.accessOf('viewer')))).toEqual(['ops/agent', 'shop/web-1']);
    for (let i = 0; i < 2; i++) {
      const shop = await ask(gate.accessOf('shop'));
      expect(names(shop)).toEqual(['shop/web-1']);
      expect(shop.extensions?.['authorization']).toBeDefined();
    }
  });

  it('with a time to live of 0 caches nothing', async () => {
    const { ask, names } = setup(0);
    const viewer = gate.accessOf('viewer');
    await ask(viewer);
    cluster.add(rawRule('shop', 'web-2', { maxCPU: 70 }));
    expect(names(await ask(viewer))).toEqual(['ops/agent', 'shop/web-1', 'shop/web-2']);
  });

  it('answers If-None-Match with 304 while the answer is kept, and in full once the version moved', async () => {
    const { version, send } = setup();
    const viewer = gate.accessOf('viewer');
    const first = await send(viewer);
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    expect(first.headers.get('last-modified')).toBeTruthy();
    // The stored answer is the executed one: no field of the cache's own in it.
    expect(await first.text()).toBe(
      '{"data":{"rules":[{"namespace":"ops","name":"agent"},{"namespace":"shop","name":"web-1"}]}}',
    );
    const hit = await send(viewer, RULES);
    expect(hit.headers.get('etag')).toBe(etag);
    expect((await send(viewer, RULES, { 'if-none-match': etag ?? '' })).status).toBe(304);
    version.bump();
    const after = await send(viewer, RULES, { 'if-none-match': etag ?? '' });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
  });

  it('executes the scheduler status every time, also asked through a fragment, and keeps the rest', async () => {
    const { ask, scheduling } = setup();
    const viewer = gate.accessOf('viewer');
    for (const query of [
      '{ schedulerStatus { bound } }',
      'query Q { ...S } fragment S on Query { schedulerStatus { bound } }',
    ]) {
      scheduling.statusView = { ...IDLE_STATUS, bound: 1 };
      expect(await ask(viewer, query)).toMatchObject({ data: { schedulerStatus: { bound: 1 } } });
      scheduling.statusView = { ...IDLE_STATUS, bound: 2 };
      expect(await ask(viewer, query)).toMatchObject({ data: { schedulerStatus: { bound: 2 } } });
    }
  });
});

describe('selectsRootField', () => {
  const names = new Set(['schedulerStatus', '__schema']);
  it.each([
    ['{ rules { name } }', undefined, false],
    ['{ schedulerStatus { bound } }', undefined, true],
    ['{ __schema { queryType { name } } }', undefined, true],
    ['{ ... on Query { schedulerStatus { bound } } }', undefined, true],
    [
      '{ ...F } fragment F on Query { ...G } fragment G on Query { schedulerStatus { bound } }',
      undefined,
      true,
    ],
    // A fragment that spreads itself is invalid, and yoga refuses it before execution; still no loop here.
    ['{ ...F } fragment F on Query { ...F }', undefined, false],
    ['query A { rules { name } } query B { schedulerStatus { bound } }', 'A', false],
    ['query A { rules { name } } query B { schedulerStatus { bound } }', 'B', true],
    // Only the root: a field of that name deeper down is another type's.
    ['{ rules { schedulerStatus: name } }', undefined, false],
  ])('%s (operation %s): %s', (query, operation, expected) => {
    expect(selectsRootField(parse(query), operation, names)).toBe(expected);
  });
});

// Query answers reused while the data version holds: never across users, never past a change the
// gateway announced.

import { createInMemoryCache } from '@graphql-yoga/plugin-response-cache';
import pino from 'pino';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { IN_PROCESS_URL } from '../../test/kit/graphql.js';
import { rawNode, rawRule } from '../../test/kit/objects.js';
import type { Access } from '../server/access.js';
import { fakeUserPortAuth } from '../server/testing.js';
import { DataVersion, versionScopedCache, withMemoizedJson } from './response-cache.js';
import { createGraphQLYoga } from './server.js';
import { FixtureCluster, fixtureSources } from './testing.js';

const log = pino({ level: 'silent' });
let cluster: FixtureCluster;
afterEach(() => cluster?.stop());

const gate = fakeUserPortAuth({
  users: {
    viewer: { name: 'viewer', can: ['list nodeloadrules.example.com', 'list nodes'] },
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
  const yoga = createGraphQLYoga({
    sources: fixtureSources(cluster),
    log,
    responseCache: { version, ttlMs },
  });
  const ask = async (access: Access, query = RULES) => {
    const res = await yoga.fetch(
      IN_PROCESS_URL,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) },
      { access },
    );
    return (await res.json()) as {
      data?: { rules: { namespace: string; name: string }[] };
      extensions?: Record<string, unknown>;
    };
  };
  const names = (r: Awaited<ReturnType<typeof ask>>) =>
    r.data?.rules.map((p) => `${p.namespace}/${p.name}`).sort();
  return { version, ask, names };
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
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeUserPortAuth } from '../server/testing.js';
import { unauthorized } from './api.js';
import { kubeRoutes, userRoutes } from './routes.js';
import { NodeLoadStore } from './store.js';
import { FakeSources, NOW } from './testing.js';

const KUBECTL_TABLE =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const NL = '/apis/nodeload.example.com/v1alpha1/nodeloads';

const sources = new FakeSources();
const store = new NodeLoadStore(sources, { initialResourceVersion: 100 });
let server: http.Server;
let base = '';

// Authentication stands in for the front proxy: a request is "authenticated" when it names a user.
const authenticate: RequestHandler = (req, res, next) => {
  if (!req.get('x-test-user')) throw unauthorized();
  res.locals['user'] = { name: req.get('x-test-user'), groups: [], extra: {} };
  next();
};
const authorize: RequestHandler = (_req, _res, next) => next();
const gate = fakeUserPortAuth({
  users: {
    'tok-alice': { name: 'alice', can: ['list nodes'] },
    'tok-bob': { name: 'bob', can: ['list pods'] },
  },
});

beforeAll(async () => {
  sources.set('a', [{ cpu: '1', memory: '1Gi' }], { zone: 'west' });
  sources.set('b', [], { zone: 'east' });
  store.refreshAll();
  const app = express();
  app.use(kubeRoutes({ store, authenticate, authorize, log: pino({ level: 'silent' }), now: () => NOW }));
  // The user port's gate in front of the user route, as createUserApp puts it (alice may list nodes).
  app.get('/api/node-load', gate.auth.middleware(), userRoutes(store));
  app.use((_req, res) => {
    res.status(418).send('not ours');
  });
  server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { headers: { 'x-test-user': 'alice', ...headers } });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    etag: res.headers.get('etag'),
    body: text ? JSON.parse(text) : undefined,
  };
}

describe('discovery', () => {
  it('answers /apis as legacy APIGroupList or aggregated v2, and 406 for anything else', async () => {
    expect((await get('/apis')).body.kind).toBe('APIGroupList');
    const v2 = await get('/apis', { accept: `${V2},application/json` });
    expect(v2.type).toBe(V2);
    expect(v2.body.kind).toBe('APIGroupDiscoveryList');
    const none = await get('/apis', {
      accept: 'application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    });
    expect(none.status).toBe(406);
    expect(none.body).toMatchObject({ kind: 'Status', code: 406, reason: 'NotAcceptable' });
  });

  it('serves the group and the group-version the availability check asks for', async () => {
    expect((await get('/apis/nodeload.example.com')).body.kind).toBe('APIGroup');
    const gv = await get('/apis/nodeload.example.com/v1alpha1');
    expect(gv.status).toBe(200);
    expect(gv.body.resources[0].name).toBe('nodeloads');
  });

  it('revalidates with ETags', async () => {
    const first = await get('/openapi/v2');
    expect(first.etag).toBeTruthy();
    const again = await fetch(`${base}/openapi/v2`, {
      headers: { 'x-test-user': 'alice', 'if-none-match': first.etag as string },
    });
    expect(again.status).toBe(304);
  });

  it('serves the OpenAPI v3 document its root points at', async () => {
    const root = await get('/openapi/v3');
    const url = root.body.paths['apis/nodeload.example.com/v1alpha1'].serverRelativeURL as string;
    const doc = await get(url);
    expect(doc.body.openapi).toBe('3.0.0');
  });
});

describe('nodeloads', () => {
  it('lists as NodeLoadList with the store resourceVersion', async () => {
    const { body } = await get(NL);
    expect(body.kind).toBe('NodeLoadList');
    expect(body.metadata.resourceVersion).toBe(store.resourceVersion);
    expect(body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(['a', 'b']);
  });

  it('lists as a Table for kubectl get', async () => {
    const { body } = await get(`${NL}?labelSelector=zone%3Dwest`, { accept: KUBECTL_TABLE });
    expect(body.kind).toBe('Table');
    expect(body.metadata.resourceVersion).toBe(store.resourceVersion);
    expect(body.rows).toHaveLength(1);
    expect(body.rows[0].cells.slice(0, 6)).toEqual(['a', '25%', '12.5%', 'requests', 1, '120m']);
    expect(body.rows[0].object.kind).toBe('PartialObjectMetadata');
  });

  it('lists metadata only for PartialObjectMetadataList', async () => {
    const { body } = await get(NL, {
      accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
    });
    expect(body.kind).toBe('PartialObjectMetadataList');
    expect(body.items[0]).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: store.get('a')?.metadata,
    });
  });

  it('gets one object, or a 404 Status naming it', async () => {
    expect((await get(`${NL}/b`)).body.metadata.name).toBe('b');
    const missing = await get(`${NL}/zzz`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      message: 'nodeloads.nodeload.example.com "zzz" not found',
      details: { name: 'zzz', group: 'nodeload.example.com', kind: 'nodeloads' },
    });
  });

  it.each([
    [`${NL}?labelSelector=zone%20in%20()`, 400, 'BadRequest'],
    [`${NL}?fieldSelector=spec.nodeName%3Da`, 400, 'BadRequest'],
    [`${NL}?limit=x`, 400, 'BadRequest'],
    [`${NL}?watch=1&resourceVersion=abc`, 400, 'BadRequest'],
    ['/apis/nodeload.example.com/v1alpha1/other', 404, 'NotFound'],
  ])('answers %s with a %d Status', async (path, code, reason) => {
    const res = await get(path);
    expect(res.status).toBe(code);
    expect(res.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
  });

  it('refuses writes with 405', async () => {
    const res = await fetch(`${base}${NL}/a`, { method: 'DELETE', headers: { 'x-test-user': 'alice' } });
    expect(res.status).toBe(405);
    expect((await res.json()).reason).toBe('MethodNotAllowed');
  });

  it('authenticates every path it serves, and leaves other paths alone', async () => {
    const res = await fetch(`${base}/apis`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect((await fetch(`${base}/mutate`)).status).toBe(418);
    expect((await fetch(`${base}/apis/apps/v1`, { headers: { 'x-test-user': 'a' } })).status).toBe(418);
  });
});

/** Reads JSON lines off a watch until `count` events arrived. */
async function readEvents(
  res: Response,
  count: number,
): Promise<{ type: string; object: Record<string, unknown> }[]> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const events: { type: string; object: Record<string, unknown> }[] = [];
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let nl = buffered.indexOf('\n');
    while (nl >= 0) {
      events.push(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
      nl = buffered.indexOf('\n');
    }
  }
  reader.releaseLock();
  return events;
}

describe('watch', () => {
  it('streams ADDED for the current objects, then changes as they happen', async () => {
    const controller = new AbortController();
    const res = await fetch(`${base}${NL}?watch=1`, {
      headers: { 'x-test-user': 'alice' },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const initial = await readEvents(res, 2);
    expect(initial.map((e) => `${e.type} ${(e.object.metadata as { name: string }).name}`)).toEqual([
      'ADDED a',
      'ADDED b',
    ]);
    sources.set('b', [{ cpu: '2' }], { zone: 'east' });
    store.refresh(['b']);
    const modified = (await readEvents(res, 1))[0]!;
    expect(modified.type).toBe('MODIFIED');
    expect((modified.object.status as { cpuPercent: number }).cpuPercent).toBe(50);
    controller.abort();
  });

  it('sends one-row Tables to kubectl get --watch, from the list resourceVersion on', async () => {
    const list = await get(NL, { accept: KUBECTL_TABLE });
    const controller = new AbortController();
    const res = await fetch(`${base}${NL}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`, {
      headers: { 'x-test-user': 'alice', accept: KUBECTL_TABLE },
      signal: controller.signal,
    });
    sources.set('a', [{ cpu: '3' }], { zone: 'west' });
    store.refresh(['a']);
    const event = (await readEvents(res, 1))[0]!;
    expect(event.type).toBe('MODIFIED');
    expect(event.object.kind).toBe('Table');
    expect((event.object.rows as { cells: unknown[] }[]).map((r) => r.cells.slice(0, 2))).toEqual([
      ['a', '75%'],
    ]);
    expect((event.object.metadata as { resourceVersion: string }).resourceVersion).toBe(
      store.resourceVersion,
    );
    controller.abort();
  });

  it('answers a version it cannot replay with an ERROR event (410 Expired), then ends', async () => {
    const res = await fetch(`${base}${NL}?watch=1&resourceVersion=1`, {
      headers: { 'x-test-user': 'alice' },
    });
    const text = await res.text();
    expect(JSON.parse(text.trim())).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired' },
    });
  });

  it('ends the stream after timeoutSeconds', async () => {
    const res = await fetch(`${base}/apis/nodeload.example.com/v1alpha1/watch/nodeloads/a?timeoutSeconds=1`, {
      headers: { 'x-test-user': 'alice' },
    });
    const lines = (await res.text()).trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).object.metadata.name)).toEqual(['a']);
  });
});

describe('before the cache has synced', () => {
  it('answers resource requests 503 but still serves discovery', async () => {
    const app = express();
    app.use(
      kubeRoutes({ store, authenticate, authorize, log: pino({ level: 'silent' }), ready: () => false }),
    );
    const early = http.createServer(app);
    await new Promise<void>((r) => early.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(early.address() as AddressInfo).port}`;
      const headers = { 'x-test-user': 'alice' };
      const list = await fetch(`${url}${NL}`, { headers });
      expect(list.status).toBe(503);
      expect(await list.json()).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
      expect((await fetch(`${url}${NL}/a`, { headers })).status).toBe(503);
      expect((await fetch(`${url}/apis/nodeload.example.com/v1alpha1`, { headers })).status).toBe(200);
    } finally {
      early.closeAllConnections();
      await new Promise((r) => early.close(r));
    }
  });
});

describe('GET /api/node-load', () => {
  it('answers {nodes: [...]} with capacity strings and load figures to a user who may list nodes', async () => {
    const res = await fetch(`${base}/api/node-load`, { headers: { authorization: 'Bearer tok-alice' } });
    const body = await res.json();
    expect(body.nodes.map((n: { name: string }) => n.name)).toEqual(['a', 'b']);
    expect(body.nodes[0]).toMatchObject({ name: 'a', cpu: '4', memory: '8Gi', source: 'requests' });
    expect(body.nodes[0].cpuPercent).toBe(store.get('a')?.status.cpuPercent);
  });

  it('is 401 without a token and 403 without `list nodes`', async () => {
    const anonymous = await fetch(`${base}/api/node-load`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="nodeload"');
    const bob = await fetch(`${base}/api/node-load`, { headers: { authorization: 'Bearer tok-bob' } });
    expect(bob.status).toBe(403);
    expect(await bob.json()).toMatchObject({ error: 'Forbidden', permission: 'nodes list' });
  });
});

import http from 'node:http';
import { Router } from 'express';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { PERMISSIONS } from './access.js';
import { closeServed, fakeUserPortAuth, serveOnLoopback } from './testing.js';
import { createUserApp, finishApp, type UserAppOptions } from './user-app.js';
import { OMITTED_NAMESPACES_HEADER, sendReadable, type UserPortAuth } from './user-auth.js';
import { UserPortGate } from './user-port-gate.js';

const log = pino({ level: 'silent' });

afterEach(closeServed);

const users = {
  'tok-admin': { name: 'admin', can: ['get /metrics', 'list pods'] },
  'tok-shop': { name: 'shop-dev', can: ['list pods in shop'] },
};

const items = [
  { namespace: 'shop', name: 'a' },
  { namespace: 'ops', name: 'b' },
];

/** The user app with one namespaced list route, as a component mounts its routes. */
async function serve(opts: Partial<UserAppOptions> & { auth: UserPortAuth }): Promise<string> {
  const registry = new Registry();
  const app = createUserApp({ registry, readiness: () => ({ ready: true }), ...opts });
  const routes = Router();
  routes.get('/test/pods', async (req, res) => {
    const namespace = typeof req.query['namespace'] === 'string' ? req.query['namespace'] : undefined;
    await sendReadable(req, res, PERMISSIONS.listPods, items, (i) => i.namespace, { namespace });
  });
  routes.get('/test/slow', async (_req, res) => {
    await slowAnswer.promise;
    res.json({ slow: true });
  });
  routes.post('/test/echo', (req, res) => {
    res.json({ bytes: (req.body as Buffer).length });
  });
  finishApp(app, log, [routes]);
  return serveOnLoopback(app);
}

let slowAnswer = Promise.withResolvers<void>();

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('the user port gate', () => {
  it('answers health to anyone and everything else only with a token: 401 with a JSON message', async () => {
    const base = await serve({ auth: fakeUserPortAuth({ users }).auth });
    for (const path of ['/healthz', '/readyz', '/livez'])
      expect((await fetch(`${base}${path}`)).status).toBe(200);
    for (const path of ['/metrics', '/test/pods', '/no/such/route']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="nodeload"');
      expect(await res.json()).toMatchObject({
        error: 'Unauthorized',
        message: expect.stringContaining('Authorization: Bearer <token>'),
        errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
      });
    }
    const bad = await fetch(`${base}/metrics`, { headers: bearer('stolen') });
    expect(bad.status).toBe(401);
    expect((await bad.json()).message).toBe('invalid bearer token: token not known');
  });

  it('serves /metrics only with the nonResourceURL get /metrics', async () => {
    const base = await serve({ auth: fakeUserPortAuth({ users }).auth });
    expect((await fetch(`${base}/metrics`, { headers: bearer('tok-admin') })).status).toBe(200);
    const denied = await fetch(`${base}/metrics`, { headers: bearer('tok-shop') });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({
      error: 'Forbidden',
      permission: 'get /metrics',
      message: 'forbidden: user "shop-dev" lacks get /metrics',
      errors: [{ extensions: { code: 'FORBIDDEN' } }],
    });
  });

  it('lists only the namespaces the user may read, counting the others in a header; 403 for one asked without', async () => {
    const base = await serve({ auth: fakeUserPortAuth({ users }).auth });
    const shop = await fetch(`${base}/test/pods`, { headers: bearer('tok-shop') });
    expect(await shop.json()).toEqual([{ namespace: 'shop', name: 'a' }]);
    expect(shop.headers.get(OMITTED_NAMESPACES_HEADER)).toBe('1');
    const admin = await fetch(`${base}/test/pods`, { headers: bearer('tok-admin') });
    expect(await admin.json()).toEqual(items);
    expect(admin.headers.get(OMITTED_NAMESPACES_HEADER)).toBe('0');
    const ops = await fetch(`${base}/test/pods?namespace=ops`, { headers: bearer('tok-shop') });
    expect(ops.status).toBe(403);
    expect((await ops.json()).permission).toBe('pods list in ops');
  });

  it('serves tokenless requests unrestricted only with the anonymous flag, still reviewing a token given', async () => {
    const gate = fakeUserPortAuth({ users, anonymous: true });
    const base = await serve({ auth: gate.auth });
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
    expect(await (await fetch(`${base}/test/pods`)).json()).toEqual(items);
    expect((await fetch(`${base}/no/such/route`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { headers: bearer('tok-shop') })).status).toBe(403);
    expect((await fetch(`${base}/metrics`, { headers: bearer('stolen') })).status).toBe(401);
  });

  describe('anonymous port: a tokenless request is served only for a loopback Host (DNS rebinding)', () => {
    /** A GET with its own Host header (fetch always sends the URL's). */
    function getFor(base: string, path: string, host: string, token?: string) {
      return new Promise<{ status: number; text: string }>((resolve, reject) => {
        const headers = { host, ...(token ? bearer(token) : {}) };
        http
          .get(`${base}${path}`, { headers }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          })
          .on('error', reject);
      });
    }

    it.each([
      ['localhost:8080', 200],
      ['localhost', 200],
      ['127.0.0.1:8080', 200],
      ['[::1]:8080', 200],
      ['dashboard.localhost:8080', 200],
      ['evil.example:8080', 403],
      ['evil.example', 403],
      ['127.0.0.1.nip.io:8080', 403],
      ['localhost.evil.example:8080', 403],
      ['192.168.1.20:8080', 403],
    ])('without a token, Host %s → %i', async (host, status) => {
      const base = await serve({ auth: fakeUserPortAuth({ users, anonymous: true }).auth });
      const res = await getFor(base, '/test/pods', host);
      expect(res.status).toBe(status);
      const body = JSON.parse(res.text);
      if (status === 200) expect(body).toEqual(items);
      else {
        expect(body).toMatchObject({
          error: 'Forbidden',
          message: expect.stringContaining(`the Host "${host}" is not a loopback name`),
          errors: [{ extensions: { code: 'FORBIDDEN' } }],
        });
        expect(body.message).toContain('DNS rebinding');
      }
    });

    it.each([
      ['a token, for any Host', '/test/pods', 'tok-admin', 200],
      ["a token lacking the permission: the user's 403", '/metrics', 'tok-shop', 403],
      ['an unknown token: 401 as anywhere', '/test/pods', 'stolen', 401],
      ['a public path', '/healthz', undefined, 200],
    ] as const)('Host evil.example:8080 with %s', async (_what, path, token, status) => {
      const base = await serve({ auth: fakeUserPortAuth({ users, anonymous: true }).auth });
      const res = await getFor(base, path, 'evil.example:8080', token);
      expect(res.status).toBe(status);
      expect(res.text).not.toContain('DNS rebinding');
    });
  });

  it('answers 503 when the TokenReview cannot be made', async () => {
    const { auth } = fakeUserPortAuth({ users, tokenReviewDown: true });
    const base = await serve({ auth });
    const res = await fetch(`${base}/metrics`, { headers: bearer('t') });
    expect(res.status).toBe(503);
    expect((await res.json()).message).toContain('authentication unavailable');
  });
});

describe('user port hardening', () => {
  it('answers every queued request once the gate lets it through (bodies already read by then)', async () => {
    slowAnswer = Promise.withResolvers<void>();
    const gate = new UserPortGate({ concurrency: 1, maxQueued: 10, maxWaitMs: 10_000, holdMs: 60_000 });
    const base = await serve({ auth: fakeUserPortAuth({ users }).auth, gate });
    const slow = fetch(`${base}/test/slow`, { headers: bearer('tok-admin') });
    await expect.poll(() => gate.inFlight).toBe(1);
    const queued = Array.from({ length: 5 }, (_, i) =>
      fetch(`${base}/test/echo`, { method: 'POST', headers: bearer('tok-admin'), body: 'x'.repeat(i) }),
    );
    await expect.poll(() => gate.waiting).toBe(5);
    slowAnswer.resolve();
    const answers = await Promise.all([slow, ...queued]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await Promise.all(answers.slice(1).map((a) => a.json()))).toEqual(
      Array.from({ length: 5 }, (_, i) => ({ bytes: i })),
    );
  });

  it('admits requests through the gate: one at a time here, the next refused 503 when none may wait', async () => {
    slowAnswer = Promise.withResolvers<void>();
    const gate = new UserPortGate({ concurrency: 1, maxQueued: 0, maxWaitMs: 1000, holdMs: 60_000 });
    const base = await serve({ auth: fakeUserPortAuth({ users }).auth, gate });
    const slow = fetch(`${base}/test/slow`, { headers: bearer('tok-admin') });
    await expect.poll(() => gate.inFlight).toBe(1);
    const refused = await fetch(`${base}/test/pods`, { headers: bearer('tok-admin') });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ errors: [{ extensions: { code: 'SERVICE_UNAVAILABLE' } }] });
    // Health is never gated: probes must see a busy gateway as alive.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    slowAnswer.resolve();
    expect((await slow).status).toBe(200);
    await expect.poll(() => gate.inFlight).toBe(0);
    expect((await fetch(`${base}/test/pods`, { headers: bearer('tok-admin') })).status).toBe(200);
  });

  it('refuses a body over the limit with 413', async () => {
    const base = await serve({ auth: fakeUserPortAuth({ users }).auth, bodyLimitBytes: 1024 });
    const post = (size: number) =>
      fetch(`${base}/test/echo`, {
        method: 'POST',
        headers: { ...bearer('tok-admin'), 'content-type': 'application/json' },
        body: 'x'.repeat(size),
      });
    expect(await (await post(1024)).json()).toEqual({ bytes: 1024 });
    const big = await post(1025);
    expect(big.status).toBe(413);
    expect((await big.json()).message).toBe('request body larger than 1024 bytes');
  });

  it('answers CORS only for allow-listed origins; a preflight from another origin is refused', async () => {
    const base = await serve({
      auth: fakeUserPortAuth({ users }).auth,
      corsAllowedOrigins: ['https://console.example'],
    });
    const preflight = (origin: string) =>
      fetch(`${base}/test/pods`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization',
        },
      });
    const allowed = await preflight('https://console.example');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://console.example');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    const other = await preflight('https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const simple = await fetch(`${base}/test/pods`, {
      headers: { origin: 'https://evil.example', ...bearer('tok-admin') },
    });
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
    const listed = await fetch(`${base}/test/pods`, {
      headers: { origin: 'https://console.example', ...bearer('tok-admin') },
    });
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://console.example');
  });
});

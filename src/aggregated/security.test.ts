import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CachedAccessReviewer, type UserInfo } from '../server/authz.js';
import { closeServed, recordingReviewer, serveOnLoopback } from '../server/testing.js';
import { TestPki } from '../server/testing-pki.js';
import { ApiError } from './api.js';
import type { RequestHeaderConfig } from './auth.js';
import {
  frontProxyAuthentication,
  RequestHeaderConfigLoader,
  subjectAccessReviewAuthorization,
} from './security.js';

const log = pino({ level: 'silent' });

afterEach(closeServed);

const asStatus: ErrorRequestHandler = (err, _req, res, _next) => {
  if (err instanceof ApiError) res.status(err.code).json(err.status);
  else res.status(599).json({ unexpected: String(err) });
};

/** An app that sets the user from x-test-* headers, then runs `guard`, then answers 200. */
async function serve(guard: RequestHandler): Promise<string> {
  const app = express();
  app.use((req, res, next) => {
    if (req.get('x-test-user')) {
      const user: UserInfo = {
        name: req.get('x-test-user') as string,
        groups: (req.get('x-test-groups') ?? '').split(',').filter(Boolean),
        extra: {},
      };
      res.locals['user'] = user;
    }
    next();
  });
  app.use(guard);
  app.use((_req, res) => {
    res.json({ ok: true });
  });
  app.use(asStatus);
  return serveOnLoopback(app);
}

const NL = '/apis/nodeload.example.com/v1alpha1/nodeloads';

describe('subjectAccessReviewAuthorization', () => {
  const reviewer = recordingReviewer;

  it('asks once per user and attributes within the cache TTL', async () => {
    const { calls, review } = reviewer(() => ({ allowed: true, reason: '' }));
    let now = 0;
    const base = await serve(
      subjectAccessReviewAuthorization(new CachedAccessReviewer(review, { now: () => now }), log),
    );
    const h = { 'x-test-user': 'alice' };
    expect((await fetch(`${base}${NL}`, { headers: h })).status).toBe(200);
    expect((await fetch(`${base}${NL}`, { headers: h })).status).toBe(200);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.spec.resourceAttributes).toMatchObject({ verb: 'list', resource: 'nodeloads' });
    expect((await fetch(`${base}${NL}?watch=1`, { headers: h })).status).toBe(200);
    expect(calls).toHaveLength(2);
    now = 10_001;
    await fetch(`${base}${NL}`, { headers: h });
    expect(calls).toHaveLength(3);
  });

  it('answers a denial with a 403 Status carrying the reason', async () => {
    const { review } = reviewer(() => ({ allowed: false, reason: 'no RBAC policy matched' }));
    const base = await serve(subjectAccessReviewAuthorization(new CachedAccessReviewer(review), log));
    const res = await fetch(`${base}${NL}/n1`, { headers: { 'x-test-user': 'nobody' } });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toBe(
      'nodeloads.nodeload.example.com "n1" is forbidden: User "nobody" cannot get resource "nodeloads" in API group "nodeload.example.com" at the cluster scope: no RBAC policy matched',
    );
  });

  it('lets system:masters and health checks through without asking', async () => {
    const { calls, review } = reviewer(() => ({ allowed: false, reason: '' }));
    const base = await serve(subjectAccessReviewAuthorization(new CachedAccessReviewer(review), log));
    const masters = await fetch(`${base}${NL}`, {
      headers: { 'x-test-user': 'agg', 'x-test-groups': 'system:masters' },
    });
    expect(masters.status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(calls).toHaveLength(0);
  });

  it('answers 500 when the review cannot be made, and does not cache that', async () => {
    let fail = true;
    const { calls, review } = reviewer(() =>
      fail ? new Error('apiserver down') : { allowed: true, reason: '' },
    );
    const base = await serve(subjectAccessReviewAuthorization(new CachedAccessReviewer(review), log));
    const h = { 'x-test-user': 'alice' };
    const res = await fetch(`${base}${NL}`, { headers: h });
    expect(res.status).toBe(500);
    expect((await res.json()).reason).toBe('InternalError');
    fail = false;
    expect((await fetch(`${base}${NL}`, { headers: h })).status).toBe(200);
    expect(calls).toHaveLength(2);
  });
});

describe('frontProxyAuthentication', () => {
  it('answers 401 until the settings are loaded', async () => {
    const base = await serve(frontProxyAuthentication({ current: () => undefined }, log));
    const res = await fetch(`${base}/apis`, { headers: { 'x-remote-user': 'admin' } });
    expect(res.status).toBe(401);
  });

  it('ignores X-Remote-User on a connection without a client certificate', async () => {
    const config = {
      caPem: 'x',
      cas: [],
      allowedNames: [],
      usernameHeaders: ['x-remote-user'],
      groupHeaders: [],
      extraHeaderPrefixes: [],
      uidHeaders: [],
    } as RequestHeaderConfig;
    const base = await serve(frontProxyAuthentication({ current: () => config }, log));
    const res = await fetch(`${base}/apis`, {
      headers: { 'x-remote-user': 'admin', 'x-remote-group': 'system:masters' },
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
  });
});

describe('RequestHeaderConfigLoader', () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = new TestPki();
    pki.ca('ca-1');
    pki.ca('ca-2');
  });
  afterAll(() => pki.dispose());

  const data = (ca: string) => ({
    'requestheader-client-ca-file': ca,
    'requestheader-allowed-names': '["front-proxy-client"]',
  });

  it('retries until the settings load, keeps them when a refresh fails, and picks up a new CA', async () => {
    const reads: (() => Record<string, string> | undefined)[] = [
      () => {
        throw new Error('connection refused');
      },
      () => data(pki.pem('ca-1')),
      () => data('no certificate in here'),
      () => {
        throw new Error('connection refused');
      },
      () => data(pki.pem('ca-2')),
    ];
    let calls = 0;
    const loader = new RequestHeaderConfigLoader({
      read: async () => (reads[calls++] as () => Record<string, string> | undefined)(),
      log,
      retryMs: 3_600_000,
      refreshMs: 3_600_000,
    });
    await loader.start();
    expect(loader.current()).toBeUndefined();
    await loader.load();
    expect(loader.current()?.caPem).toBe(pki.pem('ca-1'));
    await loader.load();
    await loader.load();
    expect(loader.current()?.caPem).toBe(pki.pem('ca-1'));
    await loader.load();
    expect(loader.current()?.caPem).toBe(pki.pem('ca-2'));
    loader.stop();
    expect(calls).toBe(5);
  });
});

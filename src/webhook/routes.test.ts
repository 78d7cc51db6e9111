import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toRule } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import { withFastRoutes } from '../server/fast-routes.js';
import { createLogger } from '../server/log.js';
import { finishApp } from '../server/user-app.js';
import type { NotSteered, WebhookState } from './admit.js';
import { webhookRoutes } from './routes.js';
import { podReview } from './testing.js';

const logLines: { level: number; msg: string }[] = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
    cb();
  },
});
const log = createLogger('debug', sink);
const registry = new Registry();
let failRules = false;
let failNotSteered = false;
const notSteered: NotSteered[] = [];
const rules: NodeLoadRule[] = [
  toRule({ metadata: { namespace: 'team', name: 'only-n1' }, spec: { allowedNodes: ['n1'] } }),
];
const state: WebhookState = {
  ready: () => true,
  rules: () => {
    if (failRules) throw new Error('boom');
    return rules;
  },
  nodes: () => new Map(),
};

let server: http.Server;
let base = '';

beforeAll(async () => {
  // As the gateway serves them: the plain handlers ahead of an express app that answers the rest.
  const app = express();
  finishApp(app, log);
  const routes = webhookRoutes({
    state,
    log,
    registry,
    bodyLimit: '300kb',
    schedulerName: 'nodeload-scheduler',
    overrideExplicitScheduler: false,
    excludedNamespaces: new Set(['kube-system']),
    onNotSteered: (n) => {
      if (failNotSteered) throw new Error('queue broken');
      notSteered.push(n);
    },
  });
  server = http.createServer(withFastRoutes(routes, app));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const review = (uid: string, object: unknown = { metadata: { name: 'p' }, spec: {} }) =>
  podReview(uid, object);

async function post(path: string, body: string, contentType = 'application/json') {
  const res = await fetch(base + path, { method: 'POST', body, headers: { 'content-type': contentType } });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown> & { response?: Record<string, unknown> },
  };
}

describe('webhook routes', () => {
  it('POST /mutate answers an AdmissionReview with a patch, echoing the uid', async () => {
    const { status, body } = await post('/mutate', JSON.stringify(review('u-1')));
    expect(status).toBe(200);
    expect(body).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(body.response).toMatchObject({ uid: 'u-1', allowed: true, patchType: 'JSONPatch' });
    expect(logLines.some((l) => l.msg === 'pod steered to its rules')).toBe(true);
  });

  it('POST /validate denies a pinned pod with the rule name', async () => {
    const { body } = await post(
      '/validate',
      JSON.stringify(review('u-2', { metadata: {}, spec: { nodeName: 'n2' } })),
    );
    expect(body.response).toMatchObject({ uid: 'u-2', allowed: false, status: { code: 403 } });
    const status = body.response?.status as { message?: string } | undefined;
    expect(status?.message).toContain('NodeLoadRule "only-n1"');
  });

  it('POST /validate lets a break-glass pinned pod through with a warning, a warn line and the metric', async () => {
    const labels = { 'nodeload.example.com/break-glass': 'true' };
    const { body } = await post(
      '/validate',
      JSON.stringify(review('u-bg', { metadata: { name: 'bg', labels }, spec: { nodeName: 'n2' } })),
    );
    expect(body.response).toMatchObject({
      uid: 'u-bg',
      allowed: true,
      warnings: [expect.stringMatching(/^break-glass/)],
    });
    expect(logLines.find((l) => l.msg === 'pinned pod allowed by break-glass')).toMatchObject({
      level: 40,
      pod: 'team/bg',
      rules: ['only-n1'],
    });
    expect(await registry.metrics()).toMatch(/^nodeload_admission_break_glass_total 1$/m);
  });

  it('hands a pod the gate kept to onNotSteered; a failure there never changes the answer', async () => {
    const draPod = (name: string) => ({ metadata: { name }, spec: { resourceClaims: [{ name: 'gpu' }] } });
    const first = await post('/mutate', JSON.stringify(review('u-ns-1', draPod('db-0'))));
    expect(first.body.response).toMatchObject({ uid: 'u-ns-1', allowed: true, patchType: 'JSONPatch' });
    expect(notSteered).toEqual([
      {
        namespace: 'team',
        name: 'db-0',
        generateName: '',
        reasons: ['DynamicResources: pod uses ResourceClaim "gpu"'],
      },
    ]);
    failNotSteered = true;
    try {
      const second = await post('/mutate', JSON.stringify(review('u-ns-2', draPod('db-1'))));
      expect(second.status).toBe(200);
      expect(second.body.response).toEqual({ ...first.body.response, uid: 'u-ns-2' });
    } finally {
      failNotSteered = false;
    }
    expect(logLines.some((l) => l.msg === 'recording a not-steered pod failed')).toBe(true);
  });

  it('accepts bodies above express’s 100 kB default', async () => {
    const big = review('u-3', { metadata: { annotations: { big: 'x'.repeat(200_000) } }, spec: {} });
    const { status, body } = await post('/mutate', JSON.stringify(big));
    expect(status).toBe(200);
    expect(body.response?.uid).toBe('u-3');
  });

  it.each([
    {
      what: 'malformed JSON',
      path: '/mutate',
      body: '{"apiVersion":',
      type: 'application/json',
      status: 400,
      error: 'entity.parse.failed',
    },
    {
      what: 'a JSON string',
      path: '/mutate',
      body: '"x"',
      type: 'application/json',
      status: 400,
      error: 'entity.parse.failed',
    },
    {
      what: 'wrong content type',
      path: '/validate',
      body: '{}',
      type: 'text/plain',
      status: 415,
      error: 'UnsupportedMediaType',
    },
    {
      what: 'empty object',
      path: '/validate',
      body: '{}',
      type: 'application/json',
      status: 400,
      error: 'BadRequest',
    },
    {
      what: 'too large',
      path: '/mutate',
      body: JSON.stringify({ x: 'y'.repeat(400_000) }),
      type: 'application/json',
      status: 413,
      error: 'entity.too.large',
    },
    {
      what: 'GET-only path',
      path: '/nope',
      body: '{}',
      type: 'application/json',
      status: 404,
      error: 'NotFound',
    },
  ])('$what → $status JSON message', async ({ path, body, type, status, error }) => {
    const res = await post(path, body, type);
    expect(res.status).toBe(status);
    expect(res.body.error).toBe(error);
    expect(typeof res.body.message).toBe('string');
  });

  it('answers at the path the API server calls, query string and all', async () => {
    const { status, body } = await post('/mutate?timeout=10s', JSON.stringify(review('u-q')));
    expect(status).toBe(200);
    expect(body.response?.uid).toBe('u-q');
  });

  it.each<{ what: string; headers: Record<string, string>; status: number; error: string }>([
    {
      what: 'a gzip body',
      headers: { 'content-encoding': 'gzip' },
      status: 415,
      error: 'encoding.unsupported',
    },
    {
      what: 'a Latin-1 body',
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
      status: 415,
      error: 'charset.unsupported',
    },
  ])('$what → $status JSON message', async ({ headers, status, error }) => {
    const res = await fetch(`${base}/mutate`, {
      method: 'POST',
      body: JSON.stringify(review('u-h')),
      headers: { 'content-type': 'application/json', ...headers },
    });
    expect(res.status).toBe(status);
    expect(((await res.json()) as { error: string }).error).toBe(error);
  });

  it('refuses a streamed body past the limit (no Content-Length) and closes the connection', async () => {
    const chunk = new TextEncoder().encode(`{"x":"${'y'.repeat(100_000)}`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // 10 chunks of 100 kB, more than the 300 kB limit; the server answers before the end.
        if (sent++ < 10) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${base}/validate`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(res.headers.get('connection')).toBe('close');
    expect(((await res.json()) as { error: string }).error).toBe('entity.too.large');
  });

  it('leaves other methods on an admission path to express (404 JSON)', async () => {
    const res = await fetch(`${base}/mutate`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toBe('NotFound');
  });

  it('an internal failure still answers with the uid: mutate lets through, validate refuses', async () => {
    failRules = true;
    try {
      const m = await post('/mutate', JSON.stringify(review('u-4')));
      expect(m.body.response).toMatchObject({ uid: 'u-4', allowed: true, warnings: [expect.any(String)] });
      const v = await post(
        '/validate',
        JSON.stringify(review('u-5', { metadata: {}, spec: { nodeName: 'n1' } })),
      );
      expect(v.body.response).toMatchObject({ uid: 'u-5', allowed: false, status: { code: 500 } });
    } finally {
      failRules = false;
    }
    expect(logLines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([
      'admission request failed',
      'admission request failed',
    ]);
  });

  it('counts requests and observes latency by route and result', async () => {
    const text = await registry.metrics();
    expect(text).toMatch(/nodeload_admission_requests_total\{route="mutate",result="patched"\} [1-9]/);
    expect(text).toMatch(/nodeload_admission_requests_total\{route="mutate",result="invalid"\} [1-9]/);
    expect(text).toMatch(/nodeload_admission_requests_total\{route="validate",result="denied"\} [1-9]/);
    expect(text).toMatch(/nodeload_admission_requests_total\{route="mutate",result="error"\} 1/);
    expect(text).toMatch(
      /nodeload_admission_duration_seconds_count\{route="validate",result="denied"\} [1-9]/,
    );
  });
});

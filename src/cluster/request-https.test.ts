import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsRequestFn, retryAfterMs } from './request-https.js';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: string;
}

// A loopback HTTP server standing in for the API server's transport only (the wire behaviour against
// kube-apiserver is covered by every integration test that binds a pod).
let server: http.Server;
let base: string;
const seen: Seen[] = [];
interface Answer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}
let answer: Answer = { status: 201, body: '{"kind":"Binding"}' };
/** Answers given before `answer`, first first. */
const script: Answer[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(parts).toString(),
      });
      const a = script.shift() ?? answer;
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function kubeConfig(opts: { proxyUrl?: string; token?: () => string } = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'c', server: base, skipTLSVerify: true, ...(opts.proxyUrl ? { proxyUrl: opts.proxyUrl } : {}) },
    ],
    users: [{ name: 'u', token: 'first' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  if (opts.token) {
    const token = opts.token;
    kc.applyToHTTPSOptions = async (o) => {
      o.headers = { ...o.headers, authorization: `Bearer ${token()}` };
    };
  }
  return kc;
}

describe('httpsRequestFn', () => {
  it('sends the body as JSON with the auth header and resolves with the answer text', async () => {
    seen.length = 0;
    answer = { status: 201, body: '{"kind":"Binding"}' };
    const request = httpsRequestFn(kubeConfig());
    const text = await request?.({
      method: 'POST',
      path: '/api/v1/namespaces/a/pods/p/binding',
      body: { target: { name: 'n1' } },
    });
    expect(text).toBe('{"kind":"Binding"}');
    expect(seen[0]?.method).toBe('POST');
    expect(seen[0]?.url).toBe('/api/v1/namespaces/a/pods/p/binding');
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(seen[0]?.headers.authorization).toBe('Bearer first');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ target: { name: 'n1' } });
  });

  it.each([
    [409, '{"kind":"Status","message":"pod p is already assigned to node n1","code":409}'],
    [404, '{"kind":"Status","message":"pods \\"p\\" not found","code":404}'],
    [500, 'not json'],
  ])('rejects a %i answer with an ApiException carrying the code and the body', async (status, body) => {
    answer = { status, body };
    const request = httpsRequestFn(kubeConfig());
    const err = await request?.({ method: 'POST', path: '/x', body: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    expect((err as ApiException<string>).code).toBe(status);
    expect((err as ApiException<string>).body).toBe(body);
  });

  it('reuses the auth for its TTL, and asks again after a 401', async () => {
    let calls = 0;
    let now = 0;
    const request = httpsRequestFn(kubeConfig({ token: () => `t${++calls}` }), { now: () => now });
    answer = { status: 200, body: '{}' };
    seen.length = 0;
    await request?.({ method: 'GET', path: '/a' });
    await request?.({ method: 'GET', path: '/b' });
    expect(seen.map((s) => s.headers.authorization)).toEqual(['Bearer t1', 'Bearer t1']);
    now = 11_000;
    await request?.({ method: 'GET', path: '/c' });
    expect(seen[2]?.headers.authorization).toBe('Bearer t2');
    answer = { status: 401, body: '{"code":401}' };
    await request?.({ method: 'GET', path: '/d' }).catch(() => undefined);
    answer = { status: 200, body: '{}' };
    await request?.({ method: 'GET', path: '/e' });
    expect(seen[4]?.headers.authorization).toBe('Bearer t3');
  });

  it('is undefined for a cluster behind a proxy (client-node reaches it, this does not)', () => {
    expect(httpsRequestFn(kubeConfig({ proxyUrl: 'http://127.0.0.1:1' }))).toBeUndefined();
  });

  it('sends again what the API server asked to be retried (429, 5xx with Retry-After), waiting as told, up to 10 times', async () => {
    seen.length = 0;
    const throttled: Answer = {
      status: 429,
      body: '{"kind":"Status","message":"Too many requests, please try again later.","code":429}',
      headers: { 'retry-after': '2' },
    };
    script.push(throttled, { ...throttled, status: 503, headers: { 'retry-after': '0' } });
    answer = { status: 201, body: '{"kind":"Binding"}' };
    const waits: number[] = [];
    const retried: string[] = [];
    const request = httpsRequestFn(kubeConfig(), {
      sleep: async (ms) => void waits.push(ms),
      onRetry: (code, method) => void retried.push(`${method} ${code}`),
    });
    await expect(request?.({ method: 'POST', path: '/b', body: { n: 1 } })).resolves.toBe(
      '{"kind":"Binding"}',
    );
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual(Array(3).fill(['POST', '/b', '{"n":1}']));
    expect(waits).toEqual([2000, 0]);
    expect(retried).toEqual(['POST 429', 'POST 503']);

    // The eleventh throttled answer is the caller's: 1 send + 10 retries.
    seen.length = 0;
    script.push(...Array(11).fill(throttled));
    const err = await request?.({ method: 'POST', path: '/b', body: {} }).catch((e: unknown) => e);
    expect((err as ApiException<string>).code).toBe(429);
    expect(seen).toHaveLength(11);
    script.length = 0;
  });

  it.each<[string, number, string | undefined, number | undefined]>([
    ['429 with seconds', 429, '3', 3000],
    ['429 with 0', 429, '0', 0],
    ['429 without Retry-After', 429, undefined, undefined],
    ['503 with seconds (a server going away)', 503, '1', 1000],
    ['500 without Retry-After (etcd timed out: maybe committed)', 500, undefined, undefined],
    ['504 with seconds', 504, '5', 5000],
    ['409 with seconds: a conflict is never retried', 409, '1', undefined],
    ['an HTTP date (client-go reads seconds only)', 429, 'Wed, 21 Oct 2026 07:28:00 GMT', undefined],
    ['negative seconds', 429, '-1', undefined],
  ])('retryAfterMs: %s', (_, status, header, expected) => {
    expect(retryAfterMs(status, header)).toBe(expected);
  });
});

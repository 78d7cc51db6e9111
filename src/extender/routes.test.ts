/** The extender's HTTPS routes: client-certificate authentication, kube-scheduler's JSON, 4xx for bad input. */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PodInfo } from '../cluster/model.js';
import type { ExtenderFilterOutcome, ExtenderScoresOutcome, PodRef } from '../scheduler/extender-engine.js';
import type { NodeVerdict } from '../scheduler/framework/verdict.js';
import { createLogger } from '../server/log.js';
import { TestPki } from '../server/testing-pki.js';
import { finishApp } from '../server/user-app.js';
import { createExtenderMetrics } from './metrics.js';
import { extenderRouter } from './routes.js';

const log = createLogger('silent');
const registry = new Registry();
let pki: TestPki;
let server: https.Server;
let port = 0;
let ready = true;
let filterOut: ExtenderFilterOutcome = { kind: 'pass-through' };
let scoresOut: ExtenderScoresOutcome = { kind: 'pass-through' };
let bindError: string | undefined;
let explode = false;
const seen: { verb: string; pod?: PodInfo; nodes?: readonly string[]; ref?: PodRef; node?: string }[] = [];

const engine = {
  async filter(pod: PodInfo, nodes: readonly string[]): Promise<ExtenderFilterOutcome> {
    if (explode) throw new Error('secret stack detail');
    seen.push({ verb: 'filter', pod, nodes });
    return filterOut;
  },
  prioritize(pod: PodInfo, nodes: readonly string[]): ExtenderScoresOutcome {
    seen.push({ verb: 'prioritize', pod, nodes });
    return scoresOut;
  },
  async bind(ref: PodRef, node: string): Promise<string | undefined> {
    seen.push({ verb: 'bind', ref, node });
    return bindError;
  },
};

const file = (name: string, ext: string) => readFileSync(path.join(pki.dir, `${name}.${ext}`));

beforeAll(async () => {
  pki = new TestPki();
  pki.ca('kube-ca');
  pki.ca('other-ca');
  pki.leaf('server', 'nodeload', 'kube-ca', 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n');
  pki.leaf('scheduler', 'kube-scheduler', 'kube-ca');
  pki.leaf('stranger', 'kube-scheduler', 'other-ca');
  pki.leaf('server-only', 'kube-scheduler', 'kube-ca', 'extendedKeyUsage=serverAuth\n');
  const app = express();
  finishApp(app, log, [
    extenderRouter({
      state: { ready: () => ready, engine },
      clientCas: [pki.cert('kube-ca')],
      metrics: createExtenderMetrics(registry),
      log,
      bodyLimit: '1kb',
    }),
  ]);
  server = https.createServer(
    { cert: file('server', 'crt'), key: file('server', 'key'), requestCert: true, rejectUnauthorized: false },
    app,
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  pki.dispose();
});

beforeEach(() => {
  ready = true;
  explode = false;
  bindError = undefined;
  seen.length = 0;
});

/** POSTs as kube-scheduler does, presenting `client`'s certificate (none when null). */
async function post(
  verb: string,
  body: unknown,
  client: string | null = 'scheduler',
  contentType = 'application/json',
): Promise<{ status: number; body: unknown }> {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return await new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: `/extender/${verb}`,
        method: 'POST',
        ca: file('kube-ca', 'crt'),
        ...(client ? { cert: file(client, 'crt'), key: file(client, 'key') } : {}),
        headers: { 'content-type': contentType },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(raw);
  });
}

const POD = { metadata: { name: 'p', namespace: 'shop', uid: 'u1' }, spec: {} };
const args = { Pod: POD, Nodes: null, NodeNames: ['a', 'b', 'c'] };
const failed = (node: string, reason: string, unresolvable = false): NodeVerdict => ({
  node,
  feasible: false,
  reasons: [
    { plugin: 'NodeLoadRules', code: 'X', reason, detail: '', ...(unresolvable ? { unresolvable } : {}) },
  ],
  rules: [],
});

describe('authentication', () => {
  it.each([
    ['no client certificate', null, 401, 'unauthorized: no client certificate'],
    [
      'a certificate of another CA',
      'stranger',
      403,
      'unauthorized: client certificate is not signed by a trusted CA',
    ],
    [
      'a certificate not for clients',
      'server-only',
      403,
      'unauthorized: client certificate is not for client authentication',
    ],
  ])('refuses %s', async (_name, client, status, message) => {
    for (const verb of ['filter', 'prioritize', 'bind']) {
      expect(await post(verb, args, client)).toEqual({ status, body: { Error: message } });
    }
    expect(seen).toEqual([]);
  });
});

describe('filter', () => {
  it('lets every node through for a pod outside every rule', async () => {
    filterOut = { kind: 'pass-through' };
    expect(await post('filter', args)).toEqual({
      status: 200,
      body: {
        Nodes: null,
        NodeNames: ['a', 'b', 'c'],
        FailedNodes: {},
        FailedAndUnresolvableNodes: {},
        Error: '',
      },
    });
    expect(seen[0]?.pod).toMatchObject({ namespace: 'shop', name: 'p', uid: 'u1' });
    expect(seen[0]?.nodes).toEqual(['a', 'b', 'c']);
  });

  it('answers the verdicts with the standalone scheduler’s reasons', async () => {
    filterOut = {
      kind: 'decided',
      verdicts: [
        { node: 'a', feasible: true, reasons: [], rules: [] },
        failed('b', 'node(s) exceed rule web cpu 80%'),
        failed('c', 'node(s) not allowed by rule web', true),
      ],
    };
    expect((await post('filter', args)).body).toEqual({
      Nodes: null,
      NodeNames: ['a'],
      FailedNodes: { b: 'node(s) exceed rule web cpu 80%' },
      FailedAndUnresolvableNodes: { c: 'node(s) not allowed by rule web' },
      Error: '',
    });
  });
});

describe('prioritize and bind', () => {
  it('scores 0–10 as integers', async () => {
    scoresOut = {
      kind: 'decided',
      scores: [
        { node: 'a', score: 91.2 },
        { node: 'b', score: 40 },
      ],
    };
    expect((await post('prioritize', { Pod: POD, NodeNames: ['a', 'b'] })).body).toEqual([
      { Host: 'a', Score: 9 },
      { Host: 'b', Score: 4 },
    ]);
    scoresOut = { kind: 'pass-through' };
    expect((await post('prioritize', { Pod: POD, NodeNames: ['a'] })).body).toEqual([
      { Host: 'a', Score: 0 },
    ]);
  });

  it('binds by name and UID, answering the engine’s error as ExtenderBindingResult', async () => {
    const binding = { PodName: 'p', PodNamespace: 'shop', PodUID: 'u1', Node: 'a' };
    expect(await post('bind', binding)).toEqual({ status: 200, body: { Error: '' } });
    expect(seen[0]).toMatchObject({
      verb: 'bind',
      ref: { namespace: 'shop', name: 'p', uid: 'u1' },
      node: 'a',
    });
    bindError = 'Binding rejected: pods "p" not found';
    expect(await post('bind', binding)).toEqual({ status: 200, body: { Error: bindError } });
  });
});

describe('bad input and failures', () => {
  it.each<[string, string, unknown, string, number, string | RegExp]>([
    ['malformed JSON', 'filter', '{"Pod": ', 'application/json', 400, /^malformed JSON/],
    [
      'a body over the limit',
      'filter',
      { Pod: POD, NodeNames: Array(200).fill('node-x') },
      'application/json',
      413,
      'request body larger than the 1kb limit',
    ],
    ['another content type', 'prioritize', 'x', 'text/plain', 415, 'expected Content-Type: application/json'],
    [
      'no pod',
      'filter',
      { NodeNames: ['a'] },
      'application/json',
      400,
      'expected a JSON object (ExtenderArgs.Pod)',
    ],
    [
      'a binding without a node',
      'bind',
      { PodName: 'p', PodNamespace: 'shop' },
      'application/json',
      400,
      'Node must be a non-empty string',
    ],
  ])('answers %s with a 4xx and its reason', async (_name, verb, body, type, status, message) => {
    const res = await post(verb, body, 'scheduler', type);
    expect(res.status).toBe(status);
    expect((res.body as { Error: string }).Error).toMatch(message);
    expect(seen).toEqual([]);
  });

  it('answers 503 until the cache has synced: rules may be missing', async () => {
    ready = false;
    expect(await post('filter', args)).toEqual({
      status: 503,
      body: { Error: 'nodeload is starting: cluster cache not synced yet' },
    });
  });

  it('answers our own failure with a 500 and no detail', async () => {
    explode = true;
    expect(await post('filter', args)).toEqual({ status: 500, body: { Error: 'internal error' } });
  });

  it('counts every call by verb and result', async () => {
    const text = await registry.metrics();
    expect(text).toMatch(/nodeload_extender_requests_total\{verb="filter",result="unauthorized"\} [1-9]/);
    expect(text).toMatch(/nodeload_extender_requests_total\{verb="filter",result="pass-through"\} [1-9]/);
    expect(text).toMatch(/nodeload_extender_requests_total\{verb="bind",result="error"\} [1-9]/);
    expect(text).toMatch(/nodeload_extender_requests_total\{verb="filter",result="invalid"\} [1-9]/);
    expect(text).toMatch(/nodeload_extender_request_duration_seconds_count\{verb="prioritize"\} [1-9]/);
  });
});

// Fuzzes the webhook routes over a real HTTPS socket: 10,000 malformed or random AdmissionReview
// bodies against a gateway started in-process. Every answer must be a 4xx JSON message or a
// well-formed AdmissionReview echoing the uid the request carried; the server must stay up and log
// nothing at error level. The seed is printed on failure; NODELOAD_FUZZ_SEED replays a run.
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import { Writable } from 'node:stream';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { createLogger } from '../../src/server/log.js';
import { webhookComponent } from '../../src/webhook/component.js';
import { createNamespace, kubeConfig, pkiPath, type TestNamespace, waitFor } from './context.js';

const TOTAL = 10_000;
const CONCURRENCY = 16;
const BODY_LIMIT_BYTES = 8 * 1024 * 1024; // the config default, "8mb"
const seed = Number(process.env['NODELOAD_FUZZ_SEED'] ?? Math.floor(Math.random() * 2 ** 31));

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** mulberry32: small, seedable, good enough to pick cases. */
function prng(s: number): () => number {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(seed);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;

const ALPHABET = 'abcxyz-./~_:0129 "\\\u00e9\u4e2d\ud83d\ude00\u0000\n{}[]';
function randomString(max = 40): string {
  let s = '';
  const n = int(max);
  for (let i = 0; i < n; i++) s += pick([...ALPHABET]);
  return s;
}

function randomValue(depth = 0): Json {
  switch (int(depth > 2 ? 6 : 9)) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 42]);
    case 3:
    case 4:
      return randomString();
    case 5:
      return pick([
        '',
        'Pod',
        'CREATE',
        'admission.k8s.io/v1',
        'AdmissionReview',
        'default-scheduler',
        '__proto__',
      ]);
    case 6:
      return Array.from({ length: int(4) }, () => randomValue(depth + 1));
    case 7: {
      const o: { [k: string]: Json } = {};
      for (let i = int(4); i > 0; i--)
        o[pick(['a', 'key', 'operator', 'values', '__proto__', 'constructor', randomString(8)])] =
          randomValue(depth + 1);
      return o;
    }
    default:
      return {};
  }
}

let ruledNs = 'fuzz';

function podObject(): Json {
  const terms = Array.from({ length: int(3) }, () => ({
    matchExpressions: [
      { key: pick(['zone', 'tier']), operator: pick(['In', 'NotIn', 'Exists']), values: [randomString(6)] },
    ],
  }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: rand() < 0.8 ? `p-${int(1e6)}` : '',
      ...(rand() < 0.3 ? { generateName: 'gen-' } : {}),
      labels: rand() < 0.7 ? { app: pick(['web', 'db', randomString(5)]) } : {},
      ...(rand() < 0.5 ? { annotations: { 'nodeload.example.com/rules': pick(['fuzz-rule', 'x']) } } : {}),
      ...(rand() < 0.1 ? { ownerReferences: [{ kind: 'DaemonSet', name: 'd', controller: true }] } : {}),
    },
    spec: {
      containers: [{ name: 'c', image: 'x' }],
      ...(rand() < 0.3 ? { schedulerName: pick(['default-scheduler', 'nodeload-scheduler', 'other']) } : {}),
      ...(rand() < 0.3 ? { nodeName: pick(['fuzz-node-a', 'fuzz-node-b', 'missing']) } : {}),
      ...(rand() < 0.5
        ? {
            affinity: {
              nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
            },
          }
        : {}),
    },
  };
}

function ruleObject(): Json {
  return {
    apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
    kind: 'NodeLoadRule',
    metadata: { name: `r-${int(100)}`, namespace: ruledNs },
    spec: {
      allowedNodes: Array.from({ length: int(5) }, () => pick(['fuzz-node-a', 'ghost', randomString(10)])),
      ...(rand() < 0.5 ? { nodeSelector: { matchLabels: { tier: pick(['gold', 'silver']) } } } : {}),
      ...(rand() < 0.5 ? { podSelector: { matchLabels: { app: pick(['web', 'db']) } } } : {}),
    },
  };
}

const KINDS = [
  {
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    object: podObject,
  },
  {
    kind: { group: RULE_GROUP, version: RULE_VERSION, kind: 'NodeLoadRule' },
    resource: { group: RULE_GROUP, version: RULE_VERSION, resource: RULE_PLURAL },
    object: ruleObject,
  },
  {
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    object: () => ({ metadata: { name: 'd' }, spec: { replicas: 1 } }),
  },
  {
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    object: () => ({ metadata: { name: 'c' }, data: { a: 'b' } }),
  },
];

function validReview(i: number): { [k: string]: Json } {
  const k = rand() < 0.7 ? (KINDS[0] as (typeof KINDS)[number]) : pick(KINDS);
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${i}`,
      // Copies: the fuzz mutates documents in place.
      kind: { ...k.kind },
      resource: { ...k.resource },
      ...(rand() < 0.1 ? { subResource: pick(['status', 'binding']) } : {}),
      name: 'n',
      namespace: rand() < 0.6 ? ruledNs : pick(['default', 'kube-system', 'nodeload-system', '']),
      operation: rand() < 0.85 ? 'CREATE' : pick(['UPDATE', 'DELETE', 'CONNECT']),
      userInfo: { username: 'fuzz' },
      object: k.object(),
      oldObject: null,
      dryRun: rand() < 0.5,
    },
  };
}

/** Every path to a value inside the document, as key lists. */
function paths(
  v: Json,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  if (prefix.length) out.push(prefix);
  if (Array.isArray(v)) for (const [i, x] of v.entries()) paths(x, [...prefix, i], out);
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...prefix, k], out);
  return out;
}

/** Sets (or deletes) the value at path; a no-op when an earlier change removed the parent. */
function setAt(doc: Json, path: (string | number)[], value: Json | undefined): void {
  let cur: Json = doc;
  for (const key of path.slice(0, -1)) {
    if (!cur || typeof cur !== 'object') return;
    cur = (cur as { [k: string]: Json })[key as string] as Json;
  }
  if (!cur || typeof cur !== 'object') return;
  const parent = cur as { [k: string]: Json };
  const last = path[path.length - 1] as string;
  if (value === undefined) delete parent[last];
  else parent[last] = value;
}

interface Case {
  kind: string;
  body: Buffer | string;
  contentType?: string;
  encoding?: string;
  /** The uid the answer must echo, when the body carries one in a place the webhook reads it. */
  uid?: string;
}

const DEEP = '"__deep__"';

function makeCase(i: number): Case {
  const roll = rand();
  const doc = validReview(i);
  const uidOf = (d: Json) => {
    const req = (d as { request?: { uid?: unknown } }).request;
    return typeof req?.uid === 'string' && req.uid !== '' ? req.uid : undefined;
  };
  if (roll < 0.08) {
    const bytes = Buffer.alloc(int(3000));
    for (let j = 0; j < bytes.length; j++) bytes[j] = int(256);
    return { kind: 'random bytes', body: bytes };
  }
  if (roll < 0.18) {
    const text = JSON.stringify(doc);
    return { kind: 'truncated JSON', body: text.slice(0, int(text.length)) };
  }
  if (roll < 0.45) {
    const all = paths(doc);
    for (let n = 1 + int(3); n > 0; n--) setAt(doc, pick(all), randomValue());
    return { kind: 'wrong types', body: JSON.stringify(doc), uid: uidOf(doc) };
  }
  if (roll < 0.55) {
    const all = paths(doc);
    for (let n = 1 + int(3); n > 0; n--) setAt(doc, pick(all), undefined);
    return { kind: 'missing fields', body: JSON.stringify(doc), uid: uidOf(doc) };
  }
  if (roll < 0.58) {
    setAt(doc, pick(paths(doc)), 'x'.repeat(100_000 + int(900_000)));
    return { kind: 'huge string', body: JSON.stringify(doc), uid: uidOf(doc) };
  }
  if (roll < 0.62) {
    setAt(doc, pick(paths(doc)), '__deep__');
    const depth = 1000 + int(50_000);
    const open = rand() < 0.5 ? '['.repeat(depth) : '{"a":'.repeat(depth);
    const close = open.startsWith('[') ? ']'.repeat(depth) : '}'.repeat(depth);
    const body = JSON.stringify(doc).replace(DEEP, `${open}1${close}`);
    return { kind: 'deep nesting', body, uid: uidOf(doc) };
  }
  if (roll < 0.67) {
    const req = doc.request as { [k: string]: Json };
    req.uid = pick([null, '', 7, [], {}]) as Json;
    if (rand() < 0.5) delete req.uid;
    return { kind: 'missing uid', body: JSON.stringify(doc) };
  }
  if (roll < 0.72) {
    doc.apiVersion = pick(['admission.k8s.io/v1beta1', 'v1', '', 'admission.k8s.io/v2', 1]) as Json;
    if (rand() < 0.5) doc.kind = pick(['Pod', 'AdmissionRequest', '', null]) as Json;
    return { kind: 'wrong kind or version', body: JSON.stringify(doc) };
  }
  if (roll < 0.76) {
    return {
      kind: 'JSON that is not an object',
      body: pick(['null', '[]', '1', '"x"', 'true', '[{"request":{}}]', '{}']),
    };
  }
  if (roll < 0.78) {
    return {
      kind: 'unexpected content type or encoding',
      body: JSON.stringify(doc),
      ...pick([
        { contentType: 'text/plain' },
        { contentType: 'application/x-www-form-urlencoded' },
        { encoding: 'gzip' },
        { encoding: 'br' },
        { encoding: 'bogus' },
      ]),
    };
  }
  // Well-formed reviews for pods, rules and other kinds: the control group.
  return { kind: 'well-formed review', body: JSON.stringify(doc), uid: uidOf(doc) };
}

let agent: https.Agent;
let gateway: Gateway;
let ns: TestNamespace;
const errorLines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      if ((JSON.parse(line) as { level: number }).level >= 50) errorLines.push(line.slice(0, 500));
    }
    cb();
  },
});

function send(port: number, c: Case): Promise<{ status: number; type: string; text: string }> {
  const headers: Record<string, string> = { 'content-type': c.contentType ?? 'application/json' };
  if (c.encoding) headers['content-encoding'] = c.encoding;
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: pick(['/mutate', '/validate']), method: 'POST', agent, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (b: Buffer) => chunks.push(b));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.once('error', reject);
    req.end(c.body);
  });
}

/** Why the answer is not acceptable, or undefined when it is. */
function judge(c: Case, res: { status: number; type: string; text: string }): string | undefined {
  if (!res.type.startsWith('application/json')) return `content-type ${res.type}`;
  let body: { [k: string]: unknown };
  try {
    body = JSON.parse(res.text);
  } catch {
    return 'answer is not JSON';
  }
  if (res.status >= 400 && res.status < 500) {
    return typeof body.error === 'string' && typeof body.message === 'string'
      ? undefined
      : '4xx without error/message';
  }
  if (res.status !== 200) return `status ${res.status}`;
  if (body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview')
    return 'not an AdmissionReview';
  const r = body.response as { [k: string]: unknown } | undefined;
  if (!r || typeof r.allowed !== 'boolean' || typeof r.uid !== 'string' || r.uid === '')
    return 'bad response';
  if (c.uid !== undefined && r.uid !== c.uid) return `uid ${r.uid} ≠ ${c.uid}`;
  if (
    r.warnings !== undefined &&
    !(Array.isArray(r.warnings) && r.warnings.every((w) => typeof w === 'string'))
  )
    return 'bad warnings';
  if (r.allowed === false) {
    const s = r.status as { code?: unknown; message?: unknown } | undefined;
    if (typeof s?.code !== 'number' || typeof s.message !== 'string') return 'denial without status';
  }
  if (r.patch !== undefined) {
    if (r.patchType !== 'JSONPatch' || typeof r.patch !== 'string') return 'patch without patchType';
    const ops = JSON.parse(Buffer.from(r.patch, 'base64').toString()) as unknown;
    if (
      !Array.isArray(ops) ||
      !ops.every((o) => ['add', 'replace', 'remove'].includes(o?.op) && String(o?.path).startsWith('/'))
    )
      return 'patch is not a JSON Patch';
  }
  return undefined;
}

beforeAll(async () => {
  const kc = kubeConfig();
  await ensureCrd(kc, createLogger('silent'));
  ns = await createNamespace('fuzz');
  ruledNs = ns.name;
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const [name, spec] of [
    ['fuzz-rule', { allowedNodes: ['fuzz-node-a', 'fuzz-node-b'] }],
    [
      'fuzz-gold',
      { nodeSelector: { matchLabels: { tier: 'gold' } }, podSelector: { matchLabels: { app: 'web' } } },
    ],
  ] as const) {
    await custom.createNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace: ns.name,
      body: { apiVersion: `${RULE_GROUP}/${RULE_VERSION}`, kind: 'NodeLoadRule', metadata: { name }, spec },
    });
  }
  const config = parseConfig({
    kubeconfig: inject('kubeconfig'),
    httpPort: 0,
    httpsPort: 0,
    bindAddress: '127.0.0.1',
    tlsCertFile: pkiPath('serving.crt'),
    tlsKeyFile: pkiPath('serving.key'),
    leaderElect: false,
    logLevel: 'warn',
  });
  gateway = await startGateway(config, [webhookComponent], { log: createLogger('warn', sink) });
  await gateway.cache.ready();
  await waitFor('the fuzz rules in the cache', () => gateway.cache.rules.has(`${ns.name}/fuzz-gold`));
  // Verifies the serving cert against the cluster CA, as the API server does.
  agent = new https.Agent({
    keepAlive: true,
    maxSockets: CONCURRENCY,
    ca: await readFile(pkiPath('ca.crt'), 'utf8'),
  });
});

afterAll(async () => {
  agent?.destroy();
  await gateway?.stop();
  await ns?.dispose();
});

describe('webhook fuzz', () => {
  it(`answers ${TOTAL} malformed or random bodies with a 4xx message or a well-formed AdmissionReview (seed ${seed})`, async () => {
    const port = gateway.httpsPort ?? 0;
    const cases: Case[] = Array.from({ length: TOTAL }, (_, i) => makeCase(i));
    // A few bodies over the limit, declared and streamed: 413, and the connection keeps serving.
    for (let i = 0; i < 3; i++)
      cases[int(TOTAL)] = { kind: 'over the body limit', body: Buffer.alloc(BODY_LIMIT_BYTES + 1024, 0x20) };
    const failures: string[] = [];
    const byKind = new Map<string, Map<number, number>>();
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++] as Case;
        try {
          const res = await send(port, c);
          const counts = byKind.get(c.kind) ?? new Map<number, number>();
          counts.set(res.status, (counts.get(res.status) ?? 0) + 1);
          byKind.set(c.kind, counts);
          const why = judge(c, res);
          if (why) failures.push(`${c.kind}: ${why} — ${res.status} ${res.text.slice(0, 200)}`);
        } catch (err) {
          failures.push(`${c.kind}: ${(err as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    expect(failures.slice(0, 20), `seed ${seed}: ${failures.length} bad answers`).toEqual([]);
    const summary = Object.fromEntries([...byKind].map(([k, m]) => [k, Object.fromEntries(m)]));
    // Each family was exercised, and well-formed reviews were answered as reviews.
    expect(Object.keys(summary).length, JSON.stringify(summary)).toBeGreaterThanOrEqual(11);
    expect(summary['well-formed review']?.[200]).toBeGreaterThan(100);
    expect(summary['over the body limit']?.[413]).toBeGreaterThanOrEqual(1);
    expect(errorLines, 'nothing logged at error level for client mistakes').toEqual([]);

    // Still up and still right.
    const health = await new Promise<number>((resolve, reject) =>
      https
        .get({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .once('error', reject),
    );
    expect(health).toBe(200);
    const metrics = await gateway.registry.metrics();
    expect(metrics).not.toMatch(/nodeload_admission_requests_total\{[^}]*result="error"\}/);
    expect(metrics).toMatch(/nodeload_admission_requests_total\{route="mutate",result="patched"\} [1-9]/);
  }, 120_000);
});

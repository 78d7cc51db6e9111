// The aggregated API nodeload.example.com/v1alpha1 through the real kube-aggregator: registration and
// availability, kubectl get --raw / get (Table) / explain / get --watch, the aggregator's RBAC and our
// own SubjectAccessReview, front-proxy authentication on the gateway's port, and GET /api/node-load.
//
// The APIService is cluster-wide and only one gateway can back it: this is the only test file that
// registers it. Every assertion is filtered to this file's nodes (selected by a label unique to the run).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ApiregistrationV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { APISERVICE_NAME } from '../../src/aggregated/api.js';
import { aggregatedApiComponent } from '../../src/aggregated/component.js';
import type { NodeLoadList, NodeLoadObject, NodeLoadSummary } from '../../src/aggregated/nodeloads.js';
import { type Gateway, startGateway } from '../../src/app.js';
import { formatCpu, formatMemory } from '../../src/cluster/quantity.js';
import { parseConfig } from '../../src/config.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import {
  registerLocalApiService,
  unregisterLocalApiService,
  waitForApiServiceAvailable,
} from '../cluster/apiservice.js';
import { createFakeNodes } from '../cluster/nodes.js';
import {
  createBoundPod,
  createNamespace,
  kubeConfig,
  kubectl,
  pkiPath,
  removeTestResources,
  type TestNamespace,
  uniqueName,
  waitFor,
} from './context.js';

const NL = '/apis/nodeload.example.com/v1alpha1/nodeloads';
const RUN_LABEL = 'nodeload.test/aggregated';

let gateway: Gateway;
let ns: TestNamespace;
let work: string;
let run: string;
let nodeA: string;
let nodeB: string;

/** kubectl with a private discovery cache, so a cache left by an earlier run cannot hide the new group. */
function k(args: string[], opts: { kubeconfig?: string; timeoutMs?: number } = {}): Promise<string> {
  const extra = [`--cache-dir=${path.join(work, 'kube-cache')}`];
  if (opts.kubeconfig) extra.push(`--kubeconfig=${opts.kubeconfig}`);
  return kubectl([...extra, ...args], opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {});
}

async function rawList(
  listPath = `${NL}?labelSelector=${encodeURIComponent(`${RUN_LABEL}=${run}`)}`,
): Promise<NodeLoadList> {
  return JSON.parse(await k(['get', '--raw', listPath]));
}

function bindPod(name: string, node: string, requests: { cpu: string; memory: string }): Promise<void> {
  return createBoundPod(ns.name, name, node, requests);
}

/** The figures the gateway's LoadTracker holds for a node, as the API renders them. */
function trackerFigures(node: string) {
  const load = gateway.loads.loadOf(node);
  if (!load) throw new Error(`no load for ${node}`);
  return {
    cpuPercent: Math.round(load.cpuPercent * 100) / 100,
    memoryPercent: Math.round(load.memoryPercent * 100) / 100,
    requested: { cpu: formatCpu(load.requested.cpuMilli), memory: formatMemory(load.requested.memoryBytes) },
    effective: { cpu: formatCpu(load.effective.cpuMilli), memory: formatMemory(load.effective.memoryBytes) },
    pods: load.podCount,
    source: load.source,
  };
}

function statusFigures(o: { status: NodeLoadObject['status'] }) {
  const s = o.status;
  return {
    cpuPercent: s.cpuPercent,
    memoryPercent: s.memoryPercent,
    requested: s.requested,
    effective: s.effective,
    pods: s.pods,
    source: s.source,
  };
}

interface DirectResponse {
  status: number;
  body: { kind?: string; reason?: string; code?: number; items?: unknown[] };
}

/** A request straight to the gateway's HTTPS port, bypassing the aggregator. */
function direct(
  urlPath: string,
  opts: { cert?: string; key?: string; headers?: Record<string, string> } = {},
): Promise<DirectResponse> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: gateway.httpsPort,
        path: urlPath,
        servername: 'localhost',
        ca: readFileSync(pkiPath('ca.crt')),
        ...(opts.cert && opts.key ? { cert: readFileSync(opts.cert), key: readFileSync(opts.key) } : {}),
        headers: opts.headers ?? {},
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A client certificate signed by the cluster CA (a real cluster user), and a kubeconfig for it. */
function userKubeconfig(user: string): string {
  const dir = path.join(work, user);
  execFileSync('mkdir', ['-p', dir]);
  const ssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    `/CN=${user}`,
    '-keyout',
    'user.key',
    '-out',
    'user.csr',
  ]);
  writeFileSync(path.join(dir, 'ext'), 'extendedKeyUsage=clientAuth\n');
  ssl([
    'x509',
    '-req',
    '-in',
    'user.csr',
    '-CA',
    pkiPath('ca.crt'),
    '-CAkey',
    pkiPath('ca.key'),
    '-CAserial',
    path.join(dir, 'ca.srl'),
    '-CAcreateserial',
    '-days',
    '1',
    '-out',
    'user.crt',
    '-extfile',
    'ext',
  ]);
  const file = path.join(dir, 'kubeconfig');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'local',
          cluster: { server: inject('apiserverUrl'), 'certificate-authority': pkiPath('ca.crt') },
        },
      ],
      users: [
        {
          name: user,
          user: {
            'client-certificate': path.join(dir, 'user.crt'),
            'client-key': path.join(dir, 'user.key'),
          },
        },
      ],
      contexts: [{ name: 'local', context: { cluster: 'local', user } }],
      'current-context': 'local',
    }),
  );
  return file;
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'nodeload-it-aggregated-'));
  run = uniqueName('run');
  nodeA = uniqueName('it-agg-a');
  nodeB = uniqueName('it-agg-b');
  // Rules feed "eligibleRules"; the CRD may not be installed yet in a fresh cluster.
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  ns = await createNamespace('it-aggregated');
  await createFakeNodes(inject('kubeconfig'), [
    { name: nodeA, cpu: 4, memory: '8Gi', pods: 20, labels: { [RUN_LABEL]: run } },
    { name: nodeB, cpu: 8, memory: '16Gi', pods: 20, labels: { [RUN_LABEL]: run } },
  ]);
  gateway = await startGateway(
    parseConfig({
      kubeconfig: inject('kubeconfig'),
      httpPort: 0,
      httpsPort: 0,
      bindAddress: '127.0.0.1',
      // Reads the user port without a token (test/integration/authz.test.ts covers tokens).
      anonymousUserPort: true,
      tlsCertFile: pkiPath('serving.crt'),
      tlsKeyFile: pkiPath('serving.key'),
      leaderElect: false,
      installCrd: false,
      logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
    }),
    [aggregatedApiComponent],
  );
  await registerLocalApiService(gateway.kubeConfig, {
    port: gateway.httpsPort as number,
    caPem: readFileSync(pkiPath('ca.crt'), 'utf8'),
  });
  await waitForApiServiceAvailable(gateway.kubeConfig, { timeoutMs: 90_000 });
  await waitFor('both nodes served', async () => (await rawList()).items.length === 2, { timeoutMs: 30_000 });
}, 180_000);

afterAll(async () => {
  if (gateway) await unregisterLocalApiService(gateway.kubeConfig);
  await gateway?.stop();
  await removeTestResources({ namespace: ns, nodes: nodeA ? [nodeA, nodeB] : [] });
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('aggregated API nodeload.example.com/v1alpha1', () => {
  it('is registered and Available through the aggregator', async () => {
    const api = await kubeConfig()
      .makeApiClient(ApiregistrationV1Api)
      .readAPIService({ name: APISERVICE_NAME });
    expect(api.status?.conditions?.find((c) => c.type === 'Available')?.status).toBe('True');
    const resources = await k(['api-resources', '--api-group=nodeload.example.com', '--no-headers']);
    expect(resources).toMatch(/^nodeloads\s+nl\s+nodeload\.example\.com\/v1alpha1\s+false\s+NodeLoad/m);
  });

  it('kubectl get --raw lists NodeLoads with the LoadTracker figures', async () => {
    const list = await rawList();
    expect(list.kind).toBe('NodeLoadList');
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(list.items.map((o) => o.metadata.name).sort()).toEqual([nodeA, nodeB].sort());
    for (const item of list.items) {
      expect(statusFigures(item), item.metadata.name).toEqual(trackerFigures(item.metadata.name));
      expect(item.status.allocatable).toMatchObject(
        item.metadata.name === nodeA ? { cpu: '4', memory: '8Gi' } : { cpu: '8', memory: '16Gi' },
      );
    }
    const one = JSON.parse(await k(['get', '--raw', `${NL}/${nodeB}`])) as NodeLoadObject;
    expect(one.kind).toBe('NodeLoad');
    expect(statusFigures(one)).toEqual(trackerFigures(nodeB));
  });

  it('kubectl get nodeloads prints NAME CPU% MEMORY% SOURCE PODS AGE', async () => {
    const out = await k(['get', 'nodeloads', '-l', `${RUN_LABEL}=${run}`]);
    const [header, ...rows] = out.trim().split('\n');
    expect(header?.split(/\s+/)).toEqual(['NAME', 'CPU%', 'MEMORY%', 'SOURCE', 'PODS', 'AGE']);
    const byName = new Map(rows.map((r) => [r.split(/\s+/)[0], r.split(/\s+/)]));
    expect([...byName.keys()].sort()).toEqual([nodeA, nodeB].sort());
    const b = byName.get(nodeB) as string[];
    const figures = trackerFigures(nodeB);
    expect(b[3]).toBe(figures.source);
    expect(b[4]).toBe(String(figures.pods));
    expect(b[5]).toMatch(/^\d+[smhdy]/);
    const notFound = await k(['get', 'nodeloads', 'no-such-node']).catch((err: Error) => err.message);
    expect(notFound).toContain(
      'Error from server (NotFound): nodeloads.nodeload.example.com "no-such-node" not found',
    );
  });

  it('sends a list over 128 KiB gzipped through the aggregator when the client accepts gzip', async () => {
    // One node whose ~1,600 labels make its NodeLoad (and its Table row, which carries the metadata) about
    // 150 KB: over the threshold, with two nodes' worth of room below the etcd object limit.
    const big = uniqueName('it-agg-big');
    const bigRun = uniqueName('big');
    const labels: Record<string, string> = { [RUN_LABEL]: bigRun };
    for (let i = 0; i < 1600; i++) labels[`big.nodeload.test/l-${i}`] = 'v'.repeat(63);
    await createFakeNodes(inject('kubeconfig'), [{ name: big, cpu: 2, memory: '4Gi', pods: 10, labels }]);
    onTestFinished(() => removeTestResources({ nodes: [big] }));
    const listPath = `${NL}?labelSelector=${encodeURIComponent(`${RUN_LABEL}=${bigRun}`)}`;
    await waitFor('the big node served', async () => (await rawList(listPath)).items.length === 1);

    // Through kube-apiserver (the aggregator proxies to the gateway), as Go's transport asks.
    const viaApiserver = (accept: string) =>
      new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        const req = https.request(new URL(listPath, inject('apiserverUrl')), {
          ca: readFileSync(pkiPath('ca.crt')),
          cert: readFileSync(pkiPath('admin.crt')),
          key: readFileSync(pkiPath('admin.key')),
          headers: { accept, 'accept-encoding': 'gzip' },
          agent: false,
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () =>
            resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }),
          );
        });
        req.on('error', reject);
        req.end();
      });
    const json = await viaApiserver('application/json');
    expect(json.encoding).toBe('gzip');
    expect(json.body.length).toBeLessThan(64 * 1024);
    const list = JSON.parse(gunzipSync(json.body).toString('utf8')) as NodeLoadList;
    expect(list.items.map((o) => o.metadata.name)).toEqual([big]);
    expect(
      Object.keys(list.items[0]?.metadata.labels ?? {}).filter((l) => l.startsWith('big.')),
    ).toHaveLength(1600);
    const table = await viaApiserver('application/json;as=Table;v=v1;g=meta.k8s.io');
    expect(table.encoding).toBe('gzip');
    const rows = JSON.parse(gunzipSync(table.body).toString('utf8')) as {
      kind: string;
      rows: { cells: unknown[] }[];
    };
    expect(rows.kind).toBe('Table');
    expect(rows.rows.map((r) => r.cells[0])).toEqual([big]);
    // kubectl (client-go) asks for gzip itself and reads the answer.
    const out = await k(['get', 'nodeloads', '-l', `${RUN_LABEL}=${bigRun}`, '--no-headers']);
    expect(out.trim().split(/\s+/)[0]).toBe(big);
  });

  it('kubectl explain nodeloads describes the type', async () => {
    // The aggregator downloads the OpenAPI documents in the background after registration.
    const out = await waitFor(
      'kubectl explain nodeloads',
      async () => {
        const text = await k(['explain', 'nodeloads']);
        return text.includes('NodeLoad') ? text : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    expect(out).toMatch(/KIND:\s+NodeLoad/);
    expect(out).toMatch(/VERSION:\s+v1alpha1/);
    expect(out).toContain('status');
    const status = await k(['explain', 'nodeloads.status']);
    for (const field of ['cpuPercent', 'memoryPercent', 'effective', 'source', 'eligibleRules'])
      expect(status).toContain(field);
    const effective = await k(['explain', 'nodeloads.status.effective']);
    expect(effective).toContain('every decision uses');
  });

  it('kubectl get nodeloads --watch sees a load change', async () => {
    const lines: string[] = [];
    const child: ChildProcess = spawn(
      inject('kubectlPath'),
      [
        `--kubeconfig=${inject('kubeconfig')}`,
        `--cache-dir=${path.join(work, 'kube-cache')}`,
        'get',
        'nodeloads',
        '-l',
        `${RUN_LABEL}=${run}`,
        '--watch',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    onTestFinished(() => {
      child.kill();
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    let partial = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      const parts = (partial + d).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    });
    const rowsFor = (node: string) => lines.filter((l) => l.startsWith(`${node} `));
    await waitFor(
      `initial rows (stderr: ${stderr})`,
      () => rowsFor(nodeA).length >= 1 && rowsFor(nodeB).length >= 1,
    );
    expect(lines[0]?.split(/\s+/)).toEqual(['NAME', 'CPU%', 'MEMORY%', 'SOURCE', 'PODS', 'AGE']);
    const before = rowsFor(nodeA).length;

    await bindPod('watched', nodeA, { cpu: '1', memory: '1Gi' }); // 25% of 4 CPUs, 12.5% of 8Gi

    const row = await waitFor(`a new ${nodeA} row with the pod's load (lines: ${lines.join(' | ')})`, () =>
      rowsFor(nodeA)
        .slice(before)
        .find((l) => l.split(/\s+/)[1] === '25%'),
    );
    expect(row.split(/\s+/).slice(0, 5)).toEqual([nodeA, '25%', '12.5%', 'requests', '1']);
    // The header is printed once, not per event.
    expect(lines.filter((l) => l.startsWith('NAME')).length).toBe(1);
    expect(statusFigures(JSON.parse(await k(['get', '--raw', `${NL}/${nodeA}`])))).toEqual(
      trackerFigures(nodeA),
    );
  });

  it('replays to a watch from a list resourceVersion a change made while no watch was open', async () => {
    // The store builds objects only when read and follows load events only while a watch is open: the
    // change below is first seen when the watch opens, and must still come as an event after the list.
    const before = await rawList();
    const listRv = Number(before.metadata.resourceVersion);
    const podsBefore = before.items.find((o) => o.metadata.name === nodeB)?.status.pods ?? -1;
    await bindPod('unwatched', nodeB, { cpu: '500m', memory: '256Mi' });
    await waitFor(
      'the tracker to count the pod',
      () => gateway.loads.loadOf(nodeB)?.podCount === podsBefore + 1,
    );

    const selector = encodeURIComponent(`${RUN_LABEL}=${run}`);
    const stream = await k([
      'get',
      '--raw',
      `${NL}?watch=1&resourceVersion=${listRv}&timeoutSeconds=2&labelSelector=${selector}`,
    ]);
    const events = stream
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; object: NodeLoadObject });
    const forB = events.filter((e) => e.object.metadata.name === nodeB);
    // The replay comes first; while the watch stays open (2 s) the pod's own progress (bound, then
    // Running under KWOK) may legitimately change the node again, as later MODIFIED events.
    expect(forB.length).toBeGreaterThanOrEqual(1);
    expect(new Set(forB.map((e) => e.type))).toEqual(new Set(['MODIFIED']));
    expect(forB[0]?.object.status.pods).toBe(podsBefore + 1);
    expect(Number(forB[0]?.object.metadata.resourceVersion)).toBeGreaterThan(listRv);
    const lastB = forB.at(-1);
    // nodeA's figures did not change: its heartbeats and pod status updates leave them alone, so no event
    // may carry a change to them. An event for nodeA is still legitimate when another test's namespace
    // creates or deletes a NodeLoadRule meanwhile (the suite runs files in parallel): that changes
    // nodeA's eligible and ineligible rules, and nothing else.
    const aListed = before.items.find((o) => o.metadata.name === nodeA);
    expect(aListed).toBeDefined();
    for (const e of events.filter((ev) => ev.object.metadata.name === nodeA)) {
      expect(statusFigures(e.object)).toEqual(statusFigures(aListed as NodeLoadObject));
      expect({
        eligible: e.object.status.eligibleRules,
        ineligible: e.object.status.ineligibleRules,
      }).not.toEqual({
        eligible: aListed?.status.eligibleRules,
        ineligible: aListed?.status.ineligibleRules,
      });
    }
    const after = await rawList();
    expect(Number(after.metadata.resourceVersion)).toBeGreaterThanOrEqual(
      Number(lastB?.object.metadata.resourceVersion),
    );
    expect(
      Number(after.items.find((o) => o.metadata.name === nodeB)?.metadata.resourceVersion),
    ).toBeGreaterThanOrEqual(Number(lastB?.object.metadata.resourceVersion));
  });

  it('lists the NodeLoadRules a node is eligible for', async () => {
    const rules = kubeConfig().makeApiClient(CustomObjectsApi);
    await rules.createNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace: ns.name,
      body: {
        apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
        kind: 'NodeLoadRule',
        metadata: { name: 'light' },
        spec: { maxCPU: 20, maxMemory: 90, allowedNodes: [nodeA, nodeB] },
      },
    });
    await bindPod('busy', nodeA, { cpu: '1', memory: '1Gi' }); // keeps nodeA above 20% whatever ran before
    const items = await waitFor('eligibility for rule "light"', async () => {
      const list = await rawList();
      const ref = (o: NodeLoadObject) =>
        [...o.status.eligibleRules, ...o.status.ineligibleRules].some((r) => r.namespace === ns.name);
      return list.items.every(ref) ? list.items : undefined;
    });
    const a = items.find((o) => o.metadata.name === nodeA) as NodeLoadObject;
    const b = items.find((o) => o.metadata.name === nodeB) as NodeLoadObject;
    expect(b.status.eligibleRules).toContainEqual({ namespace: ns.name, name: 'light' });
    expect(a.status.ineligibleRules).toContainEqual({
      namespace: ns.name,
      name: 'light',
      reasons: [expect.stringMatching(/^cpu \d+(\.\d+)?% > maxCPU 20%$/)],
    });
  });

  it('gives a user without RBAC permission 403 through kubectl, and lets them in once granted', async () => {
    const user = uniqueName('nobody');
    const kubeconfig = userKubeconfig(user);
    const denied = await k(['get', 'nodeloads'], { kubeconfig }).catch((err: Error) => err.message);
    expect(denied).toContain('Error from server (Forbidden)');
    expect(denied).toContain(
      `User "${user}" cannot list resource "nodeloads" in API group "nodeload.example.com"`,
    );

    // With RBAC the request passes the aggregator and our own SubjectAccessReview for this user.
    const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    const name = uniqueName('it-agg-reader');
    await rbac.createClusterRole({
      body: {
        metadata: { name },
        rules: [
          { apiGroups: ['nodeload.example.com'], resources: ['nodeloads'], verbs: ['get', 'list', 'watch'] },
        ],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
      },
    });
    onTestFinished(async () => {
      await rbac.deleteClusterRoleBinding({ name });
      await rbac.deleteClusterRole({ name });
    });
    // Our SubjectAccessReview decisions are cached for 10 s: the denial above may still be cached.
    const allowed = await waitFor(
      'the granted user to list nodeloads',
      () => k(['get', 'nodeloads', '-l', `${RUN_LABEL}=${run}`, '-o', 'name'], { kubeconfig }),
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    expect(allowed.trim().split('\n').sort()).toEqual(
      [`nodeload.nodeload.example.com/${nodeA}`, `nodeload.nodeload.example.com/${nodeB}`].sort(),
    );
  });

  it('answers direct requests without the front-proxy certificate with 401', async () => {
    const masters = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };
    const none = await direct(NL, { headers: masters });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    // A certificate the apiserver accepts from users is still not the front proxy's.
    const userCert = await direct(NL, {
      cert: pkiPath('admin.crt'),
      key: pkiPath('admin.key'),
      headers: masters,
    });
    expect(userCert.status).toBe(401);

    const proxy = { cert: pkiPath('front-proxy-client.crt'), key: pkiPath('front-proxy-client.key') };
    const forbidden = await direct(NL, { ...proxy, headers: { 'X-Remote-User': uniqueName('nobody') } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    const ok = await direct(`${NL}?labelSelector=${encodeURIComponent(`${RUN_LABEL}=${run}`)}`, {
      ...proxy,
      headers: masters,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.items).toHaveLength(2);
  });

  it('serves GET /api/node-load on the user-facing port', async () => {
    const res = await fetch(`http://127.0.0.1:${gateway.httpPort}/api/node-load`);
    expect(res.status).toBe(200);
    const { nodes } = (await res.json()) as { nodes: NodeLoadSummary[] };
    const a = nodes.find((n) => n.name === nodeA) as NodeLoadSummary;
    expect(a).toMatchObject({ name: nodeA, cpu: '4', memory: '8Gi' });
    const figures = trackerFigures(nodeA);
    expect({
      cpuPercent: a.cpuPercent,
      memoryPercent: a.memoryPercent,
      pods: a.pods,
      source: a.source,
    }).toEqual({
      cpuPercent: figures.cpuPercent,
      memoryPercent: figures.memoryPercent,
      pods: figures.pods,
      source: figures.source,
    });
  });
});

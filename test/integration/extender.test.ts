// Extender mode against the real kube-scheduler: a private control plane whose kube-scheduler runs a
// second profile `nodeload-scheduler` and calls an in-process gateway as its extender (filter, prioritize,
// bind; nodeCacheCapable, ignorable) over TLS on 127.0.0.1, authenticating with a client certificate of
// the cluster CA. The gateway runs only the scheduler (loop off: --native-scheduler=false), the extender
// and GraphQL. Each test has its own namespace and KWOK nodes; the gateway is stopped last, to show that
// scheduling goes on without it.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { CoreV1Api, StorageV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { toPodInfo } from '../../src/cluster/convert.js';
import { parseConfig } from '../../src/config.js';
import { extenderComponent } from '../../src/extender/component.js';
import { graphqlComponent } from '../../src/graphql/component.js';
import { schedulerComponent } from '../../src/scheduler/component.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { freePorts } from '../cluster/controlplane.js';
import { localExtenderSchedulerConfig } from '../cluster/extender.js';
import { createFakeNodes, deleteFakeNodes } from '../cluster/nodes.js';
import { postGraphQL, sseSubscribe } from '../kit/graphql.js';
import {
  coreApi,
  createNodeLoadRule,
  kubeConfig,
  pkiPath,
  provided,
  uniqueName,
  usePrivateCluster,
  waitFor,
  withNamespace,
} from './context.js';

const SCHEDULER = 'nodeload-scheduler';
const POOL = 'nodeload.test/pool';
const leaseNamespace = uniqueName('ext-lease');
let httpsPort = 0;
let gateway: Gateway | undefined;

beforeAll(async () => {
  [httpsPort] = (await freePorts(1)) as [number];
  await usePrivateCluster({
    scheduler: true,
    schedulerConfig: (c) => localExtenderSchedulerConfig({ ...c, port: httpsPort }),
  });
  const config = parseConfig({
    kubeconfig: provided('kubeconfig'),
    httpPort: 0,
    httpsPort,
    bindAddress: '127.0.0.1',
    // GraphQL on 127.0.0.1 without a token (the test reads the history and subscribes).
    anonymousUserPort: true,
    tlsCertFile: pkiPath('serving.crt'),
    tlsKeyFile: pkiPath('serving.key'),
    extenderClientCaFile: pkiPath('ca.crt'),
    schedulerName: SCHEDULER,
    nativeScheduler: false,
    leaderElect: false,
    namespace: leaseNamespace,
    identity: uniqueName('gw-ext'),
    installCrd: true,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
  });
  let scheduler: Scheduler | undefined;
  gateway = await startGateway(config, [
    (ctx) => {
      const c = schedulerComponent(ctx);
      scheduler = c.scheduler;
      return c;
    },
    (ctx) => extenderComponent(ctx, { scheduler: scheduler as Scheduler }),
    (ctx) => graphqlComponent(ctx, { scheduler: scheduler as Scheduler, graphiql: false }),
  ]);
  await gateway.cache.ready();
}, 300_000);

afterAll(async () => {
  await gateway?.stop();
});

/** KWOK nodes of a fresh pool, Ready and untainted in the gateway's cache; deleted after the test. */
async function nodePool(count: number, cpu = 4): Promise<{ pool: string; names: string[] }> {
  const pool = uniqueName('ext');
  const names = Array.from({ length: count }, (_, i) => `${pool}-${i}`);
  await createFakeNodes(
    provided('kubeconfig'),
    names.map((name) => ({ name, cpu, memory: '8Gi', labels: { [POOL]: pool } })),
  );
  onTestFinished(async () => {
    await deleteFakeNodes(provided('kubeconfig'), names);
  });
  // The node lifecycle controller lifts the not-ready taint once KWOK reports the node Ready.
  await waitFor(
    `nodes of ${pool} ready and untainted`,
    () =>
      names.every((n) => {
        const node = gateway?.cache.nodes.get(n);
        return node?.ready && node.taints.length === 0;
      }),
    { timeoutMs: 120_000 },
  );
  return { pool, names };
}

function createRule(namespace: string, name: string, spec: Record<string, unknown>): Promise<void> {
  return createNodeLoadRule(namespace, name, spec, (key) => gateway?.cache.rules.has(key) ?? false);
}

function podBody(
  name: string,
  o: { pool: string; cpu: string; app: string; extra?: Partial<V1Pod['spec']> },
): V1Pod {
  return {
    metadata: { name, labels: { app: o.app } },
    spec: {
      schedulerName: SCHEDULER,
      nodeSelector: { [POOL]: o.pool },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: o.cpu, memory: '64Mi' } },
        },
      ],
      ...o.extra,
    },
  };
}

/** All at once: kube-scheduler gets a burst, its binds in flight while it filters the next pods. */
async function createPods(namespace: string, bodies: V1Pod[]): Promise<void> {
  await Promise.all(bodies.map((body) => coreApi().createNamespacedPod({ namespace, body })));
}

async function boundPods(namespace: string, count: number) {
  return await waitFor(
    `${count} pods bound in ${namespace}`,
    async () => {
      const pods = (await coreApi().listNamespacedPod({ namespace })).items.map((p) => toPodInfo(p));
      return pods.length === count && pods.every((p) => p.nodeName) ? pods : undefined;
    },
    { timeoutMs: 120_000 },
  );
}

function graphql<T>(query: string, variables: Record<string, unknown>) {
  return postGraphQL<T>(globalThis, `http://127.0.0.1:${gateway?.httpPort}/graphql`, query, variables);
}

interface HistoryItem {
  pod: string;
  result: string;
  engine: string;
  node: string | null;
  message: string;
}

describe('extender mode: kube-scheduler calls nodeload', () => {
  it('places the pods a rule covers only on its allowed nodes, within its threshold after placement', async () => {
    const ns = await withNamespace('ext-place');
    const { pool, names } = await nodePool(4);
    const allowed = names.slice(0, 3);
    // 60 % of 4 cores: two 1-core pods per node (50 %), a third would make 75 %.
    await createRule(ns, 'web', {
      maxCPU: 60,
      allowedNodes: allowed,
      podSelector: { matchLabels: { app: 'web' } },
    });
    await createPods(
      ns,
      Array.from({ length: 6 }, (_, i) => podBody(`web-${i}`, { pool, cpu: '1', app: 'web' })),
    );
    const pods = await boundPods(ns, 6);
    const perNode = new Map<string, number>();
    for (const p of pods) perNode.set(p.nodeName, (perNode.get(p.nodeName) ?? 0) + 1);
    expect([...perNode.keys()].sort()).toEqual(allowed);
    expect([...perNode.values()]).toEqual([2, 2, 2]);

    // Every placement is in the history, decided by kube-scheduler + nodeload, on the node it bound.
    const res = await graphql<{ schedulingHistory: { items: HistoryItem[] } }>(
      'query($ns: String) { schedulingHistory(namespace: $ns, first: 50) { items { pod result engine node message } } }',
      { ns },
    );
    const scheduled = res.data?.schedulingHistory.items.filter((d) => d.result === 'SCHEDULED') ?? [];
    expect(scheduled.map((d) => d.pod).sort()).toEqual(pods.map((p) => p.name).sort());
    for (const d of scheduled) {
      expect(d.engine).toBe('EXTENDER');
      expect(d.node).toBe(pods.find((p) => p.name === d.pod)?.nodeName);
    }
    // Every binding went through the extender: none is counted as placed without the rules.
    const metrics = await (await fetch(`http://127.0.0.1:${gateway?.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/^nodeload_extender_bypassed_pods_total 0$/m);
    expect(metrics).toMatch(
      /^nodeload_extender_requests_total\{verb="bind",result="success"\} ([6-9]|\d\d+)$/m,
    );
  }, 300_000);

  it('names the rule and its threshold in kube-scheduler’s FailedScheduling, and streams the decision live', async () => {
    const ns = await withNamespace('ext-fail');
    const { pool } = await nodePool(2);
    await createRule(ns, 'big', { maxCPU: 50, podSelector: { matchLabels: { app: 'big' } } });
    const live = await sseSubscribe<{ schedulingEvents: HistoryItem & { id: string } }>(
      globalThis,
      `http://127.0.0.1:${gateway?.httpPort}/graphql`,
      'subscription($ns: String) { schedulingEvents(namespace: $ns) { id pod result engine node message } }',
      { ns },
    );
    onTestFinished(() => live.close());
    // 3 of 4 cores fit the nodes (NodeResourcesFit passes) but make 75 % > the rule's 50 %.
    await createPods(ns, [podBody('huge', { pool, cpu: '3', app: 'big' })]);
    const condition = await waitFor(
      'PodScheduled=False naming the rule',
      async () => {
        const pod = await coreApi().readNamespacedPod({ namespace: ns, name: 'huge' });
        const c = pod.status?.conditions?.find((x) => x.type === 'PodScheduled');
        return c?.status === 'False' && c.message?.includes('exceed rule') ? c : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(condition.reason).toBe('Unschedulable');
    expect(condition.message).toContain('2 node(s) exceed rule big cpu 50%');
    const event = await waitFor('a FailedScheduling Event', async () => {
      const events = await kubeConfig().makeApiClient(CoreV1Api).listNamespacedEvent({
        namespace: ns,
        fieldSelector: 'involvedObject.name=huge,reason=FailedScheduling',
      });
      return events.items.find((e) => e.message?.includes('exceed rule big cpu 50%'));
    });
    expect(event.message).toMatch(/^0\/\d+ nodes are available: .*2 node\(s\) exceed rule big cpu 50%/);

    const first = (await live.next()).data?.schedulingEvents;
    expect(first).toMatchObject({
      pod: 'huge',
      result: 'UNSCHEDULABLE',
      engine: 'EXTENDER',
      node: null,
      message: '0/2 nodes are available: 2 node(s) exceed rule big cpu 50%.',
    });
    // decision(id) explains it with the numbers behind the refusal.
    const detail = await graphql<{
      decision: {
        candidates: {
          node: string;
          verdict: string;
          load: { cpuPercentAfter: number };
          reasons: { detail: string }[];
        }[];
      };
    }>(
      'query($id: ID!) { decision(id: $id) { candidates { node verdict load { cpuPercentAfter } reasons { detail } } } }',
      {
        id: first?.id,
      },
    );
    const candidates = detail.data?.decision.candidates ?? [];
    expect(candidates).toHaveLength(2);
    for (const c of candidates) {
      expect(c.verdict).toBe('INFEASIBLE');
      expect(c.load.cpuPercentAfter).toBe(75);
      expect(c.reasons[0]?.detail).toMatch(/^rule big: /);
    }
  }, 300_000);

  it('keeps kube-scheduler’s own plugins at work: required anti-affinity spreads covered pods', async () => {
    const ns = await withNamespace('ext-anti');
    const { pool, names } = await nodePool(3);
    await createRule(ns, 'spread', { maxCPU: 90, podSelector: { matchLabels: { app: 'spread' } } });
    const antiAffinity = {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: { matchLabels: { app: 'spread' } }, topologyKey: 'kubernetes.io/hostname' },
          ],
        },
      },
    };
    await createPods(
      ns,
      Array.from({ length: 3 }, (_, i) =>
        podBody(`s-${i}`, { pool, cpu: '100m', app: 'spread', extra: antiAffinity }),
      ),
    );
    const pods = await boundPods(ns, 3);
    expect(pods.map((p) => p.nodeName).sort()).toEqual(names);
  }, 300_000);

  it('keeps kube-scheduler’s volume binding at work: a WaitForFirstConsumer claim follows its local PV', async () => {
    const ns = await withNamespace('ext-vol');
    const { pool, names } = await nodePool(3);
    const pvNode = names[1] as string;
    await createRule(ns, 'vol', { maxCPU: 90 });
    const storage = kubeConfig().makeApiClient(StorageV1Api);
    const className = uniqueName('ext-wffc');
    const pvName = uniqueName('ext-pv');
    await storage.createStorageClass({
      body: {
        metadata: { name: className },
        provisioner: 'kubernetes.io/no-provisioner',
        volumeBindingMode: 'WaitForFirstConsumer',
      },
    });
    onTestFinished(async () => {
      await coreApi()
        .deletePersistentVolume({ name: pvName })
        .catch(() => undefined);
      await storage.deleteStorageClass({ name: className }).catch(() => undefined);
    });
    await coreApi().createPersistentVolume({
      body: {
        metadata: { name: pvName },
        spec: {
          storageClassName: className,
          capacity: { storage: '5Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          hostPath: { path: `/tmp/${pvName}` },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [pvNode] }] },
              ],
            },
          },
        },
      },
    });
    await coreApi().createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'data' },
        spec: {
          storageClassName: className,
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    await createPods(ns, [
      podBody('db', {
        pool,
        cpu: '100m',
        app: 'db',
        extra: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] },
      }),
    ]);
    const [db] = await boundPods(ns, 1);
    expect(db?.nodeName).toBe(pvNode);
    const claim = await waitFor('the claim Bound to the PV', async () => {
      const c = await coreApi().readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'data' });
      return c.status?.phase === 'Bound' ? c : undefined;
    });
    expect(claim.spec?.volumeName).toBe(pvName);
    // nodeload's bind verb made the binding: the decision is in its history as an extender decision.
    const history = await graphql<{ schedulingHistory: { items: HistoryItem[] } }>(
      'query($ns: String) { schedulingHistory(namespace: $ns, first: 10) { items { pod result engine node message } } }',
      { ns },
    );
    expect(history.data?.schedulingHistory.items.map((d) => [d.pod, d.engine, d.node])).toEqual([
      ['db', 'EXTENDER', pvNode],
    ]);
  }, 300_000);

  it('refuses callers without a client certificate of the configured CA', async () => {
    const call = (client?: { cert: string; key: string }) =>
      new Promise<number>((resolve, reject) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            port: httpsPort,
            path: '/extender/filter',
            method: 'POST',
            ca: readPki('ca.crt'),
            ...(client ? { cert: readPki(client.cert), key: readPki(client.key) } : {}),
            headers: { 'content-type': 'application/json' },
            agent: false,
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
    expect(await call()).toBe(401);
    expect(await call({ cert: 'front-proxy-client.crt', key: 'front-proxy-client.key' })).toBe(403);
    expect(await call({ cert: 'admin.crt', key: 'admin.key' })).toBe(400);
  });

  it('goes on scheduling without the gateway (ignorable): kube-scheduler’s plugins alone', async () => {
    const ns = await withNamespace('ext-down');
    const { pool, names } = await nodePool(1);
    // With the gateway up this pod could never run here: the rule allows no node of the pool.
    await createRule(ns, 'nowhere', {
      allowedNodes: ['elsewhere'],
      podSelector: { matchLabels: { app: 'down' } },
    });
    await gateway?.stop();
    gateway = undefined;
    await createPods(ns, [podBody('survivor', { pool, cpu: '100m', app: 'down' })]);
    const [pod] = await boundPods(ns, 1);
    expect(pod?.nodeName).toBe(names[0]);
  }, 300_000);
});

function readPki(file: string): Buffer {
  return readFileSync(pkiPath(file));
}

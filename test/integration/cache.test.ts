// The shared cluster cache and the LoadTracker against a real API server: initial sync, add/update/delete,
// a watch cut while objects change (nothing may be lost), and a kube-apiserver restart (private cluster).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1CustomResourceDefinition,
  type V1Pod,
} from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFailed, onTestFinished } from 'vitest';
import { ClusterCache, type ClusterCacheOptions } from '../../src/cluster/cache.js';
import { type WatchFn, watchFnFor } from '../../src/cluster/informer.js';
import { type PodInfo, podKey } from '../../src/cluster/model.js';
import type { Change } from '../../src/cluster/view.js';
import { LoadTracker } from '../../src/load/tracker.js';
import { CRD_NAME, loadCrdManifest } from '../../src/rules/crd.js';
import { NODE_LOAD_RULE_KIND } from '../../src/rules/kind.js';
import type { NodeLoadRule } from '../../src/rules/types.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { startCluster, stopCluster } from '../cluster/controlplane.js';
import { createFakeNodes, deleteFakeNodes, isApiException } from '../cluster/nodes.js';
import { killApiServer, startApiServer } from '../cluster/restart.js';
import { kubeConfig, uniqueName, waitFor, withNamespace } from './context.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Installs the NodeLoadRule CRD (the gateway does this at start; no gateway runs here). */
async function ensureCrd(kc: KubeConfig): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  try {
    await api.createCustomResourceDefinition({
      body: loadCrdManifest() as unknown as V1CustomResourceDefinition,
    });
  } catch (err) {
    if (!isApiException(err, 409)) throw err;
  }
  await waitFor(`CRD ${CRD_NAME} Established`, async () => {
    const crd = await api.readCustomResourceDefinition({ name: CRD_NAME });
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
}

/** A started cache + tracker whose logs are printed only if the test fails. */
function startCache(kc: KubeConfig, extra: Partial<ClusterCacheOptions<NodeLoadRule>> = {}) {
  const lines: string[] = [];
  const log = pino({ level: 'debug' }, { write: (l: string) => lines.push(l) });
  onTestFailed(() => {
    process.stderr.write(`--- cache log ---\n${lines.join('')}`);
  });
  const cache = new ClusterCache({ kubeConfig: kc, log, rules: NODE_LOAD_RULE_KIND, ...extra });
  const tracker = new LoadTracker({ cache, refreshSeconds: 0 });
  cache.start();
  tracker.start();
  onTestFinished(() => {
    tracker.stop();
    cache.stop();
  });
  return { cache, tracker };
}

function podBody(
  name: string,
  opts: { cpu?: string; node?: string; labels?: Record<string, string> } = {},
): V1Pod {
  return {
    metadata: { name, labels: opts.labels ?? { app: name } },
    spec: {
      schedulerName: 'nodeload-scheduler',
      ...(opts.node ? { nodeName: opts.node } : {}),
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: opts.cpu ?? '1', memory: '1Gi' } },
        },
      ],
    },
  };
}

/** True when the cache holds exactly the server's pods of the namespace, at the server's resourceVersions. */
async function podsMatchServer(
  cache: ClusterCache<NodeLoadRule>,
  core: CoreV1Api,
  namespace: string,
): Promise<boolean> {
  const list = await core.listNamespacedPod({ namespace });
  const server = new Map(
    list.items.map((p) => [`${namespace}/${p.metadata?.name}`, p.metadata?.resourceVersion]),
  );
  const cached = [...cache.pods.values()].filter((p) => p.namespace === namespace);
  return cached.length === server.size && cached.every((p) => server.get(podKey(p)) === p.resourceVersion);
}

/**
 * Wraps the real watch so a test can cut every watch connection (as a network failure would) and refuse
 * new ones until restore().
 */
class WatchCutter {
  private open = true;
  private readonly live = new Set<{ abort(): void }>();

  constructor(private readonly real: WatchFn) {}

  readonly watch: WatchFn = async (path, query, onEvent, onDone) => {
    if (!this.open) {
      setTimeout(
        () =>
          onDone(Object.assign(new Error('connect ECONNREFUSED (cut by test)'), { code: 'ECONNREFUSED' })),
        10,
      );
      return { abort() {} };
    }
    let request: { abort(): void } | undefined;
    request = await this.real(path, query, onEvent, (err) => {
      if (request) this.live.delete(request);
      onDone(err);
    });
    this.live.add(request);
    return request;
  };

  cut(): void {
    this.open = false;
    for (const request of this.live) request.abort();
    this.live.clear();
  }

  restore(): void {
    this.open = true;
  }
}

describe('ClusterCache on the shared cluster', () => {
  beforeAll(async () => {
    await ensureCrd(kubeConfig());
  });

  it('syncs, follows node/pod/rule add, update and delete, and the LoadTracker sees a bind', async () => {
    const kc = kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const namespace = await withNamespace('it-cache');
    const node = uniqueName('it-cache-node');
    onTestFinished(async () => {
      await deleteFakeNodes(kc, [node]);
    });

    const { cache, tracker } = startCache(kc);
    const nodeChanges: Change<unknown>['type'][] = [];
    cache.bus.on('node', (c) => {
      if ((c.new ?? c.old)?.name === node) nodeChanges.push(c.type);
    });
    await cache.ready();
    expect(cache.isReady()).toBe(true);
    expect(cache.metricsServed).toBe(false); // no metrics-server in the test cluster
    const stats = cache.informerStats();
    expect(stats.pods?.lists).toBe(1);

    await createFakeNodes(kc, [{ name: node, cpu: 4, memory: '8Gi', pods: 20, labels: { it: 'cache' } }]);
    const info = await waitFor(`node ${node} in the cache`, () => cache.nodes.get(node));
    expect(info.allocatable).toEqual({ cpuMilli: 4000, memoryBytes: 8 * 2 ** 30, pods: 20 });
    await waitFor('the tracker has a load for the node', () => tracker.loadOf(node));
    expect(tracker.loadOf(node)).toMatchObject({ requested: { cpuMilli: 0 }, source: 'requests' });

    await core.createNamespacedPod({ namespace, body: podBody('web') });
    const key = `${namespace}/web`;
    await waitFor('pod in the cache', () => cache.pods.get(key));
    expect([...cache.unscheduledPods()].map(podKey)).toContain(key);

    await core.patchNamespacedPod(
      { name: 'web', namespace, body: { metadata: { labels: { tier: 'front' } } } },
      mergePatch,
    );
    await waitFor('pod label update in the cache', () => cache.pods.get(key)?.labels['tier'] === 'front');

    await core.createNamespacedPodBinding({
      name: 'web',
      namespace,
      body: {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'web' },
        target: { apiVersion: 'v1', kind: 'Node', name: node },
      },
    });
    await waitFor('the load counts the bound pod', () => tracker.loadOf(node)?.requested.cpuMilli === 1000);
    expect(tracker.loadOf(node)).toMatchObject({ podCount: 1, cpuPercent: 25 });
    expect(cache.podsOnNode(node).has(key)).toBe(true);
    expect([...cache.unscheduledPods()].map(podKey)).not.toContain(key);

    await custom.createNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace,
      body: {
        apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
        kind: 'NodeLoadRule',
        metadata: { name: 'r1' },
        spec: { maxCPU: 70 },
      },
    });
    const rule = await waitFor('rule in the cache', () => cache.rules.get(`${namespace}/r1`));
    expect(rule.rule.spec).toMatchObject({ maxCPU: 70, maxMemory: 80 });
    expect(rule.raw).toMatchObject({ kind: 'NodeLoadRule', spec: { maxCPU: 70 } });
    await custom.deleteNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace,
      name: 'r1',
    });
    await waitFor('rule gone from the cache', () => !cache.rules.has(`${namespace}/r1`));

    await core.deleteNamespacedPod({ name: 'web', namespace, gracePeriodSeconds: 0 });
    await waitFor('pod gone from the cache', () => !cache.pods.has(key));
    await waitFor('the load no longer counts it', () => tracker.loadOf(node)?.requested.cpuMilli === 0);

    await deleteFakeNodes(kc, [node]);
    await waitFor('node gone from the cache', () => !cache.nodes.has(node));
    await waitFor('the load is gone', () => tracker.loadOf(node) === undefined);
    expect(nodeChanges[0]).toBe('add');
    expect(nodeChanges[nodeChanges.length - 1]).toBe('delete');
  });

  it('loses no change made while its watch connections are cut', async () => {
    const kc = kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const namespace = await withNamespace('it-cache-cut');
    const cutter = new WatchCutter(watchFnFor(kc));
    const { cache } = startCache(kc, { watch: cutter.watch });
    const labelsSeen: string[] = [];
    cache.bus.on('pod', (c) => {
      const v = c.new?.labels['v'];
      if (c.new?.namespace === namespace && c.new.name === 'a' && v) labelsSeen.push(v);
    });
    await cache.ready();
    await core.createNamespacedPod({ namespace, body: podBody('a') });
    await core.createNamespacedPod({ namespace, body: podBody('b') });
    await waitFor(
      'a and b in the cache',
      () => cache.pods.has(`${namespace}/a`) && cache.pods.has(`${namespace}/b`),
    );
    const before = cache.informerStats().pods;
    const listsBefore = before?.lists ?? 0;
    const restartsBefore = before?.restarts ?? 0;

    cutter.cut();
    await waitFor(
      'the pods informer noticed the cut',
      () => (cache.informerStats().pods?.restarts ?? 0) > restartsBefore,
    );
    for (const v of ['1', '2', '3']) {
      await core.patchNamespacedPod(
        { name: 'a', namespace, body: { metadata: { labels: { v } } } },
        mergePatch,
      );
    }
    await core.deleteNamespacedPod({ name: 'b', namespace, gracePeriodSeconds: 0 });
    await core.createNamespacedPod({ namespace, body: podBody('c') });
    // The cut is real: none of it has reached the cache.
    expect(cache.pods.get(`${namespace}/a`)?.labels['v']).toBeUndefined();
    expect(cache.pods.has(`${namespace}/b`)).toBe(true);
    expect(cache.pods.has(`${namespace}/c`)).toBe(false);

    cutter.restore();
    await waitFor('the cache equals the server again', () => podsMatchServer(cache, core, namespace), {
      timeoutMs: 60_000,
    });
    expect(cache.pods.get(`${namespace}/a`)?.labels['v']).toBe('3');
    expect(cache.pods.has(`${namespace}/b`)).toBe(false);
    expect(cache.pods.has(`${namespace}/c`)).toBe(true);
    // Resumed from its resourceVersion: every intermediate update replayed, no relist needed.
    expect(labelsSeen).toEqual(['1', '2', '3']);
    expect(cache.informerStats().pods?.lists).toBe(listsBefore);
  });
});

describe('ClusterCache across a kube-apiserver restart (private cluster)', () => {
  let dir = '';
  let kc: KubeConfig;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'nodeload-it-restart-'));
    const cluster = await startCluster({
      dir,
      binDir: inject('binDir'),
      log: (line) => process.stderr.write(`[cache.test] ${line}\n`),
    });
    kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    await ensureCrd(kc);
  }, 240_000);

  afterAll(async () => {
    if (!dir) return;
    await stopCluster(dir, { graceMs: 5000 });
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('converges after kube-apiserver is killed and started again', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const namespace = 'default';
    const [n1, n2] = ['restart-n1', 'restart-n2'];
    await createFakeNodes(kc, [{ name: n1, cpu: 4, memory: '8Gi', pods: 20 }]);
    await core.createNamespacedPod({ namespace, body: podBody('p1', { node: n1 }) });

    const { cache, tracker } = startCache(kc);
    await cache.ready();
    await waitFor('p1 counted on n1', () => tracker.loadOf(n1)?.requested.cpuMilli === 1000);
    const restartsBefore = cache.informerStats().pods?.restarts ?? 0;

    await killApiServer(dir);
    await waitFor(
      'the informers noticed the API server is gone',
      () => (cache.informerStats().pods?.restarts ?? 0) > restartsBefore,
    );
    await startApiServer(dir);

    await createFakeNodes(kc, [{ name: n2, cpu: 8, memory: '16Gi', pods: 20 }]);
    await core.patchNode({ name: n1, body: { metadata: { labels: { restarted: 'yes' } } } }, mergePatch);
    await core.createNamespacedPod({ namespace, body: podBody('p2', { node: n1, cpu: '2' }) });
    await core.deleteNamespacedPod({ name: 'p1', namespace, gracePeriodSeconds: 0 });

    await waitFor('the cache converges with the server', () => podsMatchServer(cache, core, namespace), {
      timeoutMs: 90_000,
    });
    await waitFor('nodes converge', async () => {
      const list = await core.listNode({});
      return (
        list.items.length === cache.nodes.size &&
        list.items.every(
          (n) => cache.nodes.get(n.metadata?.name ?? '')?.resourceVersion === n.metadata?.resourceVersion,
        )
      );
    });
    expect(cache.nodes.get(n1)?.labels['restarted']).toBe('yes');
    expect(cache.nodes.get(n2)?.allocatable.cpuMilli).toBe(8000);
    await waitFor('the load follows', () => tracker.loadOf(n1)?.requested.cpuMilli === 2000);
    expect([...cache.podsOnNode(n1).values()].map((p: PodInfo) => p.name)).toEqual(['p2']);
    expect(cache.isReady()).toBe(true);
  }, 240_000);
});

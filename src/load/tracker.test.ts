import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { idleInformerStats } from '../../test/kit/objects.js';
import { ClusterCache, type InformerFactory, type ResourceName } from '../cluster/cache.js';
import { toPodInfo } from '../cluster/convert.js';
import type { InformerHandlers } from '../cluster/informer.js';
import type { KubeObject } from '../cluster/kube-object.js';
import { PLAIN_RULE_KIND } from '../cluster/testing.js';
import { type LoadChange, LoadTracker } from './tracker.js';
import type { LoadOptions } from './types.js';

const NOW = Date.parse('2026-11-29T10:00:30Z');
const GI = 2 ** 30;

interface Fake {
  h: Required<InformerHandlers<KubeObject>>;
  sync(): void;
}

/** A real ClusterCache whose informers are replaced by their handlers, which the tests call. */
async function setup(opts: { metricsServed?: boolean; options?: LoadTrackerOptionsArg } = {}) {
  const fakes = new Map<ResourceName, Fake>();
  const factory: InformerFactory = (spec, h) => {
    let resolve!: () => void;
    const synced = new Promise<void>((r) => {
      resolve = r;
    });
    fakes.set(spec.name, { h: h as Required<InformerHandlers<KubeObject>>, sync: () => resolve() });
    return { start() {}, stop() {}, synced, hasSynced: () => false, stats: idleInformerStats() };
  };
  const served = { value: opts.metricsServed ?? false };
  const cache = new ClusterCache({
    rules: PLAIN_RULE_KIND,
    kubeConfig: new KubeConfig(),
    log: pino({ level: 'silent' }),
    informerFactory: factory,
    discoverMetrics: async () => served.value,
  });
  cache.start();
  await flush();
  if (served.value) {
    fakes.get('nodemetrics')?.sync();
    await flush();
  }
  const tracker = new LoadTracker({ cache, now: () => NOW, refreshSeconds: 0, options: opts.options });
  const changes: LoadChange[] = [];
  tracker.bus.on('load', (c) => {
    changes.push(c);
  });
  tracker.start();
  const h = (name: ResourceName) => (fakes.get(name) as Fake).h;
  const sync = (name: ResourceName) => (fakes.get(name) as Fake).sync();
  return { cache, tracker, changes, served, nodes: h('nodes'), pods: h('pods'), h, sync };
}

const flush = () => new Promise((r) => setImmediate(r));

type LoadTrackerOptionsArg = ConstructorParameters<typeof LoadTracker>[0]['options'];

function nodeObj(name: string, rv = '1'): KubeObject {
  return {
    metadata: { name, resourceVersion: rv },
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}

function podObj(name: string, rv: string, node?: string, cpu = '1', phase = 'Running'): KubeObject {
  return {
    metadata: { namespace: 'default', name, uid: `uid-${name}`, resourceVersion: rv },
    spec: {
      ...(node ? { nodeName: node } : {}),
      containers: [{ name: 'c', resources: { requests: { cpu, memory: '1Gi' } } }],
    },
    status: { phase },
  };
}

const pending = (name: string, cpu = '1') => toPodInfo(podObj(name, '1', undefined, cpu, 'Pending'));

describe('LoadTracker', () => {
  it('computes a requests-based load per node and recomputes only the node a pod lands on', async () => {
    const { tracker, nodes, pods, changes } = await setup();
    nodes.add(nodeObj('n1'));
    nodes.add(nodeObj('n2'));
    tracker.flush();
    expect(tracker.loadOf('n1')).toMatchObject({
      requested: { cpuMilli: 0 },
      cpuPercent: 0,
      source: 'requests',
    });
    changes.length = 0;
    pods.add(podObj('a', '1', 'n1', '2'));
    tracker.flush();
    expect(tracker.loadOf('n1')).toMatchObject({
      requested: { cpuMilli: 2000, memoryBytes: GI },
      cpuPercent: 50,
      podCount: 1,
    });
    expect(changes.map((c) => c.node)).toEqual(['n1']);
    expect(changes[0]?.previous?.cpuPercent).toBe(0);
  });

  it('loadOf applies pending changes for the node before answering', async () => {
    const { tracker, nodes, pods } = await setup();
    nodes.add(nodeObj('n1'));
    pods.add(podObj('a', '1', 'n1', '1'));
    // No flush: the coalesced recompute has not run yet.
    expect(tracker.loadOf('n1')?.cpuPercent).toBe(25);
  });

  it('coalesces a burst of pod events into one change per node', async () => {
    const { tracker, nodes, pods, changes } = await setup();
    nodes.add(nodeObj('n1'));
    tracker.flush();
    changes.length = 0;
    for (let i = 0; i < 20; i++) pods.add(podObj(`p${i}`, '1', 'n1', '100m'));
    await new Promise((r) => setImmediate(r));
    expect(changes).toHaveLength(1);
    expect(changes[0]?.load?.requested.cpuMilli).toBe(2000);
  });

  it('emits nothing when a pod update does not change the figure', async () => {
    const { tracker, nodes, pods, changes } = await setup();
    nodes.add(nodeObj('n1'));
    pods.add(podObj('a', '1', 'n1'));
    tracker.flush();
    changes.length = 0;
    pods.update(podObj('a', '2', 'n1'), podObj('a', '1', 'n1'));
    tracker.flush();
    expect(changes).toEqual([]);
  });

  it('stops counting a pod when it finishes or is deleted, and drops a deleted node', async () => {
    const { tracker, nodes, pods, changes } = await setup();
    nodes.add(nodeObj('n1'));
    pods.add(podObj('a', '1', 'n1', '1'));
    pods.add(podObj('b', '1', 'n1', '1'));
    tracker.flush();
    pods.update(podObj('a', '2', 'n1', '1', 'Succeeded'), podObj('a', '1', 'n1'));
    pods.delete(podObj('b', '3', 'n1'));
    expect(tracker.loadOf('n1')?.requested.cpuMilli).toBe(0);
    nodes.delete(nodeObj('n1', '2'));
    tracker.flush();
    expect(tracker.loadOf('n1')).toBeUndefined();
    expect(changes[changes.length - 1]).toMatchObject({ node: 'n1', load: undefined });
    expect(tracker.all().size).toBe(0);
  });

  it('assume() counts a pod against its node at once; forget() undoes it', async () => {
    const { tracker, nodes, changes } = await setup();
    nodes.add(nodeObj('n1'));
    tracker.flush();
    changes.length = 0;
    tracker.assume(pending('x', '1'), 'n1');
    expect(tracker.loadOf('n1')).toMatchObject({ requested: { cpuMilli: 1000 }, podCount: 1 });
    expect(tracker.isAssumed('default/x')).toBe(true);
    expect(changes).toHaveLength(1);
    tracker.forget('default/x');
    expect(tracker.loadOf('n1')).toMatchObject({ requested: { cpuMilli: 0 }, podCount: 0 });
    expect(tracker.isAssumed('default/x')).toBe(false);
    tracker.forget('default/x');
  });

  it('drops the assumption when the informer shows the pod bound, without double counting', async () => {
    const { tracker, nodes, pods } = await setup();
    nodes.add(nodeObj('n1'));
    pods.add(podObj('x', '1', undefined, '1', 'Pending'));
    tracker.assume(pending('x', '1'), 'n1');
    expect(tracker.loadOf('n1')?.requested.cpuMilli).toBe(1000);
    pods.update(podObj('x', '2', 'n1', '1', 'Pending'), podObj('x', '1'));
    expect(tracker.isAssumed('default/x')).toBe(false);
    expect(tracker.loadOf('n1')?.requested.cpuMilli).toBe(1000);
    expect(tracker.loadOf('n1')?.podCount).toBe(1);
  });

  it('drops the assumption when the pod is bound elsewhere or deleted', async () => {
    const { tracker, nodes, pods } = await setup();
    nodes.add(nodeObj('n1'));
    nodes.add(nodeObj('n2'));
    pods.add(podObj('x', '1'));
    pods.add(podObj('y', '1'));
    tracker.assume(pending('x'), 'n1');
    tracker.assume(pending('y'), 'n1');
    expect(tracker.loadOf('n1')?.requested.cpuMilli).toBe(2000);
    pods.update(podObj('x', '2', 'n2'), podObj('x', '1'));
    pods.delete(podObj('y', '3'));
    expect(tracker.assumedCount()).toBe(0);
    expect(tracker.loadOf('n1')?.requested.cpuMilli).toBe(0);
    expect(tracker.loadOf('n2')?.requested.cpuMilli).toBe(1000);
  });

  it('keeps the assumption through unrelated updates of the still-unbound pod', async () => {
    const { tracker, nodes, pods } = await setup();
    nodes.add(nodeObj('n1'));
    pods.add(podObj('x', '1', undefined, '1', 'Pending'));
    tracker.assume(pending('x'), 'n1');
    pods.update(podObj('x', '2', undefined, '1', 'Pending'), podObj('x', '1'));
    expect(tracker.isAssumed('default/x')).toBe(true);
    expect(tracker.loadOf('n1')?.requested.cpuMilli).toBe(1000);
  });

  it('re-assuming a pod on another node moves its weight', async () => {
    const { tracker, nodes } = await setup();
    nodes.add(nodeObj('n1'));
    nodes.add(nodeObj('n2'));
    tracker.assume(pending('x'), 'n1');
    tracker.assume(pending('x'), 'n2');
    expect(tracker.loadOf('n1')?.requested.cpuMilli).toBe(0);
    expect(tracker.loadOf('n2')?.requested.cpuMilli).toBe(1000);
    expect(tracker.assumedNode('default/x')).toBe('n2');
  });

  it('does not assume a pod the cache already shows bound', async () => {
    const { tracker, nodes, pods } = await setup();
    nodes.add(nodeObj('n1'));
    pods.add(podObj('x', '1', 'n1'));
    tracker.assume(toPodInfo(podObj('x', '1', 'n1')), 'n1');
    expect(tracker.isAssumed('default/x')).toBe(false);
    expect(tracker.loadOf('n1')?.requested.cpuMilli).toBe(1000);
  });

  it('uses fresh metrics when served, and falls back to requests (flagged stale) when the sample is old', async () => {
    const { cache, tracker, nodes, h, changes } = await setup({ metricsServed: true });
    expect(cache.metricsServed).toBe(true);
    const metrics = h('nodemetrics');
    nodes.add(nodeObj('n1'));
    metrics.add(metricsObj('2026-11-29T10:00:00Z'));
    tracker.flush();
    expect(tracker.loadOf('n1')).toMatchObject({ source: 'metrics', cpuPercent: 25, metricsStale: false });
    changes.length = 0;
    // Five minutes old at NOW (staleness 180 s) → requests-based and flagged.
    metrics.update(metricsObj('2026-11-29T09:55:00Z'), metricsObj('2026-11-29T10:00:00Z'));
    tracker.flush();
    expect(tracker.loadOf('n1')).toMatchObject({ source: 'requests', metricsStale: true, cpuPercent: 0 });
    expect(changes).toHaveLength(1);
  });

  it('takes metricsServed from the cache and custom options from the caller', async () => {
    const custom: LoadOptions = {
      metricsServed: true,
      metricsStalenessSeconds: 60,
      stalePolicy: 'fail-closed',
      estimate: { cpuFactor: 1, memoryFactor: 1, defaultCpuMilli: 100, defaultMemoryBytes: 1 },
    };
    const viaFunction = await setup({ options: () => custom });
    viaFunction.nodes.add(nodeObj('n1'));
    // Served, no sample, fail-closed → unavailable.
    expect(viaFunction.tracker.loadOf('n1')).toMatchObject({ unavailable: true });
    const viaPartial = await setup({ options: { stalePolicy: 'fail-closed' } });
    viaPartial.nodes.add(nodeObj('n1'));
    // The cache says metrics are not served, so nothing is stale or unavailable.
    expect(viaPartial.tracker.loadOf('n1')).toMatchObject({ unavailable: false, metricsStale: false });
    expect(viaPartial.tracker.options.metricsServed).toBe(false);
  });

  it('recomputes every node when metrics availability flips', async () => {
    const { cache, tracker, nodes, changes, served, sync } = await setup({
      options: { stalePolicy: 'fail-closed' },
    });
    nodes.add(nodeObj('n1'));
    nodes.add(nodeObj('n2'));
    tracker.flush();
    changes.length = 0;
    served.value = true;
    const check = cache.checkMetricsServed();
    await flush();
    sync('nodemetrics');
    await check;
    // Served but no samples yet, fail-closed → both loads unknown.
    expect(changes.map((c) => [c.node, c.load?.unavailable])).toEqual([
      ['n1', true],
      ['n2', true],
    ]);
  });

  it('stop() unsubscribes from the cache', async () => {
    const { tracker, nodes } = await setup();
    tracker.stop();
    nodes.add(nodeObj('n1'));
    tracker.flush();
    expect(tracker.all().size).toBe(0);
  });
});

function metricsObj(timestamp: string): KubeObject {
  return { metadata: { name: 'n1' }, timestamp, window: '20s', usage: { cpu: '1', memory: '2Gi' } };
}

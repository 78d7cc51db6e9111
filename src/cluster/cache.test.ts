import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ClusterCache,
  type InformerFactory,
  type InformerLike,
  type InformerSpec,
  type ResourceName,
} from './cache.js';
import type { InformerHandlers } from './informer.js';
import type { KubeObject } from './kube-object.js';
import { PLAIN_RULE_KIND } from './testing.js';
import type { Change, ClusterTopics } from './view.js';

interface FakeInformer extends InformerLike {
  spec: InformerSpec;
  h: Required<InformerHandlers<KubeObject>>;
  started: boolean;
  stopped: boolean;
  sync(): void;
}

function fakeFactory() {
  const made: FakeInformer[] = [];
  const factory: InformerFactory = (spec, handlers) => {
    let resolve!: () => void;
    const synced = new Promise<void>((r) => {
      resolve = r;
    });
    let isSynced = false;
    const fake: FakeInformer = {
      spec,
      h: handlers as Required<InformerHandlers<KubeObject>>,
      started: false,
      stopped: false,
      synced,
      hasSynced: () => isSynced,
      stats: {
        lists: 0,
        watches: 0,
        restarts: 0,
        silentRestarts: 0,
        expired: 0,
        watchTimeouts: 0,
        events: { added: 0, modified: 0, deleted: 0, bookmark: 0, error: 0 },
      },
      start() {
        this.started = true;
      },
      stop() {
        this.stopped = true;
      },
      sync() {
        isSynced = true;
        resolve();
      },
    };
    made.push(fake);
    return fake;
  };
  const get = (name: ResourceName) => {
    const all = made.filter((m) => m.spec.name === name);
    return all[all.length - 1] as FakeInformer;
  };
  return { factory, made, get };
}

function setup(opts: { metricsServed?: () => Promise<boolean> } = {}) {
  const f = fakeFactory();
  const cache = new ClusterCache({
    rules: PLAIN_RULE_KIND,
    kubeConfig: new KubeConfig(),
    log: pino({ level: 'silent' }),
    informerFactory: f.factory,
    discoverMetrics: opts.metricsServed ?? (async () => false),
  });
  const events: Array<[keyof ClusterTopics, unknown]> = [];
  for (const topic of ['node', 'pod', 'rule', 'metrics', 'metricsServed', 'synced'] as const) {
    cache.bus.on(topic, (p: unknown) => {
      events.push([topic, p]);
    });
  }
  cache.start();
  return { cache, ...f, events };
}

const flush = () => new Promise((r) => setImmediate(r));

function nodeObj(name: string, rv: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, resourceVersion: rv, uid: `uid-${name}`, labels: { zone: 'a' } },
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
    ...extra,
  };
}

function podObj(
  name: string,
  rv: string,
  opts: { node?: string; phase?: string; deleting?: boolean; cpu?: string; ns?: string } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace: opts.ns ?? 'default',
      name,
      uid: `uid-${name}`,
      resourceVersion: rv,
      ...(opts.deleting ? { deletionTimestamp: '2026-11-29T10:00:00Z' } : {}),
    },
    spec: {
      ...(opts.node ? { nodeName: opts.node } : {}),
      containers: [{ name: 'c', resources: { requests: { cpu: opts.cpu ?? '500m', memory: '256Mi' } } }],
    },
    status: { phase: opts.phase ?? 'Pending' },
  };
}

function ruleObj(name: string, rv: string, spec: Record<string, unknown> = {}, status?: unknown): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'NodeLoadRule',
    metadata: { namespace: 'team', name, uid: `uid-${name}`, resourceVersion: rv, generation: 1 },
    spec,
    ...(status ? { status } : {}),
  };
}

function metricsObj(name: string, timestamp: string, cpu = '1', memory = '1Gi'): KubeObject {
  return { metadata: { name }, timestamp, window: '20s', usage: { cpu, memory } };
}

describe('ClusterCache', () => {
  it('starts one informer per kind on the expected paths', () => {
    const { made } = setup();
    expect(made.map((m) => [m.spec.name, m.spec.path, m.started])).toEqual([
      ['nodes', '/api/v1/nodes', true],
      ['pods', '/api/v1/pods', true],
      ['namespaces', '/api/v1/namespaces', true],
      ['nodeloadrules', '/apis/example.com/v1/nodeloadrules', true],
    ]);
  });

  it('converts nodes and emits add, update and delete; a same-resourceVersion update is a no-op', () => {
    const { cache, get, events } = setup();
    const nodes = get('nodes');
    nodes.h.add(nodeObj('n1', '1'));
    nodes.h.update(nodeObj('n1', '1'), nodeObj('n1', '1'));
    nodes.h.update(nodeObj('n1', '2', { spec: { unschedulable: true } }), nodeObj('n1', '1'));
    expect(cache.nodes.get('n1')).toMatchObject({
      name: 'n1',
      resourceVersion: '2',
      unschedulable: true,
      ready: true,
      allocatable: { cpuMilli: 4000, memoryBytes: 8 * 2 ** 30, pods: 110 },
    });
    nodes.h.delete(nodeObj('n1', '3'));
    nodes.h.delete(nodeObj('n1', '3'));
    expect(cache.nodes.has('n1')).toBe(false);
    const changes = events
      .filter(([t]) => t === 'node')
      .map(([, c]) => c as Change<{ resourceVersion: string }>);
    expect(changes.map((c) => [c.type, c.old?.resourceVersion, c.new?.resourceVersion])).toEqual([
      ['add', undefined, '1'],
      ['update', '1', '2'],
      ['delete', '2', undefined],
    ]);
  });

  it('indexes pods by node and keeps the unscheduled set (unbound, not terminal, not deleting)', () => {
    const { cache, get } = setup();
    const pods = get('pods');
    pods.h.add(podObj('pending', '1'));
    pods.h.add(podObj('done', '2', { phase: 'Succeeded' }));
    pods.h.add(podObj('going', '3', { deleting: true }));
    pods.h.add(podObj('bound', '4', { node: 'n1', phase: 'Running' }));
    pods.h.add(podObj('other', '5', { node: 'n2', ns: 'x' }));
    expect([...cache.unscheduledPods()].map((p) => p.name)).toEqual(['pending']);
    expect([...cache.podsOnNode('n1').keys()]).toEqual(['default/bound']);
    expect([...cache.podsOnNode('n2').keys()]).toEqual(['x/other']);
    expect(cache.podsOnNode('nope').size).toBe(0);
    expect(cache.pods.size).toBe(5);
  });

  it('moves a pod between indexes when it is bound, moved, or deleted', () => {
    const { cache, get, events } = setup();
    const pods = get('pods');
    pods.h.add(podObj('p', '1'));
    pods.h.update(podObj('p', '2', { node: 'n1' }), podObj('p', '1'));
    expect([...cache.unscheduledPods()]).toEqual([]);
    expect(cache.podsOnNode('n1').get('default/p')?.resourceVersion).toBe('2');
    pods.h.update(podObj('p', '3', { node: 'n1', phase: 'Succeeded' }), podObj('p', '2'));
    expect(cache.podsOnNode('n1').get('default/p')?.terminal).toBe(true);
    pods.h.delete(podObj('p', '4', { node: 'n1' }));
    expect(cache.podsOnNode('n1').size).toBe(0);
    expect(cache.pods.size).toBe(0);
    const changes = events.filter(([t]) => t === 'pod').map(([, c]) => c as Change<{ nodeName: string }>);
    expect(changes.map((c) => [c.type, c.old?.nodeName, c.new?.nodeName])).toEqual([
      ['add', undefined, ''],
      ['update', '', 'n1'],
      ['update', 'n1', 'n1'],
      ['delete', 'n1', undefined],
    ]);
  });

  it('treats an add for a known pod as an update (relist after a gap)', () => {
    const { cache, get, events } = setup();
    const pods = get('pods');
    pods.h.add(podObj('p', '1'));
    pods.h.add(podObj('p', '7', { node: 'n1' }));
    expect(events.filter(([t]) => t === 'pod').map(([, c]) => (c as Change<unknown>).type)).toEqual([
      'add',
      'update',
    ]);
    expect(cache.podsOnNode('n1').size).toBe(1);
    expect([...cache.unscheduledPods()]).toEqual([]);
  });

  it('keeps rules as NodeLoadRule plus the raw object (status included)', () => {
    const { cache, get, events } = setup();
    const rules = get('nodeloadrules');
    const raw = ruleObj('r1', '1', { maxCPU: 70, allowedNodes: ['n1'] }, { eligibleCount: 1 });
    rules.h.add(raw);
    const entry = cache.rules.get('team/r1');
    expect(entry?.rule.spec).toMatchObject({ maxCPU: 70, allowedNodes: ['n1'] });
    expect(entry?.raw).toBe(raw);
    expect(entry?.raw.status).toMatchObject({ eligibleCount: 1 });
    rules.h.update(ruleObj('r1', '1'), raw);
    rules.h.update(ruleObj('r1', '2', { maxCPU: 60 }), raw);
    expect(cache.rules.get('team/r1')?.rule.spec.maxCPU).toBe(60);
    rules.h.delete(ruleObj('r1', '3'));
    expect(cache.rules.size).toBe(0);
    expect(events.filter(([t]) => t === 'rule').map(([, c]) => (c as Change<unknown>).type)).toEqual([
      'add',
      'update',
      'delete',
    ]);
  });

  it('is ready once nodes, pods and rules have synced and discovery has answered', async () => {
    const { cache, get, events } = setup();
    let ready = false;
    void cache.ready().then(() => {
      ready = true;
    });
    get('nodes').sync();
    get('pods').sync();
    get('namespaces').sync();
    await flush();
    expect(ready).toBe(false);
    expect(cache.isReady()).toBe(false);
    get('nodeloadrules').sync();
    await cache.ready();
    expect(cache.isReady()).toBe(true);
    expect(events.filter(([t]) => t === 'synced')).toHaveLength(1);
  });

  it('polls node metrics only while discovery says metrics.k8s.io is served', async () => {
    let served = true;
    const { cache, get, made, events } = setup({ metricsServed: async () => served });
    await flush();
    const metrics = get('nodemetrics');
    expect(metrics.spec).toMatchObject({
      path: '/apis/metrics.k8s.io/v1beta1/nodes',
      pollIntervalMs: 15_000,
    });
    expect(cache.metricsServed).toBe(false); // not before the first poll has answered
    metrics.h.add(metricsObj('n1', '2026-11-29T10:00:00Z'));
    metrics.sync();
    await flush();
    expect(cache.metricsServed).toBe(true);
    expect(cache.metrics.get('n1')).toMatchObject({
      usage: { cpuMilli: 1000, memoryBytes: 2 ** 30 },
      windowSeconds: 20,
    });

    metrics.h.update(metricsObj('n1', '2026-11-29T10:00:00Z'), metricsObj('n1', '2026-11-29T10:00:00Z'));
    metrics.h.update(metricsObj('n1', '2026-11-29T10:00:15Z', '2'), metricsObj('n1', '2026-11-29T10:00:00Z'));
    expect(cache.metrics.get('n1')?.usage.cpuMilli).toBe(2000);

    // Discovery loses the API: the poller stops, samples are dropped, the flag flips.
    served = false;
    await cache.checkMetricsServed();
    expect(metrics.stopped).toBe(true);
    expect(cache.metrics.size).toBe(0);
    expect(cache.metricsServed).toBe(false);
    expect(made.filter((m) => m.spec.name === 'nodemetrics')).toHaveLength(1);
    const kinds = events
      .filter(([t]) => t === 'metrics' || t === 'metricsServed')
      .map(([t, p]) =>
        t === 'metrics' ? (p as Change<unknown>).type : `served=${(p as { served: boolean }).served}`,
      );
    expect(kinds).toEqual(['add', 'served=true', 'update', 'delete', 'served=false']);
    cache.stop();
  });

  it('never polls metrics when discovery says not served, and is ready without them', async () => {
    const { cache, get, made } = setup({ metricsServed: async () => false });
    get('nodes').sync();
    get('pods').sync();
    get('namespaces').sync();
    get('nodeloadrules').sync();
    await cache.ready();
    expect(made.some((m) => m.spec.name === 'nodemetrics')).toBe(false);
    expect(cache.metricsServed).toBe(false);
  });

  it('keeps the previous answer when discovery itself fails', async () => {
    const { cache, made } = setup({
      metricsServed: async () => {
        throw new Error('connection refused');
      },
    });
    await flush();
    expect(cache.metricsServed).toBe(false);
    expect(made.some((m) => m.spec.name === 'nodemetrics')).toBe(false);
  });

  it('stop() stops every informer', async () => {
    const { cache, made } = setup({ metricsServed: async () => true });
    await flush();
    cache.stop();
    expect(made.map((m) => [m.spec.name, m.stopped])).toEqual([
      ['nodes', true],
      ['pods', true],
      ['namespaces', true],
      ['nodeloadrules', true],
      ['nodemetrics', true],
    ]);
  });

  it('a broken listener does not break the cache', () => {
    const { cache, get } = setup();
    cache.bus.on('node', () => {
      throw new Error('view bug');
    });
    get('nodes').h.add(nodeObj('n1', '1'));
    get('nodes').h.add(nodeObj('n2', '1'));
    expect([...cache.nodes.keys()]).toEqual(['n1', 'n2']);
  });
});

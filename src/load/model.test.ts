import { describe, expect, it } from 'vitest';
import { toNodeInfo, toPodInfo } from '../cluster/convert.js';
import type { NodeMetricsInfo, PodInfo } from '../cluster/model.js';
import { computeNodeLoad, estimatePodUsage, formatPercent, sameLoad, withPod } from './model.js';
import { loadAt } from './testing.js';
import { DEFAULT_LOAD_OPTIONS, type LoadOptions, type NodeLoad } from './types.js';

const Mi = 2 ** 20;
const Gi = 2 ** 30;
const NOW = Date.parse('2026-11-29T12:00:00Z');
const SAMPLE = '2026-11-29T11:59:00Z'; // 60 s before NOW
const BEFORE = '2026-11-29T11:50:00Z';
const AFTER = '2026-11-29T11:59:30Z';
const SAMPLE_MS_LATER = '2026-11-29T11:59:00.700Z'; // an assumed pod's bind time, to the millisecond
const SECOND_BEFORE = '2026-11-29T11:58:59Z';
const WINDOW_START = '2026-11-29T11:58:40Z'; // the sample's 20 s window opens here
const BEFORE_WINDOW = '2026-11-29T11:58:39Z';

const node = (name = 'node-a', cpu = '4', memory = '8Gi') =>
  toNodeInfo({
    metadata: { name, uid: `uid-${name}` },
    status: { allocatable: { cpu, memory, pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
  });

interface PodFixture {
  name?: string;
  nodeName?: string;
  cpu?: string;
  memory?: string;
  phase?: string;
  deleting?: boolean;
  created?: string;
  scheduledAt?: string;
  initCpu?: string;
}

/** Raw pods through toPodInfo, so the fixtures exercise the same request arithmetic as production. */
function pod(f: PodFixture = {}): PodInfo {
  const requests: Record<string, string> = {};
  if (f.cpu) requests['cpu'] = f.cpu;
  if (f.memory) requests['memory'] = f.memory;
  return toPodInfo({
    metadata: {
      namespace: 'default',
      name: f.name ?? 'p',
      creationTimestamp: f.created ?? BEFORE,
      ...(f.deleting ? { deletionTimestamp: AFTER } : {}),
    },
    spec: {
      nodeName: f.nodeName ?? 'node-a',
      containers: [{ name: 'app', resources: { requests } }],
      ...(f.initCpu
        ? { initContainers: [{ name: 'init', resources: { requests: { cpu: f.initCpu } } }] }
        : {}),
    },
    status: {
      phase: f.phase ?? 'Running',
      conditions: f.scheduledAt
        ? [{ type: 'PodScheduled', status: 'True', lastTransitionTime: f.scheduledAt }]
        : [],
    },
  });
}

const metrics = (cpu: number, memory: number, timestamp = SAMPLE): NodeMetricsInfo => ({
  name: 'node-a',
  timestamp,
  windowSeconds: 20,
  usage: { cpuMilli: cpu, memoryBytes: memory },
});

const served = (stalePolicy: LoadOptions['stalePolicy'] = 'fail-open'): LoadOptions => ({
  ...DEFAULT_LOAD_OPTIONS,
  metricsServed: true,
  stalePolicy,
});

describe('estimatePodUsage', () => {
  const opts = DEFAULT_LOAD_OPTIONS.estimate; // 0.85 cpu, 0.7 mem, defaults 250m / 200Mi
  it.each([
    { name: 'both requested', cpu: '1', memory: '1000Mi', want: { cpuMilli: 850, memoryBytes: 700 * Mi } },
    {
      name: 'cpu only → memory default',
      cpu: '200m',
      memory: undefined,
      want: { cpuMilli: 170, memoryBytes: 200 * Mi },
    },
    {
      name: 'memory only → cpu default',
      cpu: undefined,
      memory: '100Mi',
      want: { cpuMilli: 250, memoryBytes: 70 * Mi },
    },
    {
      name: 'no requests → both defaults',
      cpu: undefined,
      memory: undefined,
      want: { cpuMilli: 250, memoryBytes: 200 * Mi },
    },
  ])('$name', ({ cpu, memory, want }) => {
    expect(estimatePodUsage(pod({ cpu, memory }), opts)).toEqual(want);
  });

  it('counts the larger init container request, as kube-scheduler does', () => {
    expect(estimatePodUsage(pod({ cpu: '500m', initCpu: '2', memory: '1Gi' }), opts).cpuMilli).toBe(1700);
  });
});

describe('computeNodeLoad', () => {
  it.each([
    {
      name: 'requests only: sums the requests of pods bound to this node',
      pods: [
        pod({ cpu: '500m', memory: '1Gi' }),
        pod({ cpu: '500m', memory: '1Gi' }),
        pod({ nodeName: 'node-b', cpu: '3' }),
      ],
      requested: { cpuMilli: 1000, memoryBytes: 2 * Gi },
      podCount: 2,
      cpuPercent: 25,
      memoryPercent: 25,
    },
    {
      name: 'terminal pods no longer count, deleting ones still do',
      pods: [
        pod({ cpu: '1', phase: 'Succeeded' }),
        pod({ cpu: '1', phase: 'Failed' }),
        pod({ cpu: '1', memory: '2Gi', deleting: true }),
      ],
      requested: { cpuMilli: 1000, memoryBytes: 2 * Gi },
      podCount: 1,
      cpuPercent: 25,
      memoryPercent: 25,
    },
    {
      name: 'init containers: the larger of init and app requests',
      pods: [pod({ cpu: '500m', initCpu: '2' })],
      requested: { cpuMilli: 2000, memoryBytes: 0 },
      podCount: 1,
      cpuPercent: 50,
      memoryPercent: 0,
    },
  ])('$name', ({ pods, requested, podCount, cpuPercent, memoryPercent }) => {
    const load = computeNodeLoad({ node: node(), pods, now: NOW, options: DEFAULT_LOAD_OPTIONS });
    expect(load).toMatchObject({
      node: 'node-a',
      requested,
      podCount,
      effective: requested,
      cpuPercent,
      memoryPercent,
      source: 'requests',
      metricsStale: false,
      unavailable: false,
      estimatedPods: 0,
      timestamp: new Date(NOW).toISOString(),
    });
  });

  it('ignores metrics when metrics.k8s.io is not served', () => {
    const load = computeNodeLoad({
      node: node(),
      pods: [pod({ cpu: '1' })],
      metrics: metrics(3000, 0),
      now: NOW,
      options: DEFAULT_LOAD_OPTIONS,
    });
    expect(load).toMatchObject({
      source: 'requests',
      cpuPercent: 25,
      metricsStale: false,
      unavailable: false,
    });
  });

  it('uses fresh metrics as the load when every pod was bound before the sample', () => {
    const load = computeNodeLoad({
      node: node(),
      pods: [pod({ cpu: '2', memory: '4Gi', scheduledAt: BEFORE })],
      metrics: metrics(1000, 2 * Gi),
      now: NOW,
      options: served(),
    });
    expect(load).toMatchObject({
      source: 'metrics',
      effective: { cpuMilli: 1000, memoryBytes: 2 * Gi },
      requested: { cpuMilli: 2000, memoryBytes: 4 * Gi },
      estimated: { cpuMilli: 0, memoryBytes: 0 },
      estimatedPods: 0,
      cpuPercent: 25,
      memoryPercent: 25,
      timestamp: SAMPLE,
      metricsStale: false,
      unavailable: false,
      usage: { cpuMilli: 1000, memoryBytes: 2 * Gi, timestamp: SAMPLE, windowSeconds: 20 },
    });
  });

  it.each([
    { name: 'scheduled after the sample', f: { scheduledAt: AFTER }, estimated: true },
    {
      name: 'scheduled before, even if created later',
      f: { created: BEFORE, scheduledAt: BEFORE },
      estimated: false,
    },
    {
      name: 'bind time wins over an earlier creation time',
      f: { created: BEFORE, scheduledAt: AFTER },
      estimated: true,
    },
    { name: 'no bind time: creation time after the sample', f: { created: AFTER }, estimated: true },
    { name: 'no bind time: creation time before the sample', f: { created: BEFORE }, estimated: false },
    { name: 'no time at all counts as after', f: { created: 'not-a-time' }, estimated: true },
    // Both times are to the second: a pod bound in the sample's second may be missing from it.
    { name: "bound in the sample time's second", f: { scheduledAt: SAMPLE }, estimated: true },
    { name: "bound later in the sample's second", f: { scheduledAt: SAMPLE_MS_LATER }, estimated: true },
    // The sample's CPU is a rate over its 20 s window: a pod bound within it is partly in it at most.
    { name: "bound within the sample's window", f: { scheduledAt: SECOND_BEFORE }, estimated: true },
    { name: "bound in the window's first second", f: { scheduledAt: WINDOW_START }, estimated: true },
    { name: 'bound the second before the window', f: { scheduledAt: BEFORE_WINDOW }, estimated: false },
  ])('metrics+estimate: pod $name → estimated=$estimated', ({ f, estimated }) => {
    const load = computeNodeLoad({
      node: node(),
      pods: [pod({ cpu: '1', memory: '1Gi', ...f })],
      metrics: metrics(1000, 1 * Gi),
      now: NOW,
      options: served(),
    });
    if (estimated) {
      expect(load.source).toBe('metrics+estimate');
      expect(load.estimatedPods).toBe(1);
      expect(load.estimated).toEqual({ cpuMilli: 850, memoryBytes: Math.round(0.7 * Gi) });
      expect(load.effective).toEqual({ cpuMilli: 1850, memoryBytes: Gi + Math.round(0.7 * Gi) });
      expect(load.cpuPercent).toBeCloseTo(46.25, 10);
    } else {
      expect(load.source).toBe('metrics');
      expect(load.effective).toEqual({ cpuMilli: 1000, memoryBytes: Gi });
    }
  });

  it('estimates pods without requests with the defaults', () => {
    const load = computeNodeLoad({
      node: node(),
      pods: [pod({ scheduledAt: AFTER })],
      metrics: metrics(0, 0),
      now: NOW,
      options: served(),
    });
    expect(load.effective).toEqual({ cpuMilli: 250, memoryBytes: 200 * Mi });
    expect(load.requested).toEqual({ cpuMilli: 0, memoryBytes: 0 });
  });

  const stale = '2026-11-29T11:56:59Z'; // 181 s old, staleness 180 s
  it.each([
    { name: 'stale, fail-open', policy: 'fail-open', m: metrics(3900, 0, stale), unavailable: false },
    { name: 'stale, fail-closed', policy: 'fail-closed', m: metrics(3900, 0, stale), unavailable: true },
    { name: 'missing while served, fail-open', policy: 'fail-open', m: undefined, unavailable: false },
    { name: 'missing while served, fail-closed', policy: 'fail-closed', m: undefined, unavailable: true },
    {
      name: 'unparseable sample time, fail-closed',
      policy: 'fail-closed',
      m: metrics(3900, 0, ''),
      unavailable: true,
    },
  ] as const)(
    '$name: requests-based figures, metricsStale, unavailable=$unavailable',
    ({ policy, m, unavailable }) => {
      const load = computeNodeLoad({
        node: node(),
        pods: [pod({ cpu: '1', memory: '2Gi', scheduledAt: AFTER })],
        metrics: m,
        now: NOW,
        options: served(policy),
      });
      expect(load).toMatchObject({
        source: 'requests',
        effective: { cpuMilli: 1000, memoryBytes: 2 * Gi },
        estimatedPods: 0,
        cpuPercent: 25,
        memoryPercent: 25,
        metricsStale: true,
        unavailable,
      });
      expect(load.usage !== undefined).toBe(m !== undefined);
    },
  );

  it('a sample exactly at the staleness limit is still fresh', () => {
    const load = computeNodeLoad({
      node: node(),
      pods: [],
      metrics: metrics(1000, 0, '2026-11-29T11:57:00Z'),
      now: NOW,
      options: served('fail-closed'),
    });
    expect(load).toMatchObject({ source: 'metrics', metricsStale: false, unavailable: false });
  });

  it('keeps whole percentages exact, so a load at a threshold equals it (570m / 1 cpu is 57, not 56.99…)', () => {
    const load = computeNodeLoad({
      node: node('node-a', '1', '100Mi'),
      pods: [pod({ cpu: '570m', memory: '29Mi' })],
      now: NOW,
      options: DEFAULT_LOAD_OPTIONS,
    });
    expect(load.cpuPercent).toBe(57);
    expect(load.memoryPercent).toBe(29);
  });

  it.each([
    { name: 'nothing allocatable and nothing placed → 0%', cpu: undefined, want: 0 },
    { name: 'nothing allocatable but something requested → 100%', cpu: '100m', want: 100 },
  ])('$name', ({ cpu, want }) => {
    const load = computeNodeLoad({
      node: node('node-a', '0', '0'),
      pods: cpu ? [pod({ cpu })] : [],
      now: NOW,
      options: DEFAULT_LOAD_OPTIONS,
    });
    expect(load.cpuPercent).toBe(want);
  });
});

describe('withPod', () => {
  const incoming = pod({ name: 'incoming', nodeName: '', cpu: '1', memory: '1Gi' });

  it('requests-based: adds the pod requests', () => {
    const before = computeNodeLoad({
      node: node(),
      pods: [pod({ cpu: '1' })],
      now: NOW,
      options: DEFAULT_LOAD_OPTIONS,
    });
    const after = withPod(before, incoming, DEFAULT_LOAD_OPTIONS);
    expect(after).toMatchObject({
      source: 'requests',
      podCount: 2,
      requested: { cpuMilli: 2000, memoryBytes: Gi },
      effective: { cpuMilli: 2000, memoryBytes: Gi },
      cpuPercent: 50,
      memoryPercent: 12.5,
      estimatedPods: 0,
    });
    expect(before.podCount).toBe(1); // input untouched
  });

  it('metrics-based: adds the pod estimate and marks the figure estimated', () => {
    const before = computeNodeLoad({
      node: node(),
      pods: [pod({ cpu: '2', scheduledAt: BEFORE })],
      metrics: metrics(1000, Gi),
      now: NOW,
      options: served(),
    });
    expect(before.source).toBe('metrics');
    const after = withPod(before, incoming, served());
    expect(after).toMatchObject({
      source: 'metrics+estimate',
      podCount: 2,
      requested: { cpuMilli: 3000, memoryBytes: Gi },
      estimated: { cpuMilli: 850, memoryBytes: Math.round(0.7 * Gi) },
      estimatedPods: 1,
      effective: { cpuMilli: 1850, memoryBytes: Gi + Math.round(0.7 * Gi) },
      timestamp: SAMPLE,
    });
    expect(after.cpuPercent).toBeCloseTo(46.25, 10);
  });

  it('keeps an unavailable load unavailable', () => {
    const before = computeNodeLoad({ node: node(), pods: [], now: NOW, options: served('fail-closed') });
    const after = withPod(before, incoming, served('fail-closed'));
    expect(after).toMatchObject({ unavailable: true, metricsStale: true, cpuPercent: 25 });
  });
});

describe('formatPercent', () => {
  it.each([
    [91, '91'],
    [80.5, '80.5'],
    [80.04, '80'],
    [79.96, '80'],
    [12.345, '12.3'],
    [0, '0'],
    [100, '100'],
  ])('%d → %s', (n, want) => {
    expect(formatPercent(n)).toBe(want);
  });
});

describe('sameLoad', () => {
  const base = loadAt('n1', 10, 20);
  const usage = { cpuMilli: 400, memoryBytes: 2 ** 30, timestamp: 't1', windowSeconds: 30 };
  const measured = loadAt('n1', 10, 20, { source: 'metrics', timestamp: 't1', usage });
  it.each<[string, NodeLoad, NodeLoad, boolean]>([
    ['identical', base, { ...base }, true],
    [
      'requests-based figures differ only in when they were computed',
      base,
      { ...base, timestamp: 'later' },
      true,
    ],
    ['a measured figure of another sample time', measured, { ...measured, timestamp: 't2' }, false],
    ['another cpu%', base, { ...base, cpuPercent: 11 }, false],
    ['another memory%', base, { ...base, memoryPercent: 21 }, false],
    ['another pod count', base, { ...base, podCount: 1 }, false],
    ['another source', base, { ...base, source: 'metrics' }, false],
    ['stale now', base, { ...base, metricsStale: true }, false],
    ['unavailable now', base, { ...base, unavailable: true }, false],
    ['more requested', base, { ...base, requested: { cpuMilli: 1, memoryBytes: 0 } }, false],
    [
      'another estimate',
      base,
      { ...base, estimated: { cpuMilli: 0, memoryBytes: 1 }, estimatedPods: 0 },
      false,
    ],
    ['another estimated pod count', base, { ...base, estimatedPods: 1 }, false],
    ['another effective figure', base, { ...base, effective: { cpuMilli: 5, memoryBytes: 0 } }, false],
    ['another allocatable', base, { ...base, allocatable: { ...base.allocatable, pods: 10 } }, false],
    ['a sample appears', base, { ...base, usage }, false],
    ['the same sample, copied', measured, { ...measured, usage: { ...usage } }, true],
    ['another sample window', measured, { ...measured, usage: { ...usage, windowSeconds: 60 } }, false],
  ])('%s → %s', (_, a, b, want) => {
    expect(sameLoad(a, b)).toBe(want);
    expect(sameLoad(b, a)).toBe(want);
  });
});

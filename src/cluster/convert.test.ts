import { describe, expect, it } from 'vitest';
import { parseDurationSeconds, toNodeInfo, toPodInfo } from './convert.js';

const container = (requests?: Record<string, string>, limits?: Record<string, string>) => ({
  name: 'c',
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
});

describe('toPodInfo', () => {
  it.each([
    {
      name: 'sums app containers',
      spec: { containers: [container({ cpu: '100m' }), container({ cpu: '200m' })] },
      cpu: 300,
    },
    {
      name: 'an init container larger than the app containers wins',
      spec: { containers: [container({ cpu: '100m' })], initContainers: [container({ cpu: '1' })] },
      cpu: 1000,
    },
    {
      name: 'sidecar init containers add to the app containers',
      spec: {
        containers: [container({ cpu: '100m' })],
        initContainers: [{ ...container({ cpu: '50m' }), restartPolicy: 'Always' }],
      },
      cpu: 150,
    },
    {
      name: 'pod overhead is added',
      spec: { containers: [container({ cpu: '100m' })], overhead: { cpu: '10m' } },
      cpu: 110,
    },
  ])('requests: $name', ({ spec, cpu }) => {
    expect(toPodInfo({ metadata: { name: 'p', namespace: 'n' }, spec }).requests.cpuMilli).toBe(cpu);
  });

  it('reads raw JSON and deserialised objects alike (Date or string timestamps)', () => {
    const t = '2026-11-29T10:00:00.000Z';
    const raw = toPodInfo({ metadata: { name: 'p', namespace: 'n', creationTimestamp: t }, spec: {} });
    const typed = toPodInfo({
      metadata: { name: 'p', namespace: 'n', creationTimestamp: new Date(t) },
      spec: {},
    });
    expect(typed.creationTimestamp).toBe(raw.creationTimestamp);
  });

  it.each([
    { spec: {}, gated: false, noRequests: true, scheduler: 'default-scheduler' },
    {
      spec: { schedulingGates: [{ name: 'wait' }] },
      gated: true,
      noRequests: true,
      scheduler: 'default-scheduler',
    },
    {
      spec: { schedulerName: 'nodeload-scheduler', containers: [container({ memory: '1Gi' })] },
      gated: false,
      noRequests: false,
      scheduler: 'nodeload-scheduler',
    },
  ])('flags: $spec', ({ spec, gated, noRequests, scheduler }) => {
    const p = toPodInfo({ metadata: { name: 'p', namespace: 'n' }, spec });
    expect(p.schedulingGated).toBe(gated);
    expect(p.noRequests).toBe(noRequests);
    expect(p.schedulerName).toBe(scheduler);
  });

  it('marks DaemonSet pods, terminal and deleting pods, and the bind time', () => {
    const p = toPodInfo({
      metadata: {
        name: 'p',
        namespace: 'n',
        deletionTimestamp: '2026-11-29T10:00:00Z',
        ownerReferences: [{ kind: 'DaemonSet', name: 'ds', controller: true }],
      },
      spec: { nodeName: 'n1' },
      status: {
        phase: 'Succeeded',
        conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-11-29T09:00:00Z' }],
      },
    });
    expect(p).toMatchObject({
      isDaemonSetPod: true,
      terminal: true,
      deleting: true,
      nodeName: 'n1',
      scheduledAt: '2026-11-29T09:00:00Z',
    });
  });
});

describe('toPodInfo: terminatingByPreemption', () => {
  const preempted = { type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' };
  it.each([
    { name: 'deleted by a preemption', deleting: true, conditions: [preempted], want: true },
    { name: 'marked but not yet deleted', deleting: false, conditions: [preempted], want: undefined },
    { name: 'deleted by something else', deleting: true, conditions: [], want: undefined },
    {
      name: 'evicted through the Eviction API',
      deleting: true,
      conditions: [{ ...preempted, reason: 'EvictionByEvictionAPI' }],
      want: undefined,
    },
    {
      name: 'the condition False',
      deleting: true,
      conditions: [{ ...preempted, status: 'False' }],
      want: undefined,
    },
  ])('$name', ({ deleting, conditions, want }) => {
    const p = toPodInfo({
      metadata: {
        name: 'p',
        namespace: 'ns',
        ...(deleting ? { deletionTimestamp: '2026-12-07T00:00:00Z' } : {}),
      },
      spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
      status: { phase: 'Running', conditions },
    });
    expect(p.terminatingByPreemption).toBe(want);
  });
});

describe('toPodInfo: generation', () => {
  it.each([
    {
      what: 'the pod generation and the one its PodScheduled condition was written for',
      gen: 4,
      observed: 3,
    },
    { what: 'none before the API server counted them', gen: undefined, observed: undefined },
  ])('$what', ({ gen, observed }) => {
    const info = toPodInfo({
      metadata: { name: 'p', namespace: 'ns', ...(gen ? { generation: gen } : {}) },
      spec: { containers: [] },
      status: {
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: 'm',
            ...(observed ? { observedGeneration: observed } : {}),
          },
        ],
      },
    });
    expect([info.generation, info.scheduledCondition?.observedGeneration]).toEqual([gen, observed]);
  });
});

describe('toNodeInfo', () => {
  it('reads readiness, taints and allocatable (capacity when allocatable is absent)', () => {
    const n = toNodeInfo({
      metadata: { name: 'n1', labels: { a: 'b' } },
      spec: { unschedulable: true, taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] },
      status: {
        capacity: { cpu: '4', memory: '8Gi', pods: '110' },
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
    expect(n).toMatchObject({
      ready: true,
      unschedulable: true,
      allocatable: { cpuMilli: 4000, memoryBytes: 8 * 2 ** 30, pods: 110 },
    });
    expect(n.taints).toEqual([{ key: 'k', value: 'v', effect: 'NoSchedule' }]);
  });
});

describe('parseDurationSeconds', () => {
  it.each([
    ['20s', 20],
    ['1m30s', 90],
    ['20.023s', 20.023],
    ['500ms', 0.5],
    ['1h', 3600],
  ])('%s → %d', (d, want) => {
    expect(parseDurationSeconds(d)).toBeCloseTo(want);
  });
});

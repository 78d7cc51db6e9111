// placedLoad is withPod as a view: the same figures, field by field, for every kind of load.
import { describe, expect, it } from 'vitest';
import { toNodeInfo, toPodInfo } from '../cluster/convert.js';
import { computeNodeLoad, withPod } from './model.js';
import { placedCpuPercent, placedLoad, placedMemoryPercent } from './placed.js';
import { DEFAULT_LOAD_OPTIONS, type LoadOptions, type NodeLoad } from './types.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const SAMPLE = '2026-11-29T11:59:00Z';
const BEFORE = '2026-11-29T11:50:00Z';

const node = (cpu = '4', memory = '8Gi') =>
  toNodeInfo({
    metadata: { name: 'node-a', uid: 'uid-a' },
    status: { allocatable: { cpu, memory, pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
  });

const pod = (name: string, requests: Record<string, string>, nodeName = 'node-a') =>
  toPodInfo({
    metadata: { namespace: 'default', name, creationTimestamp: BEFORE },
    spec: { nodeName, containers: [{ name: 'app', resources: { requests } }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: BEFORE }],
    },
  });

const served = (stalePolicy: LoadOptions['stalePolicy']): LoadOptions => ({
  ...DEFAULT_LOAD_OPTIONS,
  metricsServed: true,
  stalePolicy,
});
const sample = {
  name: 'node-a',
  timestamp: SAMPLE,
  windowSeconds: 20,
  usage: { cpuMilli: 1000, memoryBytes: 2 ** 30 },
};

const FIELDS: (keyof NodeLoad)[] = [
  'node',
  'allocatable',
  'requested',
  'podCount',
  'usage',
  'estimated',
  'estimatedPods',
  'effective',
  'cpuPercent',
  'memoryPercent',
  'source',
  'timestamp',
  'metricsStale',
  'unavailable',
];

describe('placedLoad', () => {
  it.each([
    { name: 'requests-based', opts: DEFAULT_LOAD_OPTIONS, metrics: undefined, node: node() },
    { name: 'metrics-based (estimate added)', opts: served('fail-open'), metrics: sample, node: node() },
    { name: 'stale metrics, fail-open', opts: served('fail-open'), metrics: undefined, node: node() },
    { name: 'unavailable (fail-closed)', opts: served('fail-closed'), metrics: undefined, node: node() },
    { name: 'nothing allocatable', opts: DEFAULT_LOAD_OPTIONS, metrics: undefined, node: node('0', '0') },
  ])('$name: the same figures as withPod', ({ opts, metrics, node: n }) => {
    const load = computeNodeLoad({
      node: n,
      pods: [pod('running', { cpu: '1', memory: '512Mi' })],
      ...(metrics ? { metrics } : {}),
      now: NOW,
      options: opts,
    });
    for (const incoming of [
      pod('both', { cpu: '300m', memory: '1Gi' }, ''),
      pod('cpu-only', { cpu: '1500m' }, ''),
      pod('none', {}, ''),
    ]) {
      const want = withPod(load, incoming, opts);
      const got = placedLoad(load, incoming, opts);
      for (const f of FIELDS) expect([f, got[f]]).toEqual([f, want[f]]);
      expect([placedCpuPercent(load, incoming, opts), placedMemoryPercent(load, incoming, opts)]).toEqual([
        want.cpuPercent,
        want.memoryPercent,
      ]);
      expect(JSON.parse(JSON.stringify(got))).toEqual(JSON.parse(JSON.stringify(want)));
    }
  });
});

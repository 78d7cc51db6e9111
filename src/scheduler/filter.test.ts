import { describe, expect, it } from 'vitest';
import type { NodeInfo, PodInfo } from '../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../load/types.js';
import type { NodeLoadRule } from '../rules/types.js';
import { type BurstView, filterNode, primaryReasons } from './filter.js';
import { loadsFor, node, pod, rule } from './testing.js';

interface Case {
  name: string;
  node: NodeInfo;
  pod: PodInfo;
  /** Pods already bound to the node. */
  bound?: PodInfo[];
  rules?: NodeLoadRule[];
  placements?: number;
  /** Expected aggregatable reasons, in stage order; [] = feasible. */
  want: string[];
}

const cases: Case[] = [
  { name: 'plain fit', node: node('n'), pod: pod('p', { cpu: '1' }), want: [] },
  {
    name: 'not ready',
    node: node('n', { ready: false }),
    pod: pod('p'),
    want: ['node(s) not ready'],
  },
  {
    name: 'not ready tolerated (NoExecute toleration, as DaemonSets have)',
    node: node('n', { ready: false }),
    pod: pod('p', {
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }],
    }),
    want: [],
  },
  {
    name: 'cordoned',
    node: node('n', { unschedulable: true }),
    pod: pod('p'),
    want: ['node(s) were unschedulable'],
  },
  {
    name: 'cordoned but tolerated',
    node: node('n', { unschedulable: true }),
    pod: pod('p', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }] }),
    want: [],
  },
  {
    name: 'NoSchedule taint',
    node: node('n', { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] }),
    pod: pod('p'),
    want: ['node(s) had untolerated taint {gpu: true}'],
  },
  {
    name: 'NoExecute taint',
    node: node('n', { taints: [{ key: 'dedicated', effect: 'NoExecute' }] }),
    pod: pod('p'),
    want: ['node(s) had untolerated taint {dedicated: }'],
  },
  {
    name: 'PreferNoSchedule is not a filter',
    node: node('n', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }),
    pod: pod('p'),
    want: [],
  },
  {
    name: 'taint tolerated with Equal',
    node: node('n', { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] }),
    pod: pod('p', { tolerations: [{ key: 'gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }] }),
    want: [],
  },
  {
    name: 'taint with the wrong value',
    node: node('n', { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] }),
    pod: pod('p', { tolerations: [{ key: 'gpu', value: 'false' }] }),
    want: ['node(s) had untolerated taint {gpu: true}'],
  },
  {
    name: 'empty-key Exists tolerates everything',
    node: node('n', {
      taints: [
        { key: 'a', effect: 'NoSchedule' },
        { key: 'b', value: 'x', effect: 'NoExecute' },
      ],
    }),
    pod: pod('p', { tolerations: [{ operator: 'Exists' }] }),
    want: [],
  },
  {
    name: 'nodeSelector mismatch',
    node: node('n', { labels: { zone: 'a' } }),
    pod: pod('p', { nodeSelector: { zone: 'b' } }),
    want: ["node(s) didn't match Pod's node affinity/selector"],
  },
  {
    name: 'nodeSelector match',
    node: node('n', { labels: { zone: 'a' } }),
    pod: pod('p', { nodeSelector: { zone: 'a' } }),
    want: [],
  },
  {
    name: 'affinity In',
    node: node('n', { labels: { zone: 'a' } }),
    pod: pod('p', {
      affinityTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }],
    }),
    want: [],
  },
  {
    name: 'affinity NotIn on a missing label matches',
    node: node('n'),
    pod: pod('p', {
      affinityTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }],
    }),
    want: [],
  },
  {
    name: 'affinity terms are ORed',
    node: node('n', { labels: { zone: 'c' } }),
    pod: pod('p', {
      affinityTerms: [
        { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
        { matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
      ],
    }),
    want: [],
  },
  {
    name: 'affinity requirements are ANDed',
    node: node('n', { labels: { zone: 'a' } }),
    pod: pod('p', {
      affinityTerms: [
        {
          matchExpressions: [
            { key: 'zone', operator: 'In', values: ['a'] },
            { key: 'disk', operator: 'Exists' },
          ],
        },
      ],
    }),
    want: ["node(s) didn't match Pod's node affinity/selector"],
  },
  {
    name: 'affinity Gt',
    node: node('n', { labels: { cores: '16' } }),
    pod: pod('p', {
      affinityTerms: [{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['8'] }] }],
    }),
    want: [],
  },
  {
    name: 'affinity Lt fails',
    node: node('n', { labels: { cores: '16' } }),
    pod: pod('p', {
      affinityTerms: [{ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['8'] }] }],
    }),
    want: ["node(s) didn't match Pod's node affinity/selector"],
  },
  {
    name: 'matchFields metadata.name (DaemonSet pinning)',
    node: node('n1'),
    pod: pod('p', {
      affinityTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }],
    }),
    want: [],
  },
  {
    name: 'matchFields metadata.name other node',
    node: node('n2'),
    pod: pod('p', {
      affinityTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }],
    }),
    want: ["node(s) didn't match Pod's node affinity/selector"],
  },
  {
    name: 'an empty affinity term selects nothing',
    node: node('n'),
    pod: pod('p', { affinityTerms: [{}] }),
    want: ["node(s) didn't match Pod's node affinity/selector"],
  },
  {
    name: 'insufficient cpu',
    node: node('n', { cpu: '4' }),
    bound: [pod('b', { nodeName: 'n', cpu: '3500m' })],
    pod: pod('p', { cpu: '600m' }),
    want: ['Insufficient cpu'],
  },
  {
    name: 'exactly fits',
    node: node('n', { cpu: '4' }),
    bound: [pod('b', { nodeName: 'n', cpu: '3500m' })],
    pod: pod('p', { cpu: '500m' }),
    want: [],
  },
  {
    name: 'insufficient cpu and memory together',
    node: node('n', { cpu: '1', memory: '1Gi' }),
    pod: pod('p', { cpu: '2', memory: '2Gi' }),
    want: ['Insufficient cpu', 'Insufficient memory'],
  },
  {
    name: 'too many pods',
    node: node('n', { pods: '1' }),
    bound: [pod('b', { nodeName: 'n' })],
    pod: pod('p'),
    want: ['Too many pods'],
  },
  {
    name: 'a pod without requests fits a full node',
    node: node('n', { cpu: '1' }),
    bound: [pod('b', { nodeName: 'n', cpu: '1' })],
    pod: pod('p'),
    want: [],
  },
  {
    name: 'rule: node not allowed',
    node: node('n2'),
    pod: pod('p'),
    rules: [rule('web', { allowedNodes: ['n1'] })],
    want: ['node(s) not allowed by rule web'],
  },
  {
    name: 'rule: nodeSelector mismatch counts as not allowed',
    node: node('n', { labels: { pool: 'b' } }),
    pod: pod('p'),
    rules: [rule('web', { nodeSelector: { matchLabels: { pool: 'a' } } })],
    want: ['node(s) not allowed by rule web'],
  },
  {
    name: 'rule: cpu after placement over the threshold',
    node: node('n', { cpu: '4' }),
    bound: [pod('b', { nodeName: 'n', cpu: '3' })],
    pod: pod('p', { cpu: '300m' }),
    rules: [rule('web', { maxCPU: 80 })],
    want: ['node(s) exceed rule web cpu 80%'],
  },
  {
    name: 'rule: exactly at the threshold is within',
    node: node('n', { cpu: '4' }),
    bound: [pod('b', { nodeName: 'n', cpu: '3' })],
    pod: pod('p', { cpu: '200m' }),
    rules: [rule('web', { maxCPU: 80 })],
    want: [],
  },
  {
    name: 'rule: memory over',
    node: node('n', { memory: '4Gi' }),
    pod: pod('p', { memory: '3584Mi' }),
    rules: [rule('db', { maxMemory: 75 })],
    want: ['node(s) exceed rule db memory 75%'],
  },
  {
    name: 'rule not covering the pod is ignored',
    node: node('n2'),
    pod: pod('p', { labels: { app: 'api' } }),
    rules: [],
    want: [],
  },
  {
    name: 'DaemonSet pods bypass load thresholds',
    node: node('n', { cpu: '4' }),
    bound: [pod('b', { nodeName: 'n', cpu: '3900m' })],
    pod: pod('p', { cpu: '100m', daemonSet: true }),
    rules: [rule('web', { maxCPU: 50, burst: { maxPlacements: 1, windowSeconds: 60 } })],
    placements: 5,
    want: [],
  },
  {
    name: 'DaemonSet pods still respect allowedNodes',
    node: node('n2'),
    pod: pod('p', { daemonSet: true }),
    rules: [rule('web', { allowedNodes: ['n1'] })],
    want: ['node(s) not allowed by rule web'],
  },
  {
    name: 'rule burst limit reached',
    node: node('n'),
    pod: pod('p'),
    rules: [rule('web', { burst: { maxPlacements: 3, windowSeconds: 10 } })],
    placements: 3,
    want: ['node(s) hit burst limit of rule web'],
  },
  {
    name: 'rule burst below the limit',
    node: node('n'),
    pod: pod('p'),
    rules: [rule('web', { burst: { maxPlacements: 3, windowSeconds: 10 } })],
    placements: 2,
    want: [],
  },
  {
    name: 'several failures are all reported, in stage order',
    node: node('n2', { unschedulable: true, cpu: '1' }),
    pod: pod('p', { cpu: '2' }),
    rules: [rule('web', { allowedNodes: ['n1'] })],
    want: [
      'node(s) were unschedulable',
      'Insufficient cpu',
      'node(s) not allowed by rule web',
      'node(s) exceed rule web cpu 80%',
    ],
  },
];

const fixedPlacements = (n: number): BurstView => ({ placements: () => n });

describe('filterNode', () => {
  it.each(cases)('$name', (c) => {
    const loads = loadsFor([c.node], c.bound ?? []);
    const verdict = filterNode(
      {
        pod: c.pod,
        rules: c.rules ?? [],
        loadOptions: DEFAULT_LOAD_OPTIONS,
        placements: fixedPlacements(c.placements ?? 0),
      },
      c.node,
      loads.get(c.node.name),
    );
    expect(verdict.reasons.map((r) => r.reason)).toEqual(c.want);
    expect(verdict.feasible).toBe(c.want.length === 0);
  });

  it('records the numbers behind a rule verdict', () => {
    const n = node('n', { cpu: '4', memory: '8Gi' });
    const loads = loadsFor([n], [pod('b', { nodeName: 'n', cpu: '2', memory: '2Gi' })]);
    const v = filterNode(
      {
        pod: pod('p', { cpu: '1', memory: '2Gi' }),
        rules: [rule('web', { maxCPU: 70, maxMemory: 60 })],
        loadOptions: DEFAULT_LOAD_OPTIONS,
      },
      n,
      loads.get('n'),
    );
    expect(v.load).toMatchObject({
      cpuPercent: 50,
      cpuPercentAfter: 75,
      memoryPercent: 25,
      memoryPercentAfter: 50,
      podCount: 1,
    });
    expect(v.rules).toEqual([
      expect.objectContaining({
        rule: 'web',
        allowed: true,
        bypassed: false,
        maxCPU: 70,
        cpuMargin: -5,
        memoryMargin: 10,
      }),
    ]);
    expect(v.reasons[0]?.detail).toBe('rule web: cpu 75% > maxCPU 70% with this pod');
  });

  it('applies the global burst guard except to DaemonSet pods', () => {
    const n = node('n');
    const loads = loadsFor([n]);
    const ctx = {
      rules: [],
      loadOptions: DEFAULT_LOAD_OPTIONS,
      burst: { maxPlacements: 2, windowSeconds: 5 },
      placements: fixedPlacements(2),
    };
    const blocked = filterNode({ ...ctx, pod: pod('p') }, n, loads.get('n'));
    expect(blocked.reasons.map((r) => r.reason)).toEqual(['node(s) hit burst limit']);
    expect(blocked.burst).toEqual({ placements: 2, maxPlacements: 2, windowSeconds: 5 });
    expect(filterNode({ ...ctx, pod: pod('p', { daemonSet: true }) }, n, loads.get('n')).feasible).toBe(true);
  });

  it('marks a node without a load figure infeasible', () => {
    const v = filterNode(
      { pod: pod('p'), rules: [], loadOptions: DEFAULT_LOAD_OPTIONS },
      node('n'),
      undefined,
    );
    expect(v.feasible).toBe(false);
    expect(v.reasons[0]?.code).toBe('NoLoad');
  });
});

describe('primaryReasons', () => {
  it('keeps only the first failing stage, as kube-scheduler stops at the first failing plugin', () => {
    const n = node('n2', { cpu: '1' });
    const v = filterNode(
      {
        pod: pod('p', { cpu: '2', memory: '20Gi' }),
        rules: [rule('web', { allowedNodes: ['n1'] })],
        loadOptions: DEFAULT_LOAD_OPTIONS,
      },
      n,
      loadsFor([n]).get('n2'),
    );
    expect(primaryReasons(v).map((r) => r.reason)).toEqual(['Insufficient cpu', 'Insufficient memory']);
  });
});

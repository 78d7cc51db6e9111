/**
 * PodTopologySpread Filter, checked against the facts of kube-scheduler's filtering_test.go
 * (TestSingleConstraint, TestMultipleConstraints, TestPreFilterState); Score is in
 * pod-topology-spread.score.test.ts. Upstream's enableNodeInclusionPolicy=true variants are the ones kept.
 */
import { describe, expect, it } from 'vitest';
import type { NodeInfo, PodInfo } from '../../cluster/model.js';
import type { PodTopologySpreadArgs } from './pod-topology-spread.js';
import {
  bar,
  byNode,
  FOUR,
  foo,
  hard,
  type Json,
  node,
  outcome,
  pod,
  pods,
  runFilter,
  soft,
  unschedulableTaint,
  zn,
} from './pod-topology-spread.testing.js';

interface FilterCase {
  name: string;
  pod: PodInfo;
  nodes?: NodeInfo[];
  existing?: PodInfo[];
  args?: PodTopologySpreadArgs;
  /** Nodes that fit ('a b'); `missing` ones fail on the label; every other one fails on the skew. */
  fit: string;
  missing?: string;
}

const N2 = byNode('a', 'b', 'c');
const fooSel = { nodeSelector: { foo: '' } };
const fooNodes = [
  ...byNode('a', 'b').map((n) => ({ ...n, labels: { ...n.labels, foo: '' } })),
  node('x', 'node=node-x,foo'),
  node('y', 'node=node-y'),
];
const taintNodes = [
  node('a', 'node=node-a,foo'),
  node('b', 'node=node-b,foo'),
  node('x', 'node=node-x,foo'),
  node('y', 'node=node-y', unschedulableTaint),
];
const ignore = { nodeAffinityPolicy: 'Ignore' };
const honorTaints = { nodeTaintsPolicy: 'Honor' };
const ZONE2 = [
  zn('a', 'zone1', ',foo'),
  zn('b', 'zone1', ',foo'),
  zn('x', 'zone2', ',foo'),
  zn('y', 'zone2'),
];
const ZONE3 = [
  zn('a', 'zone1', ',foo'),
  zn('b', 'zone1'),
  zn('x', 'zone2', ',foo'),
  zn('y', 'zone2', ',foo', unschedulableTaint),
];
const mlk = (keys: string[], sel: Json = foo) => hard(1, 'zone', sel, { matchLabelKeys: keys });
const revPods = [...pods('a2:foo,rev=v1'), ...pods('x1:foo,rev=v2')];

const filterCases: FilterCase[] = [
  // TestSingleConstraint
  { name: 'no existing pods', pod: pod({ spread: [hard(1, 'zone')] }), fit: 'a b x y' },
  {
    name: "no existing pods, incoming pod doesn't match itself",
    pod: pod({ spread: [hard(1, 'zone', bar)] }),
    fit: 'a b x y',
  },
  {
    name: 'existing pods in a different namespace do not count',
    pod: pod({ spread: [hard(1, 'zone')] }),
    existing: [...pods('a1', { ns: 'ns1' }), ...pods('a1', { ns: 'ns2' }), ...pods('x1 y1')],
    fit: 'a b',
  },
  {
    name: 'pods spread across zones as 3/3, all nodes fit',
    pod: pod({ spread: [hard(1, 'zone')] }),
    existing: pods('a2 b1 y3'),
    fit: 'a b x y',
  },
  {
    name: "pods spread as 1/2 due to absence of label 'zone' on node-b",
    pod: pod({ spread: [hard(1, 'zone')] }),
    nodes: [zn('a', 'zone1'), node('b', 'zon=zone1,node=node-b'), zn('x', 'zone2'), zn('y', 'zone2')],
    existing: pods('a1 b1 x1 y1'),
    fit: 'a',
    missing: 'b',
  },
  {
    name: "all nodes lack label 'rack'",
    pod: pod({ spread: [hard(1, 'rack')] }),
    nodes: [zn('a', 'zone1'), zn('x', 'zone2')],
    fit: '',
    missing: 'a x',
  },
  {
    name: 'pods spread across nodes as 2/1/0/3, only node-x fits',
    pod: pod({ spread: [hard(1, 'node')] }),
    existing: pods('a2 b1 y3'),
    fit: 'x',
  },
  {
    name: '2/1/0/3, maxSkew 2: node-b and node-x fit',
    pod: pod({ spread: [hard(2, 'node')] }),
    existing: pods('a2 b1 y3'),
    fit: 'b x',
  },
  {
    name: "2/1/0/3, but the pod doesn't match itself",
    pod: pod({ labels: 'bar', spread: [hard(1, 'node')] }),
    existing: pods('a2 b1 y3'),
    fit: 'b x',
  },
  {
    name: 'incoming pod has nodeAffinity, spread 2/~1~/~0~/3: node-a fits',
    pod: pod({ affinity: ['node', 'In', ['node-a', 'node-y']], spread: [hard(1, 'node')] }),
    existing: pods('a2 b1 y3'),
    fit: 'a b x',
  },
  {
    name: 'terminating pods are excluded',
    pod: pod({ spread: [hard(1, 'node')] }),
    nodes: byNode('a', 'b'),
    existing: [...pods('a1', { terminating: true }), ...pods('b1')],
    fit: 'a',
  },
  {
    name: 'nodeAffinity NotIn node-b, zone spread 0/~2~/0/1: zone1 fits',
    pod: pod({ affinity: ['node', 'NotIn', ['node-b']], spread: [hard(1, 'zone')] }),
    existing: pods('b2 y1'),
    fit: 'a b',
  },
  {
    name: 'nodes 2/2/1, maxSkew 2, domains(3) < minDomains(4): only node-c',
    pod: pod({ spread: [hard(2, 'node', foo, { minDomains: 4 })] }),
    nodes: N2,
    existing: pods('a2 b2 c1'),
    fit: 'c',
  },
  {
    name: 'nodes 2/2/1, maxSkew 2, domains(3) > minDomains(2): all fit',
    pod: pod({ spread: [hard(2, 'node', foo, { minDomains: 2 })] }),
    nodes: N2,
    existing: pods('a2 b2 c1'),
    fit: 'a b c',
  },
  {
    name: 'zones 2/1, maxSkew 2, domains(2) < minDomains(3): zone2 fits',
    pod: pod({ spread: [hard(2, 'zone', foo, { minDomains: 3 })] }),
    existing: pods('a1 b1 y1'),
    fit: 'x y',
  },
  {
    name: 'zones 2/1, maxSkew 2, domains(2) > minDomains(1): all fit',
    pod: pod({ spread: [hard(2, 'zone', foo, { minDomains: 1 })] }),
    existing: pods('a1 b1 y1'),
    fit: 'a b x y',
  },
  {
    name: 'NodeAffinityPolicy Honor with nodeSelector (1/1/0/~0~)',
    pod: pod({ ...fooSel, spread: [hard(1, 'node')] }),
    nodes: fooNodes,
    existing: pods('a1 b1 y1'),
    fit: 'x y',
  },
  {
    name: 'NodeAffinityPolicy Ignore with nodeSelector (1/1/0/~1~)',
    pod: pod({ ...fooSel, spread: [hard(1, 'node', foo, ignore)] }),
    nodes: fooNodes,
    existing: pods('a1 b1 y1'),
    fit: 'x',
  },
  {
    name: 'NodeAffinityPolicy Honor with nodeAffinity',
    pod: pod({ affinity: ['foo', 'In', ['']], spread: [hard(1, 'node')] }),
    nodes: fooNodes,
    existing: pods('a1 b1 y1'),
    fit: 'x y',
  },
  {
    name: 'NodeAffinityPolicy Ignore with nodeAffinity',
    pod: pod({ affinity: ['foo', 'In', ['']], spread: [hard(1, 'node', foo, ignore)] }),
    nodes: fooNodes,
    existing: pods('a1 b1 y1'),
    fit: 'x',
  },
  {
    name: 'NodeTaintsPolicy Honor (1/1/0/~0~)',
    pod: pod({ spread: [hard(1, 'node', foo, honorTaints)] }),
    nodes: taintNodes,
    existing: pods('a1 b1 y1'),
    fit: 'x y',
  },
  {
    name: 'NodeTaintsPolicy Ignore (default, 1/1/0/~1~)',
    pod: pod({ spread: [hard(1, 'node')] }),
    nodes: taintNodes,
    existing: pods('a1 b1 y1'),
    fit: 'x',
  },
  // TestMultipleConstraints
  {
    name: 'zone and node, spreads [3/3, 2/1/0/3]',
    pod: pod({ spread: [hard(1, 'zone'), hard(1, 'node')] }),
    existing: pods('a2 b1 y3'),
    fit: 'x',
  },
  {
    name: 'zone and node, spreads [3/4, 2/1/0/4]',
    pod: pod({ spread: [hard(1, 'zone'), hard(1, 'node')] }),
    existing: pods('a2 b1 y4'),
    fit: '',
  },
  {
    name: 'different labelSelectors, spreads [1/0, 1/0/0/1]',
    pod: pod({ labels: 'foo,bar', spread: [hard(1, 'zone'), hard(1, 'node', bar)] }),
    existing: pods('a1:foo y1:bar'),
    fit: 'x',
  },
  {
    name: 'different labelSelectors, spreads [1/0, 0/0/1/1]',
    pod: pod({ labels: 'foo,bar', spread: [hard(1, 'zone'), hard(1, 'node', bar)] }),
    existing: pods('a1:foo x1:bar y1:bar'),
    fit: '',
  },
  {
    name: 'different labelSelectors, spreads [2/3, 1/0/0/1]',
    pod: pod({ labels: 'foo,bar', spread: [hard(1, 'zone'), hard(1, 'node', bar)] }),
    existing: pods('a1:foo a1:foo,bar y2:foo y1:foo,bar'),
    fit: 'b',
  },
  {
    name: "different labelSelectors, pod doesn't match itself on 'zone'",
    pod: pod({ labels: 'bar', spread: [hard(1, 'zone'), hard(1, 'node', bar)] }),
    existing: pods('a1:foo x1:bar y1:bar'),
    fit: 'a b',
  },
  {
    name: "zone and node, node-x lacks label 'node', spreads [1/1, 1/0/0/1]",
    pod: pod({ spread: [hard(1, 'zone'), hard(1, 'node')] }),
    nodes: [zn('a', 'zone1'), zn('b', 'zone1'), node('x', 'zone=zone2'), zn('y', 'zone2')],
    existing: pods('a1 y1'),
    fit: 'b',
    missing: 'x',
  },
  {
    name: 'inclusion: zone honor/ignore, node ignore/ignore',
    pod: pod({ ...fooSel, spread: [hard(1, 'zone'), hard(1, 'node', foo, ignore)] }),
    nodes: ZONE2,
    existing: pods('a1 b1 y1'),
    fit: 'x',
  },
  {
    name: 'inclusion: zone honor/honor, node honor/ignore',
    pod: pod({ spread: [hard(1, 'zone', foo, honorTaints), hard(1, 'node')] }),
    nodes: [...ZONE2.slice(0, 3), zn('y', 'zone2', '', unschedulableTaint)],
    existing: pods('a1 b1 y1'),
    fit: 'x',
  },
  {
    name: 'inclusion: zone honor/ignore, node honor/ignore',
    pod: pod({ ...fooSel, spread: [hard(1, 'zone'), hard(1, 'node')] }),
    nodes: ZONE3,
    existing: pods('a1 b1 y1'),
    fit: 'b x',
  },
  {
    name: 'inclusion: zone honor/honor, node ignore/ignore',
    pod: pod({ ...fooSel, spread: [hard(1, 'zone', foo, honorTaints), hard(1, 'node', foo, ignore)] }),
    nodes: ZONE3,
    existing: pods('a1 b1 y1'),
    fit: 'x',
  },
  // Selectors: nil, empty, matchLabelKeys
  {
    name: 'nil labelSelector selects nothing (and not the pod itself)',
    pod: pod({ spread: [hard(1, 'node', null)] }),
    existing: pods('a2 b1 y3'),
    fit: 'a b x y',
  },
  {
    name: 'empty labelSelector: v1.36 counts no existing pod, the pod matches itself',
    pod: pod({ spread: [hard(1, 'node', {})] }),
    existing: pods('a2 b1 y3'),
    fit: 'a b x y',
  },
  {
    name: 'without matchLabelKeys every revision counts (2/1)',
    pod: pod({ labels: 'foo,rev=v2', spread: [mlk([])] }),
    existing: revPods,
    fit: 'x y',
  },
  {
    name: 'matchLabelKeys: only the same revision counts (0/1)',
    pod: pod({ labels: 'foo,rev=v2', spread: [mlk(['rev'])] }),
    existing: revPods,
    fit: 'a b',
  },
  {
    name: 'matchLabelKeys already merged by the API server: idempotent',
    pod: pod({
      labels: 'foo,rev=v2',
      spread: [
        mlk(['rev'], {
          matchExpressions: [...foo.matchExpressions, { key: 'rev', operator: 'In', values: ['v2'] }],
        }),
      ],
    }),
    existing: revPods,
    fit: 'a b',
  },
  {
    name: 'matchLabelKeys with a key the pod lacks is ignored',
    pod: pod({ labels: 'foo,rev=v2', spread: [mlk(['hash'])] }),
    existing: revPods,
    fit: 'x y',
  },
  {
    name: 'matchLabelKeys are not merged into a nil labelSelector',
    pod: pod({ labels: 'foo,rev=v2', spread: [mlk(['rev'], null)] }),
    existing: revPods,
    fit: 'a b x y',
  },
  // Default constraints (List) with the pod's default selector (its ReplicaSet's: owner=rs1)
  {
    name: 'List defaults: a ReplicaSet pod spreads against its own ReplicaSet only',
    pod: pod({ owner: ['ReplicaSet', 'rs1'] }),
    nodes: N2,
    existing: [
      ...pods('a2', { owner: ['ReplicaSet', 'rs1'] }),
      ...pods('b3', { owner: ['ReplicaSet', 'rs2'] }),
    ],
    args: { defaultingType: 'List', defaultConstraints: [hard(1, 'node', undefined)] },
    fit: 'b c',
  },
];

describe('PodTopologySpread Filter', () => {
  for (const c of filterCases) {
    it(c.name, () => {
      const { verdicts } = runFilter(c.nodes ?? FOUR, c.existing ?? [], c.pod, c.args);
      const fit = new Set(c.fit.split(' ').filter(Boolean));
      const missing = new Set((c.missing ?? '').split(' ').filter(Boolean));
      const want = Object.fromEntries(
        verdicts.map((v) => {
          const short = v.node.replace('node-', '');
          return [v.node, fit.has(short) ? 'ok' : missing.has(short) ? 'missing' : 'skew'];
        }),
      );
      expect(Object.fromEntries(verdicts.map((v) => [v.node, outcome(v)]))).toEqual(want);
    });
  }

  it('explains the skew with its numbers, and the missing label as unresolvable', () => {
    const nodes = [zn('a', 'zone1'), zn('b', 'zone1'), node('x', 'node=node-x'), zn('y', 'zone2')];
    const { verdicts } = runFilter(nodes, pods('a2 b1 y1'), pod({ spread: [hard(1, 'zone')] }));
    const [a, , x] = verdicts;
    expect(a?.reasons).toEqual([
      {
        plugin: 'PodTopologySpread',
        code: 'TopologySpreadSkew',
        reason: "node(s) didn't match pod topology spread constraints",
        detail: 'zone=zone1: 3 matching pods + 1 − min 1 = 3 > maxSkew 1',
        unresolvable: false,
      },
    ]);
    expect(x?.reasons[0]).toMatchObject({
      reason: "node(s) didn't match pod topology spread constraints (missing required label)",
      detail: 'node has no label zone',
      unresolvable: true,
    });
  });

  it('PreFilter skips pods without DoNotSchedule constraints (System defaults are all ScheduleAnyway)', () => {
    const soft1 = runFilter(FOUR, [], pod({ spread: [soft(1, 'zone')] }));
    expect(soft1.pre).toEqual({ skip: true });
    const defaulted = runFilter(FOUR, [], pod({ owner: ['ReplicaSet', 'rs1'] }));
    expect(defaulted.pre).toEqual({ skip: true });
    const bare = runFilter(N2, [], pod(), { defaultingType: 'List', defaultConstraints: [hard(1, 'node')] });
    expect(bare.pre).toEqual({ skip: true });
  });
});

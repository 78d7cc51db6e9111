/**
 * PodTopologySpread PreScore/Score/NormalizeScore, checked against the facts of kube-scheduler's
 * scoring_test.go (TestPodTopologySpreadScore, TestPreScoreStateEmptyNodes, TestPreScoreSkip).
 */
import { describe, expect, it } from 'vitest';
import type { NodeInfo, PodInfo } from '../../cluster/model.js';
import { LABEL_ZONE, type PodTopologySpreadArgs } from './pod-topology-spread.js';
import {
  bar,
  foo,
  HOST,
  hard,
  hosts,
  hostZone,
  node,
  pod,
  pods,
  runScore,
  soft,
  unschedulableTaint,
} from './pod-topology-spread.testing.js';

const HZ4 = [hostZone('a', 'zone1'), hostZone('b', 'zone1'), hostZone('x', 'zone2'), hostZone('y', 'zone2')];
const fooSel = { nodeSelector: { foo: '' } };
const ignore = { nodeAffinityPolicy: 'Ignore' };
const honorTaints = { nodeTaintsPolicy: 'Honor' };
const nodeKey3 = (extra: [string, string, string], taintC = false) =>
  ['a', 'b', 'c'].map((n, i) =>
    node(n, `node=node-${n}${extra[i]}`, taintC && n === 'c' ? unschedulableTaint : undefined),
  );
const rs1 = { owner: ['ReplicaSet', 'rs1'] as [string, string] };

interface ScoreCase {
  name: string;
  pod: PodInfo;
  nodes: NodeInfo[];
  failed?: NodeInfo[];
  existing: PodInfo[];
  args?: PodTopologySpreadArgs;
  want: string;
}

const scoreCases: ScoreCase[] = [
  {
    name: 'one candidate node',
    pod: pod({ spread: [soft(1, HOST)] }),
    nodes: hosts('a'),
    failed: hosts('b'),
    existing: pods('a1 b1'),
    want: 'a:100',
  },
  {
    name: 'all nodes have the same number of matching pods',
    pod: pod({ spread: [soft(1, HOST)] }),
    nodes: hosts('a', 'b'),
    existing: pods('a1 b1'),
    want: 'a:100 b:100',
  },
  {
    name: 'hostname, 2/1/0/3, all 4 nodes are candidates',
    pod: pod({ spread: [soft(1, HOST)] }),
    nodes: hosts('a', 'b', 'c', 'd'),
    existing: pods('a2 b1 d3'),
    want: 'a:20 b:60 c:100 d:0',
  },
  {
    name: 'hostname, null selector',
    pod: pod({ spread: [soft(1, HOST, null)] }),
    nodes: hosts('a', 'b', 'c', 'd'),
    existing: pods('a2 b1 d3'),
    want: 'a:100 b:100 c:100 d:100',
  },
  {
    name: 'hostname, 2/1/0/3, maxSkew 2',
    pod: pod({ spread: [soft(2, HOST)] }),
    nodes: hosts('a', 'b', 'c', 'd'),
    existing: pods('a2 b1 d3'),
    want: 'a:33 b:66 c:100 d:16',
  },
  {
    name: 'hostname, 4/3/2/1, maxSkew 3',
    pod: pod({ spread: [soft(3, HOST)] }),
    nodes: hosts('a', 'b', 'c', 'd'),
    existing: pods('a4 b3 c2 d1'),
    want: 'a:44 b:66 c:77 d:100',
  },
  {
    name: 'System defaults, nodes without zone, pods of the same ReplicaSet',
    pod: pod(rs1),
    nodes: hosts('a', 'b', 'c', 'd'),
    existing: pods('a4 b3 c2 d1', rs1),
    want: 'a:44 b:66 c:77 d:100',
  },
  {
    name: 'System defaults: zone-less nodes form the "" zone and are still scored by hostname',
    pod: pod(rs1),
    nodes: [
      node('a', `${HOST}=node-a,${LABEL_ZONE}=mars`),
      node('b', `${HOST}=node-b,${LABEL_ZONE}=mars`),
      ...hosts('c', 'd'),
    ],
    existing: [...pods('a2 c1', rs1), ...pods('b3 d3', { owner: ['ReplicaSet', 'rs2'] })],
    want: 'a:16 b:41 c:83 d:100',
  },
  {
    // hostname weight ln(3 + 2); raw round(count × 1.609 + 2) = 7 / 4 / 2; the zone default adds nothing
    // on zone-less nodes.
    name: 'System defaults: a bare pod behind a Service spreads against the pods the Service selects',
    pod: pod({ labels: 'foo,svc=front' }),
    nodes: hosts('a', 'b', 'c'),
    existing: [...pods('a3:svc=front b1:svc=front'), ...pods('c4')],
    want: 'a:28 b:71 c:100',
  },
  {
    name: "System defaults: pods the ReplicaSet's selector selects count, whatever owns them",
    pod: pod(rs1),
    nodes: hosts('a', 'b', 'c'),
    existing: [...pods('a2', rs1), ...pods('b2:foo,owner=rs1')],
    want: 'a:40 b:40 c:100',
  },
  {
    name: 'hostname, 4/2/1/~3~, 3 of 4 candidates',
    pod: pod({ spread: [soft(1, HOST)] }),
    nodes: hosts('a', 'b', 'x'),
    failed: hosts('y'),
    existing: pods('a4 b2 x1 y3'),
    want: 'a:33 b:83 x:100',
  },
  {
    name: 'hostname, one candidate lacks the key (ignored, 0)',
    pod: pod({ spread: [soft(1, HOST)] }),
    nodes: [...hosts('a'), node('b', 'n=node-b'), ...hosts('x')],
    failed: hosts('y'),
    existing: pods('a4 b2 x1 y3'),
    want: 'a:16 b:0 x:100',
  },
  {
    name: 'zone, 4/2/1/~3~, 3 of 4 candidates (failed nodes still count)',
    pod: pod({ spread: [soft(1, 'zone')] }),
    nodes: HZ4.slice(0, 3),
    failed: HZ4.slice(3),
    existing: pods('a4 b2 x1 y3'),
    want: 'a:75 b:75 x:100',
  },
  {
    name: 'zone and hostname, 2/~1~/2/~4~, 2 of 4 candidates',
    pod: pod({ spread: [soft(1, 'zone'), soft(1, HOST)] }),
    nodes: [HZ4[0], HZ4[2]] as NodeInfo[],
    failed: [HZ4[1], HZ4[3]] as NodeInfo[],
    existing: pods('a2 b1 x2 y4'),
    want: 'a:100 x:63',
  },
  {
    name: 'zone and hostname with different selectors',
    pod: pod({ labels: 'foo,bar', spread: [soft(1, 'zone'), soft(1, HOST, bar)] }),
    nodes: HZ4,
    existing: pods('a1:foo b1:foo,bar y1:foo y1:bar'),
    want: 'a:60 b:20 x:100 y:60',
  },
  {
    name: 'different selectors, some nodes have 0 pods',
    pod: pod({ labels: 'foo,bar', spread: [soft(1, 'zone'), soft(1, HOST, bar)] }),
    nodes: HZ4,
    existing: pods('b1:bar x1:foo y1:foo,bar'),
    want: 'a:100 b:60 x:40 y:0',
  },
  {
    name: 'different selectors, 3 of 4 candidates',
    pod: pod({ labels: 'foo,bar', spread: [soft(1, 'zone'), soft(1, HOST, bar)] }),
    nodes: HZ4.slice(0, 3),
    failed: HZ4.slice(3),
    existing: pods('a1:foo b1:foo,bar y1:foo y1:bar'),
    want: 'a:50 b:25 x:100',
  },
  {
    name: 'existing pods in a different namespace do not count',
    pod: pod({ spread: [soft(1, HOST)] }),
    nodes: hosts('a', 'b'),
    existing: [...pods('a1', { ns: 'ns1' }), ...pods('a1 b2')],
    want: 'a:100 b:33',
  },
  {
    name: 'terminating pods are excluded',
    pod: pod({ spread: [soft(1, HOST)] }),
    nodes: hosts('a', 'b'),
    existing: [...pods('a1', { terminating: true }), ...pods('b1')],
    want: 'a:100 b:0',
  },
  {
    name: 'minDomains has no effect on ScheduleAnyway',
    pod: pod({ spread: [soft(2, 'node', foo, { minDomains: 10 })] }),
    nodes: nodeKey3(['', '', '']),
    existing: pods('a2 b2 c1'),
    want: 'a:75 b:75 c:100',
  },
  {
    name: 'NodeAffinityPolicy Honor with nodeSelector',
    pod: pod({ ...fooSel, spread: [soft(1, 'node')] }),
    nodes: nodeKey3([',foo', ',foo', '']),
    existing: pods('a2 b1 c1'),
    want: 'a:0 b:33 c:100',
  },
  {
    name: 'NodeAffinityPolicy Ignore with nodeSelector',
    pod: pod({ ...fooSel, spread: [soft(1, 'node', foo, ignore)] }),
    nodes: nodeKey3([',foo', ',foo', '']),
    existing: pods('a2 b1 c1'),
    want: 'a:66 b:100 c:100',
  },
  {
    name: 'NodeAffinityPolicy Honor with nodeAffinity',
    pod: pod({ affinity: ['foo', 'In', ['']], spread: [soft(1, 'node')] }),
    nodes: nodeKey3([',foo', ',foo', '']),
    existing: pods('a2 b1 c1'),
    want: 'a:0 b:33 c:100',
  },
  {
    name: 'NodeTaintsPolicy Honor',
    pod: pod({ spread: [soft(1, 'node', foo, honorTaints)] }),
    nodes: nodeKey3(['', '', ''], true),
    existing: pods('a2 b1 c1'),
    want: 'a:0 b:33 c:100',
  },
  {
    name: 'NodeTaintsPolicy Ignore',
    pod: pod({ spread: [soft(1, 'node')] }),
    nodes: nodeKey3(['', '', ''], true),
    existing: pods('a2 b1 c1'),
    want: 'a:66 b:100 c:100',
  },
  {
    name: 'matchLabelKeys ANDed with an empty labelSelector',
    pod: pod({
      labels: 'foo,bar',
      spread: [
        soft(1, 'zone', {}, { matchLabelKeys: ['foo'] }),
        soft(1, HOST, {}, { matchLabelKeys: ['bar'] }),
      ],
    }),
    nodes: HZ4,
    existing: pods('a1:foo b1:foo,bar x1:foo x1:bar'),
    want: 'a:60 b:20 x:60 y:100',
  },
  {
    name: 'matchLabelKeys ANDed with a non-empty labelSelector',
    pod: pod({
      labels: 'foo,bar,baz',
      spread: [soft(1, 'zone'), soft(1, HOST, bar, { matchLabelKeys: ['baz'] })],
    }),
    nodes: HZ4,
    existing: pods('a1:foo b1:foo,bar,baz x1:foo x1:bar x1:bar,baz'),
    want: 'a:60 b:20 x:60 y:100',
  },
  {
    name: 'List defaults require every key: a node without one is ignored',
    pod: pod(rs1),
    nodes: [hostZone('a', 'z1'), hostZone('b', 'z2'), ...hosts('c')],
    existing: pods('a1', rs1),
    args: {
      defaultingType: 'List',
      defaultConstraints: [soft(1, HOST, undefined), soft(1, 'zone', undefined)],
    },
    want: 'a:0 b:100 c:0',
  },
];

describe('PodTopologySpread Score', () => {
  for (const c of scoreCases) {
    it(c.name, () => {
      expect(runScore(c.nodes, c.failed ?? [], c.existing, c.pod, c.args)).toBe(c.want);
    });
  }

  it('PreScore skips when there is no soft constraint', () => {
    const nodes = hosts('a', 'b');
    expect(runScore(nodes, [], [], pod({ spread: [hard(1, HOST)] }), {})).toBe('skip');
    expect(runScore(nodes, [], [], pod(), { defaultingType: 'List' })).toBe('skip');
    // System defaults apply only to pods a Service, RC, ReplicaSet or StatefulSet selects.
    expect(runScore(nodes, [], [], pod(), {})).toBe('skip');
    expect(runScore(nodes, [], [], pod({ owner: ['Job', 'j'] }), {})).toBe('skip');
    expect(runScore(nodes, [], [], pod({ owner: ['StatefulSet', 's'] }), {})).not.toBe('skip');
    expect(runScore(nodes, [], [], pod({ owner: ['Job', 'j'], labels: 'svc=front' }), {})).not.toBe('skip');
  });
});

// The checker's own table tests: small hand-built cluster states, each with the violations it must report.
import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  affinity,
  antiAffinity,
  container,
  cpu,
  HOSTNAME,
  type PodOpts,
  pod,
  podTerm,
  selector,
  spread,
  taint,
  toleration,
  ZONE,
} from './build.js';
import { type ClusterSnapshot, checkHardConstraints, checkRules } from './checker.js';
import { milli, podRequests } from './semantics.js';

function n(
  name: string,
  o: { labels?: Record<string, string>; alloc?: Record<string, string>; taints?: V1Node['spec'] } = {},
): V1Node {
  const allocatable = { cpu: '4', memory: '8Gi', pods: '110', ...o.alloc };
  return {
    metadata: { name, labels: { [HOSTNAME]: name, ...o.labels } },
    spec: o.taints ?? {},
    status: { allocatable, capacity: allocatable },
  };
}

/** A pod bound to `node`; names starting with "old" count as pre-bound (not scheduled). */
function p(name: string, node: string, o: PodOpts = {}): V1Pod {
  const def = pod(name, o);
  return {
    metadata: { name, namespace: o.namespace ?? 'ns', labels: def.labels ?? {} },
    spec: { ...def.spec, nodeName: node },
    status: { phase: 'Running' },
  };
}

const ns = (name: string, labels: Record<string, string> = {}): V1Namespace => ({
  metadata: { name, labels },
});

function check(nodes: V1Node[], pods: V1Pod[], namespaces = [ns('ns')]): string[] {
  const snap: ClusterSnapshot = { nodes, pods, namespaces };
  return checkHardConstraints(snap, (x) => !x.metadata?.name?.startsWith('old')).map(
    (v) => `${v.plugin} ${v.pod}`,
  );
}

const zoned = (name: string, zone: string) => n(name, { labels: { [ZONE]: zone } });
const web = { app: 'web' };

describe('quantities and requests', () => {
  it.each([
    ['1', 1000n],
    ['250m', 250n],
    ['1.5', 1500n],
    ['1Ki', 1024000n],
    ['1Gi', 1073741824000n],
    ['2e3', 2000000n],
    ['1n', 1n],
  ])('milli(%s) = %s', (q, want) => {
    expect(milli(q)).toBe(want);
  });

  it('applies the sidecar formula, pod-level requests and overhead', () => {
    const sidecarFirst = p('x', 'n1', {
      ...cpu('500m'),
      spec: {
        initContainers: [
          container('proxy', { ...cpu('1'), restartPolicy: 'Always' }),
          container('migrate', cpu('2')),
        ],
      },
    });
    expect(podRequests(sidecarFirst).get('cpu')).toBe(3000n);
    const podLevel = p('y', 'n1', {
      ...cpu('100m'),
      spec: { resources: { requests: { cpu: '2' } }, overhead: { cpu: '250m' } },
    });
    expect(podRequests(podLevel).get('cpu')).toBe(2250n);
  });
});

describe('checkHardConstraints', () => {
  const cases: Array<[string, V1Node[], V1Pod[], string[]]> = [
    ['fits', [n('n1')], [p('old', 'n1', cpu('3')), p('a', 'n1', cpu('1'))], []],
    [
      'cpu over allocatable',
      [n('n1')],
      [p('old', 'n1', cpu('3')), p('a', 'n1', cpu('1500m'))],
      ['NodeResourcesFit ns/a'],
    ],
    [
      'extended resource on a node without it',
      [n('n1')],
      [p('a', 'n1', { requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } })],
      ['NodeResourcesFit ns/a'],
    ],
    [
      'pod count',
      [n('n1', { alloc: { pods: '1' } })],
      [p('old', 'n1'), p('a', 'n1')],
      ['NodeResourcesFit ns/a'],
    ],
    [
      'untolerated NoSchedule taint, PreferNoSchedule ignored',
      [n('n1', { taints: { taints: [taint('k', 'NoSchedule', 'v'), taint('s', 'PreferNoSchedule')] } })],
      [p('a', 'n1'), p('b', 'n1', { spec: { tolerations: [toleration('k', 'NoSchedule', 'v')] } })],
      ['TaintToleration ns/a'],
    ],
    [
      'cordoned node',
      [n('n1', { taints: { unschedulable: true } })],
      [p('a', 'n1')],
      ['NodeUnschedulable ns/a'],
    ],
    [
      'nodeSelector mismatch',
      [n('n1')],
      [p('a', 'n1', { spec: { nodeSelector: { disk: 'ssd' } } })],
      ['NodeAffinity ns/a'],
    ],
    [
      'host port clash via wildcard, not across protocols',
      [n('n1')],
      [
        p('old', 'n1', { hostPorts: [[80, 'TCP', '10.0.0.1']] }),
        p('a', 'n1', { hostPorts: [[80]] }),
        p('b', 'n1', { hostPorts: [[80, 'UDP']] }),
      ],
      ['NodePorts ns/a'],
    ],
    [
      'anti-affinity of an existing pod (symmetry)',
      [n('n1'), n('n2')],
      [
        p('old', 'n1', { spec: { affinity: antiAffinity(podTerm(HOSTNAME, selector(web))) } }),
        p('a', 'n1', { labels: web }),
        p('b', 'n2', { labels: web }),
      ],
      ['InterPodAffinity ns/a'],
    ],
    [
      'own anti-affinity on zone',
      [zoned('n1', 'a'), zoned('n2', 'a')],
      [
        p('old', 'n1', { labels: web }),
        p('a', 'n2', { spec: { affinity: antiAffinity(podTerm(ZONE, selector(web))) } }),
      ],
      ['InterPodAffinity ns/a'],
    ],
    [
      'affinity satisfied in zone; first pod of a self-affine group',
      [zoned('n1', 'a'), zoned('n2', 'b')],
      [
        p('old', 'n1', { labels: { app: 'cache' } }),
        p('a', 'n1', { spec: { affinity: affinity(podTerm(ZONE, selector({ app: 'cache' }))) } }),
        p('g', 'n2', {
          labels: { app: 'g' },
          spec: { affinity: affinity(podTerm(ZONE, selector({ app: 'g' }))) },
        }),
      ],
      [],
    ],
    [
      'affinity unsatisfied; self-affine pod away from a pre-bound match',
      [zoned('n1', 'a'), zoned('n2', 'b'), zoned('n3', 'c')],
      [
        p('old', 'n1', { labels: { app: 'cache' } }),
        p('a', 'n3', { spec: { affinity: affinity(podTerm(ZONE, selector({ app: 'cache' }))) } }),
        p('b', 'n2', {
          labels: { app: 'cache' },
          spec: { affinity: affinity(podTerm(ZONE, selector({ app: 'cache' }))) },
        }),
      ],
      ['InterPodAffinity ns/a', 'InterPodAffinity ns/b'],
    ],
    [
      'namespaceSelector scope',
      [n('n1')],
      [
        p('old', 'n1', { namespace: 'other', labels: web }),
        p('a', 'n1', { spec: { affinity: antiAffinity(podTerm(HOSTNAME, selector(web))) } }),
        p('b', 'n1', {
          spec: { affinity: antiAffinity(podTerm(HOSTNAME, selector(web), { namespaceSelector: {} })) },
        }),
      ],
      ['InterPodAffinity ns/b'],
    ],
    [
      'spread skew 2 > 1; node without the key',
      [zoned('n1', 'a'), zoned('n2', 'b'), n('n3')],
      [
        p('old', 'n1', { labels: web }),
        p('a', 'n1', { labels: web, spec: { topologySpreadConstraints: [spread(ZONE, selector(web))] } }),
        p('b', 'n3', { labels: web, spec: { topologySpreadConstraints: [spread(ZONE, selector(web))] } }),
      ],
      ['PodTopologySpread ns/a', 'PodTopologySpread ns/b'],
    ],
    [
      'minDomains makes the minimum 0',
      [zoned('n1', 'a'), zoned('n2', 'b')],
      [
        p('old', 'n2', { labels: web }),
        p('a', 'n1', { labels: web, spec: { topologySpreadConstraints: [spread(ZONE, selector(web))] } }),
        p('b', 'n1', {
          labels: web,
          spec: { topologySpreadConstraints: [spread(ZONE, selector(web), { minDomains: 3 })] },
        }),
      ],
      ['PodTopologySpread ns/b'],
    ],
  ];
  it.each(cases)('%s', (_name, nodes, pods, want) => {
    expect(check(nodes, pods, [ns('ns'), ns('other')]).sort()).toEqual([...want].sort());
  });
});

describe('checkRules', () => {
  it('reports allowedNodes, nodeSelector, maxCPU and burst violations', () => {
    const snap: ClusterSnapshot = {
      nodes: [n('n1'), n('n2')],
      pods: [p('a', 'n1', cpu('3')), p('b', 'n2', cpu('1')), p('c', 'n2', cpu('1')), p('d', 'n2', cpu('1'))],
      namespaces: [ns('ns')],
    };
    const rules = [
      {
        name: 'r',
        namespace: 'ns',
        maxCPU: 50,
        maxMemory: 100,
        allowedNodes: ['n1'],
        nodeSelector: { matchLabels: { pool: 'web' } },
        burst: { maxPlacements: 2 },
      },
    ];
    const got = checkRules(snap, rules, () => true).map((v) => `${v.node}: ${v.message}`);
    expect(got).toEqual([
      'n1: node does not match the rule nodeSelector',
      'n1: cpu 3 of 4 > 50%',
      'n2: node not in allowedNodes',
      'n2: node does not match the rule nodeSelector',
      'n2: cpu 3 of 4 > 50%',
      'n2: 3 placements > burst maxPlacements 2',
    ]);
  });
});

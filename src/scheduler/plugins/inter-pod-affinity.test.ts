/**
 * InterPodAffinity against the facts of kube-scheduler's interpodaffinity tests: filtering_test.go
 * (TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes, TestPreFilterStateAddRemovePod) and
 * scoring_test.go (TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight).
 * Upstream's namespace "" is "default" here; cases about invalid label syntax are left out (the API
 * server rejects such pods before the scheduler sees them).
 */

import { describe, expect, it } from 'vitest';
import { toNodeInfo, toPodInfo } from '../../cluster/convert.js';
import type { NodeInfo, PodInfo } from '../../cluster/model.js';
import { runFilters } from '../framework/runtime.js';
import { runScores } from '../framework/runtime-score.js';
import { type CycleContext, CycleState, type FilterReason } from '../framework/types.js';
import type { NodeVerdict } from '../framework/verdict.js';
import { cycleContext } from '../testing.js';
import {
  FILTER_STATE_KEY,
  type InterPodAffinityArgs,
  type InterPodAffinityFilterState,
  interPodAffinity,
  REASON_AFFINITY,
  REASON_ANTI_AFFINITY,
  REASON_EXISTING_ANTI_AFFINITY,
} from './inter-pod-affinity.js';
import { profileOf } from './plugin.testing.js';

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON, as a user writes it.
type Json = any;

const NAMESPACES: Record<string, Record<string, string>> = {
  default: {},
  NS1: {},
  'subteam1.team1': { team: 'team1' },
  'subteam2.team1': { team: 'team1' },
  'subteam1.team2': { team: 'team2' },
  'subteam2.team2': { team: 'team2' },
};

// ---- raw spec builders ----

const sel = (...exprs: [string, string, string[]?][]): Json => ({
  matchExpressions: exprs.map(([key, operator, values]) => ({ key, operator, values })),
});
const In = (key: string, ...values: string[]) => sel([key, 'In', values]);
const NotIn = (key: string, ...values: string[]) => sel([key, 'NotIn', values]);
const Exists = (key: string) => sel([key, 'Exists']);
const term = (topologyKey: string, labelSelector: Json, extra: Json = {}): Json => ({
  labelSelector,
  topologyKey,
  ...extra,
});
const req = (...terms: Json[]): Json => ({ requiredDuringSchedulingIgnoredDuringExecution: terms });
const pref = (...terms: [number, Json][]): Json => ({
  preferredDuringSchedulingIgnoredDuringExecution: terms.map(([weight, podAffinityTerm]) => ({
    weight,
    podAffinityTerm,
  })),
});

interface P {
  name?: string;
  ns?: string;
  labels?: Record<string, string>;
  node?: string;
  affinity?: Json;
  anti?: Json;
}
let seq = 0;
function pod(o: P = {}): PodInfo {
  return toPodInfo({
    metadata: { namespace: o.ns ?? 'default', name: o.name ?? `p${seq++}`, labels: o.labels },
    spec: {
      nodeName: o.node,
      containers: [{ name: 'c' }],
      affinity: { podAffinity: o.affinity, podAntiAffinity: o.anti },
    },
    status: { phase: o.node ? 'Running' : 'Pending' },
  });
}
function node(name: string, labels: Record<string, string>): NodeInfo {
  return toNodeInfo({
    metadata: { name, labels },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
}

function contextOf(p: PodInfo, nodes: NodeInfo[], pods: PodInfo[]): CycleContext {
  return cycleContext(p, nodes, pods, (ns) => NAMESPACES[ns]);
}

/** PreFilter, then Filter on each node with a fresh verdict; 'skip' when PreFilter skipped. */
function filterAll(
  p: PodInfo,
  nodes: NodeInfo[],
  pods: PodInfo[] = [],
): 'skip' | (readonly FilterReason[])[] {
  const plugin = interPodAffinity();
  const ctx = contextOf(p, nodes, pods);
  const state = new CycleState();
  if (plugin.preFilter(state, ctx)?.skip) return 'skip';
  return ctx.snapshot.list().map((n) => {
    const verdict: NodeVerdict = { node: n.name, feasible: false, reasons: [], rules: [] };
    plugin.filter(state, ctx, n, verdict);
    return verdict.reasons;
  });
}

/** PreScore, Score per node, NormalizeScore; 'skip' when PreScore skipped. */
function scoreAll(p: PodInfo, nodes: NodeInfo[], pods: PodInfo[] = [], args?: InterPodAffinityArgs) {
  const plugin = interPodAffinity(args);
  const ctx = contextOf(p, nodes, pods);
  const state = new CycleState();
  const list = ctx.snapshot.list();
  if (plugin.preScore(state, ctx, list) === 'skip') return 'skip';
  const raw = Float64Array.from(list.map((n) => plugin.score(state, ctx, n)));
  plugin.normalizeScore(state, ctx, raw);
  return [...raw];
}

const SHORT: Record<string, string> = {
  A: 'AffinityRulesNotMatch',
  N: 'AntiAffinityRulesNotMatch',
  E: 'ExistingAntiAffinityRulesNotMatch',
};
const TEXT: Record<string, string> = {
  AffinityRulesNotMatch: REASON_AFFINITY,
  AntiAffinityRulesNotMatch: REASON_ANTI_AFFINITY,
  ExistingAntiAffinityRulesNotMatch: REASON_EXISTING_ANTI_AFFINITY,
};

// ---- TestRequiredAffinitySingleNode ----

const node1 = node('node1', { region: 'r1', zone: 'z11' });
const securityscan = { service: 'securityscan' };
const S1 = { security: 'S1' };
const scanPod = () => pod({ labels: securityscan, node: 'node1' });
const withTeam1 = { namespaceSelector: sel(['team', 'In', ['team1']]) };

interface FilterCase {
  name: string;
  pod: PodInfo;
  pods?: PodInfo[];
  nodes?: NodeInfo[];
  /** Per node: '-' fits, A / N / E = affinity / anti-affinity / existing anti-affinity; or 'skip'. */
  want: string;
}

const single: FilterCase[] = [
  { name: 'no required terms and no existing pods: PreFilter skips', pod: pod(), want: 'skip' },
  {
    name: 'affinity In matches the existing pod',
    pod: pod({ labels: S1, affinity: req(term('region', In('service', 'securityscan', 'value2'))) }),
    pods: [scanPod()],
    want: '-',
  },
  {
    name: 'affinity NotIn matches the existing pod',
    pod: pod({ labels: S1, affinity: req(term('region', NotIn('service', 'securityscan3', 'value3'))) }),
    pods: [scanPod()],
    want: '-',
  },
  {
    name: 'affinity does not match a pod of another namespace',
    pod: pod({
      labels: S1,
      affinity: req(
        term('region', In('service', 'securityscan', 'value2'), { namespaces: ['DiffNameSpace'] }),
      ),
    }),
    pods: [pod({ ns: 'ns', labels: securityscan, node: 'node1' })],
    want: 'A',
  },
  {
    name: 'affinity selector does not match the existing pod',
    pod: pod({
      labels: securityscan,
      affinity: req(term('region', In('service', 'antivirusscan', 'value2'))),
    }),
    pods: [scanPod()],
    want: 'A',
  },
  {
    name: 'several affinity terms with different operators all match',
    pod: pod({
      labels: S1,
      affinity: req(
        term('region', sel(['service', 'Exists'], ['wrongkey', 'DoesNotExist'])),
        term('region', sel(['service', 'In', ['securityscan']], ['service', 'NotIn', ['WrongValue']])),
      ),
    }),
    pods: [scanPod()],
    want: '-',
  },
  {
    name: 'matchExpressions are ANDed: one requirement fails',
    pod: pod({
      labels: S1,
      affinity: req(
        term('region', sel(['service', 'Exists'], ['wrongkey', 'DoesNotExist'])),
        term('region', sel(['service', 'In', ['securityscan2']], ['service', 'NotIn', ['WrongValue']])),
      ),
    }),
    pods: [scanPod()],
    want: 'A',
  },
  {
    name: 'affinity and anti-affinity both satisfied',
    pod: pod({
      labels: S1,
      affinity: req(term('region', In('service', 'securityscan', 'value2'))),
      anti: req(term('node', In('service', 'antivirusscan', 'value2'))),
    }),
    pods: [scanPod()],
    want: '-',
  },
  {
    name: 'affinity, anti-affinity and the existing pod’s anti-affinity all satisfied',
    pod: pod({
      labels: S1,
      affinity: req(term('region', In('service', 'securityscan', 'value2'))),
      anti: req(term('node', In('service', 'antivirusscan', 'value2'))),
    }),
    pods: [
      pod({
        labels: securityscan,
        node: 'node1',
        anti: req(term('node', In('service', 'antivirusscan', 'value2'))),
      }),
    ],
    want: '-',
  },
  {
    name: 'affinity satisfied, anti-affinity in zone violated',
    pod: pod({
      labels: S1,
      affinity: req(term('region', In('service', 'securityscan', 'value2'))),
      anti: req(term('zone', In('service', 'securityscan', 'value2'))),
    }),
    pods: [scanPod()],
    want: 'N',
  },
  {
    name: 'own rules satisfied, the existing pod’s anti-affinity (symmetry) violated',
    pod: pod({
      labels: securityscan,
      affinity: req(term('region', In('service', 'securityscan', 'value2'))),
      anti: req(term('node', In('service', 'antivirusscan', 'value2'))),
    }),
    pods: [
      pod({
        labels: securityscan,
        node: 'node1',
        anti: req(term('zone', In('service', 'securityscan', 'value2'))),
      }),
    ],
    want: 'E',
  },
  {
    name: 'pod does not match its own NotIn affinity and nothing else matches',
    pod: pod({
      labels: securityscan,
      affinity: req(term('region', NotIn('service', 'securityscan', 'value2'))),
    }),
    pods: [pod({ labels: securityscan, node: 'node2' })],
    want: 'A',
  },
  {
    name: 'existing pod’s anti-affinity applies to a pod without any terms',
    pod: pod({ labels: securityscan }),
    pods: [
      pod({
        labels: securityscan,
        node: 'node1',
        anti: req(term('zone', In('service', 'securityscan', 'value2'))),
      }),
    ],
    want: 'E',
  },
  {
    name: 'existing pod’s anti-affinity that does not select the pod: PreFilter skips',
    pod: pod({ labels: securityscan }),
    pods: [
      pod({
        labels: securityscan,
        node: 'node1',
        anti: req(term('zone', NotIn('service', 'securityscan', 'value2'))),
      }),
    ],
    want: 'skip',
  },
  {
    name: 'own anti-affinity is checked before the existing pod’s',
    pod: pod({
      labels: securityscan,
      anti: req(term('region', Exists('service')), term('region', Exists('security'))),
    }),
    pods: [pod({ labels: S1, node: 'node1', anti: req(term('zone', Exists('security'))) })],
    want: 'N',
  },
  {
    name: 'symmetry a1: terms partially match each other',
    pod: pod({
      labels: securityscan,
      anti: req(term('zone', Exists('service')), term('zone', Exists('security'))),
    }),
    pods: [pod({ labels: S1, node: 'node1', anti: req(term('zone', Exists('security'))) })],
    want: 'N',
  },
  {
    name: 'symmetry a2: terms partially match each other',
    pod: pod({ labels: S1, anti: req(term('zone', Exists('security'))) }),
    pods: [
      pod({
        labels: securityscan,
        node: 'node1',
        anti: req(term('zone', Exists('service')), term('zone', Exists('security'))),
      }),
    ],
    want: 'E',
  },
  {
    name: 'symmetry b1',
    pod: pod({
      labels: { abc: '', xyz: '' },
      anti: req(term('zone', Exists('abc')), term('zone', Exists('def'))),
    }),
    pods: [
      pod({
        labels: { def: '', xyz: '' },
        node: 'node1',
        anti: req(term('zone', Exists('abc')), term('zone', Exists('def'))),
      }),
    ],
    want: 'N',
  },
  {
    name: 'symmetry b2',
    pod: pod({
      labels: { def: '', xyz: '' },
      anti: req(term('zone', Exists('abc')), term('zone', Exists('def'))),
    }),
    pods: [
      pod({
        labels: { abc: '', xyz: '' },
        node: 'node1',
        anti: req(term('zone', Exists('abc')), term('zone', Exists('def'))),
      }),
    ],
    want: 'N',
  },
  {
    name: 'affinity with a matching namespaceSelector',
    pod: pod({
      labels: S1,
      affinity: req(term('region', In('service', 'securityscan', 'value2'), withTeam1)),
    }),
    pods: [pod({ ns: 'subteam1.team1', labels: securityscan, node: 'node1' })],
    want: '-',
  },
  {
    name: 'affinity with a non-matching namespaceSelector',
    pod: pod({
      labels: S1,
      affinity: req(term('region', In('service', 'securityscan', 'value2'), withTeam1)),
    }),
    pods: [pod({ ns: 'subteam1.team2', labels: securityscan, node: 'node1' })],
    want: 'A',
  },
  {
    name: 'anti-affinity with a matching namespaceSelector',
    pod: pod({
      ns: 'subteam1.team1',
      labels: S1,
      anti: req(term('zone', In('service', 'securityscan', 'value2'), withTeam1)),
    }),
    pods: [pod({ ns: 'subteam2.team1', labels: securityscan, node: 'node1' })],
    want: 'N',
  },
  {
    name: 'anti-affinity with an empty namespaceSelector (every namespace)',
    pod: pod({
      ns: 'subteam1.team1',
      labels: S1,
      anti: req(term('zone', In('service', 'securityscan', 'value2'), { namespaceSelector: {} })),
    }),
    pods: [pod({ ns: 'subteam2.team1', labels: securityscan, node: 'node1' })],
    want: 'N',
  },
  {
    name: 'anti-affinity with a non-matching namespaceSelector',
    pod: pod({
      ns: 'subteam1.team1',
      labels: S1,
      anti: req(term('zone', In('service', 'securityscan', 'value2'), withTeam1)),
    }),
    pods: [pod({ ns: 'subteam1.team2', labels: securityscan, node: 'node1' })],
    want: '-',
  },
];

// ---- TestRequiredAffinityMultipleNodes ----

const china = { region: 'China' };
const chinaAz1 = { region: 'China', az: 'az1' };
const india = { region: 'India' };
const threeRegions = [node('node1', china), node('node2', chinaAz1), node('node3', india)];
const abcNodes = (zoneB = 'z2', zoneC?: string) => [
  node('nodeA', { region: 'r1', zone: 'z1', hostname: 'nodeA' }),
  node('nodeB', { region: 'r1', zone: zoneB, hostname: 'nodeB' }),
  ...(zoneC ? [node('nodeC', { region: 'r1', zone: zoneC, hostname: 'nodeC' })] : []),
];
const foo = { foo: '' };
const fooBar = { foo: '', bar: '' };

const multiple: FilterCase[] = [
  {
    name: 'every node sharing the topology value of a matching pod fits',
    pod: pod({ affinity: req(term('region', In('foo', 'bar'))) }),
    pods: [pod({ node: 'node1', labels: { foo: 'bar' } })],
    nodes: threeRegions,
    want: '- - A',
  },
  {
    name: 'first pod of a self-affine group may go anywhere with the topology key',
    pod: pod({
      labels: { foo: 'bar', service: 'securityscan' },
      affinity: req(term('zone', In('foo', 'bar')), term('zone', In('service', 'securityscan'))),
    }),
    pods: [pod({ node: 'nodeA', labels: { foo: 'bar' } })],
    nodes: [node('nodeA', { zone: 'az1', hostname: 'h1' }), node('nodeB', { zone: 'az2', hostname: 'h2' })],
    want: '- -',
  },
  {
    name: 'first pod of a group still needs nodes carrying the topology key',
    pod: pod({
      labels: { foo: 'bar', service: 'securityscan' },
      affinity: req(term('zone', In('foo', 'bar')), term('zone', In('service', 'securityscan'))),
    }),
    pods: [pod({ node: 'nodeA', labels: { foo: 'bar' } })],
    nodes: [
      node('nodeA', { zoneLabel: 'az1', hostname: 'h1' }),
      node('nodeB', { zoneLabel: 'az2', hostname: 'h2' }),
    ],
    want: 'A A',
  },
  {
    name: 'anti-affinity blocks every node of the matching pod’s region',
    pod: pod({ anti: req(term('region', In('foo', 'abc'))) }),
    pods: [pod({ node: 'nodeA', labels: { foo: 'abc' } })],
    nodes: [
      node('nodeA', { region: 'r1', hostname: 'nodeA' }),
      node('nodeB', { region: 'r1', hostname: 'nodeB' }),
    ],
    want: 'N N',
  },
  {
    name: 'anti-affinity fails when any one term matches',
    pod: pod({ anti: req(term('region', In('foo', 'abc')), term('zone', In('service', 'securityscan'))) }),
    pods: [pod({ node: 'nodeA', labels: { foo: 'abc', service: 'securityscan' } })],
    nodes: [
      node('nodeA', { region: 'r1', zone: 'z1', hostname: 'nodeA' }),
      node('nodeB', { region: 'r1', zone: 'z2', hostname: 'nodeB' }),
    ],
    want: 'N N',
  },
  {
    name: 'anti-affinity leaves other regions free',
    pod: pod({ anti: req(term('region', In('foo', 'abc'))) }),
    pods: [pod({ node: 'node1', labels: { foo: 'abc' } })],
    nodes: threeRegions,
    want: 'N N -',
  },
  {
    name: 'anti-affinity of a pod in another namespace does not select the pod',
    pod: pod({ ns: 'NS1', labels: { foo: '123' }, anti: req(term('region', In('foo', 'bar'))) }),
    pods: [
      pod({ ns: 'NS1', node: 'node1', labels: { foo: 'bar' } }),
      pod({ ns: 'NS2', node: 'node3', anti: req(term('region', In('foo', '123'))) }),
    ],
    nodes: threeRegions,
    want: 'N N -',
  },
  {
    name: 'existing pod’s term whose topology key no node has: PreFilter skips',
    pod: pod({ labels: foo }),
    pods: [pod({ node: 'nodeA', anti: req(term('invalid-node-label', Exists('foo'))) })],
    nodes: abcNodes('z1'),
    want: 'skip',
  },
  {
    name: 'own anti-affinity term whose topology key no node has',
    pod: pod({ anti: req(term('invalid-node-label', Exists('foo'))) }),
    pods: [pod({ node: 'nodeA', labels: foo })],
    nodes: abcNodes('z1'),
    want: '- -',
  },
  {
    name: 'pod violates each existing pod’s terms on every node',
    pod: pod({ labels: fooBar }),
    pods: [
      pod({ node: 'nodeA', anti: req(term('zone', Exists('foo'))) }),
      pod({ node: 'nodeA', anti: req(term('region', Exists('bar'))) }),
    ],
    nodes: abcNodes(),
    want: 'E E',
  },
  {
    name: 'pod’s anti-affinity violated on every node',
    pod: pod({ anti: req(term('zone', Exists('foo')), term('region', Exists('bar'))) }),
    pods: [pod({ node: 'nodeA', labels: foo }), pod({ node: 'nodeB', labels: { bar: '' } })],
    nodes: abcNodes(),
    want: 'N N',
  },
  {
    name: 'existing pod’s terms count only where selector and topology key both match',
    pod: pod({ labels: fooBar }),
    pods: [
      pod({
        node: 'nodeA',
        anti: req(term('invalid-node-label', Exists('foo')), term('zone', Exists('bar'))),
      }),
    ],
    nodes: abcNodes(),
    want: 'E -',
  },
  {
    name: 'own terms count only where selector and topology key both match',
    pod: pod({ anti: req(term('invalid-node-label', Exists('foo')), term('zone', Exists('bar'))) }),
    pods: [pod({ name: 'podA', node: 'nodeA', labels: fooBar })],
    nodes: abcNodes(),
    want: 'N -',
  },
  {
    name: 'existing pod’s region and zone terms',
    pod: pod({ labels: fooBar }),
    pods: [pod({ node: 'nodeA', anti: req(term('region', Exists('foo')), term('zone', Exists('bar'))) })],
    nodes: abcNodes(),
    want: 'E E',
  },
  {
    name: 'own region and zone terms',
    pod: pod({ anti: req(term('region', Exists('foo')), term('zone', Exists('bar'))) }),
    pods: [pod({ node: 'nodeA', labels: fooBar })],
    nodes: abcNodes(),
    want: 'N N',
  },
  {
    name: 'existing pods on nodeA and nodeB each have one term selecting the pod',
    pod: pod({ labels: fooBar }),
    pods: [
      pod({ node: 'nodeA', anti: req(term('zone', Exists('foo')), term('zone', Exists('labelA'))) }),
      pod({ node: 'nodeB', anti: req(term('zone', Exists('bar')), term('zone', Exists('labelB'))) }),
    ],
    nodes: abcNodes('z2', 'z3'),
    want: 'E E -',
  },
  {
    name: 'affinity: one pod matches all terms, then every topology key is checked',
    pod: pod({ affinity: req(term('region', Exists('foo')), term('zone', Exists('bar'))) }),
    pods: [pod({ name: 'pod1', node: 'nodeA', labels: fooBar })],
    nodes: abcNodes('z1'),
    want: '- -',
  },
  {
    name: 'affinity must be satisfied by a single pod',
    pod: pod({ affinity: req(term('region', Exists('foo')), term('zone', Exists('bar'))) }),
    pods: [
      pod({ name: 'pod1', node: 'nodeA', labels: foo }),
      pod({ name: 'pod2', node: 'nodeB', labels: { bar: '' } }),
    ],
    nodes: abcNodes(),
    want: 'A A',
  },
  // beyond upstream's tables
  {
    name: 'first pod of a group: a match on a node without the topology key does not count',
    pod: pod({ labels: { app: 'db' }, affinity: req(term('zone', In('app', 'db'))) }),
    pods: [pod({ node: 'nodeX', labels: { app: 'db' } })],
    nodes: [node('nodeX', { hostname: 'x' }), node('nodeA', { zone: 'z1' })],
    want: 'A -',
  },
  {
    name: 'matchLabelKeys are not re-applied: the API server merged them into labelSelector',
    pod: pod({
      labels: { app: 'web', version: 'v2' },
      anti: req(term('zone', In('app', 'web'), { matchLabelKeys: ['version'] })),
    }),
    pods: [pod({ node: 'node1', labels: { app: 'web', version: 'v1' } })],
    want: 'N',
  },
  {
    name: 'own namespaceSelector does not select a namespace the cache does not know',
    pod: pod({
      labels: S1,
      anti: req(term('zone', Exists('service'), { namespaceSelector: NotIn('team', 'team1') })),
    }),
    pods: [pod({ ns: 'ghost', labels: securityscan, node: 'node1' })],
    want: '-',
  },
  {
    name: 'existing namespaceSelector NotIn selects a pod of an unknown namespace (no labels)',
    pod: pod({ ns: 'ghost', labels: securityscan }),
    pods: [
      pod({
        node: 'node1',
        anti: req(term('zone', Exists('service'), { namespaceSelector: NotIn('team', 'team1') })),
      }),
    ],
    want: 'E',
  },
  {
    name: 'absent labelSelector selects no pod',
    pod: pod({ labels: securityscan, anti: req({ topologyKey: 'zone' }) }),
    pods: [pod({ node: 'node1', labels: securityscan, anti: req({ topologyKey: 'zone' }) })],
    want: '-',
  },
];

describe('InterPodAffinity Filter', () => {
  for (const c of [...single, ...multiple]) {
    it(c.name, () => {
      const got = filterAll(c.pod, c.nodes ?? [node1], c.pods ?? []);
      if (c.want === 'skip') {
        expect(got).toBe('skip');
        return;
      }
      expect(got).not.toBe('skip');
      const reasons = got as FilterReason[][];
      const want = c.want.split(' ').map((w) => (w === '-' ? [] : [SHORT[w]]));
      expect(reasons.map((rs) => rs.map((r) => r.code))).toEqual(want);
      for (const r of reasons.flat()) {
        expect(r.plugin).toBe('InterPodAffinity');
        expect(r.reason).toBe(TEXT[r.code]);
        expect(r.unresolvable === true).toBe(r.code === 'AffinityRulesNotMatch');
      }
    });
  }

  it('details name the matching pod and topology pair', () => {
    const host = (n: string) => node(n, { 'kubernetes.io/hostname': n, zone: 'z1' });
    const web = pod({ ns: 'shop', name: 'web-1', node: 'n1', labels: { app: 'web' } });
    const antiWeb = pod({
      ns: 'shop',
      labels: { app: 'web' },
      anti: req(term('kubernetes.io/hostname', { matchLabels: { app: 'web' } })),
    });
    const got = filterAll(antiWeb, [host('n1'), host('n2')], [web]) as FilterReason[][];
    expect(got[0]?.[0]?.detail).toBe(
      'pod shop/web-1 on topology kubernetes.io/hostname=n1 matches anti-affinity term app=web',
    );
    expect(got[1]).toEqual([]);

    const guard = pod({ ns: 'shop', name: 'guard', node: 'n1', anti: req(term('zone', In('app', 'web'))) });
    const plain = pod({ ns: 'shop', labels: { app: 'web' } });
    const e = filterAll(plain, [host('n1'), host('n2')], [guard]) as FilterReason[][];
    expect(e[1]?.[0]?.detail).toBe(
      'pod shop/guard on topology zone=z1 has required anti-affinity term app in (web) matching this pod',
    );

    const wantsDb = pod({ affinity: req(term('rack', In('app', 'db'))) });
    const a = filterAll(
      wantsDb,
      [host('n1'), node('n3', { rack: 'r1' }), node('n4', { rack: 'r2' })],
      [pod({ node: 'n3', labels: { app: 'db' } })],
    ) as FilterReason[][];
    expect(a[0]?.[0]?.detail).toBe(
      'node has no label rack, the topology key of required affinity term app in (db)',
    );
    expect(a[1]).toEqual([]);
    expect(a[2]?.[0]?.detail).toBe(
      'no pod matching all required affinity terms runs in topology rack=r2 (term app in (db))',
    );
    const lonely = filterAll(wantsDb, [node('n4', { rack: 'r2' })]) as FilterReason[][];
    expect(lonely[0]?.[0]?.detail).toBe(
      'no pod matches all required affinity terms (app in (db)) and the pod does not match them itself',
    );
  });

  it('addPod / removePod update the PreFilter counts (TestPreFilterStateAddRemovePod)', () => {
    const fooBarAnti = req(term('region', In('foo', 'bar')));
    const pending = pod({ name: 'pending', labels: { foo: 'bar' }, anti: fooBarAnti });
    const nodes = [
      node('nodeA', { region: 'r1', zone: 'z11' }),
      node('nodeB', { region: 'r1', zone: 'z12' }),
      node('nodeC', { region: 'r2', zone: 'z21' }),
    ];
    const existing = [
      pod({ name: 'p1', labels: { foo: 'bar' }, node: 'nodeA' }),
      pod({ name: 'p2', node: 'nodeC', anti: fooBarAnti }),
    ];
    const plugin = interPodAffinity();
    const ctx = contextOf(pending, nodes, existing);
    const state = new CycleState();
    plugin.preFilter(state, ctx);
    const s = state.read<InterPodAffinityFilterState>(FILTER_STATE_KEY) as InterPodAffinityFilterState;
    const counts = () => ({
      existing: Object.fromEntries(s.existingAntiCounts),
      anti: Object.fromEntries(s.antiCounts),
      affinity: Object.fromEntries(s.affinityCounts),
    });
    const before = counts();
    expect(before).toEqual({ existing: { 'region=r2': 1 }, anti: { 'region=r1': 1 }, affinity: {} });
    const added = pod({ name: 'addedPod', labels: { foo: 'bar' }, node: 'nodeB', anti: fooBarAnti });
    const nodeB = ctx.snapshot.get('nodeB');
    if (!nodeB) throw new Error('no nodeB');
    plugin.addPod(state, ctx, added, nodeB);
    expect(counts()).toEqual({
      existing: { 'region=r2': 1, 'region=r1': 1 },
      anti: { 'region=r1': 2 },
      affinity: {},
    });
    plugin.removePod(state, ctx, added, nodeB);
    expect(counts()).toEqual(before);
  });

  it('runs through the framework runtime', () => {
    const p = pod({ anti: req(term('region', In('foo', 'abc'))) });
    const ctx = contextOf(p, threeRegions, [pod({ node: 'node1', labels: { foo: 'abc' } })]);
    const { verdicts, feasible } = runFilters(profileOf(interPodAffinity()), ctx);
    expect(verdicts.map((v) => v.feasible)).toEqual([false, false, true]);
    expect(feasible.map((n) => n.name)).toEqual(['node3']);
  });
});

// ---- scoring_test.go ----

const S2 = { security: 'S2' };
const az1 = { az: 'az1' };
const az2 = { az: 'az2' };
const stayWithS1InRegion = pref([5, term('region', In('security', 'S1'))]);
const stayWithS2InRegion = pref([6, term('region', In('security', 'S2'))]);
const affinity3 = pref(
  [8, term('region', sel(['security', 'NotIn', ['S1']], ['security', 'In', ['S2']]))],
  [2, term('region', sel(['security', 'Exists'], ['wrongkey', 'DoesNotExist']))],
);
const hardAffinity = req(
  term('region', In('security', 'S1', 'value2')),
  term('region', sel(['security', 'Exists'], ['wrongkey', 'DoesNotExist'])),
);
const awayFromS1InAz = pref([5, term('az', In('security', 'S1'))]);
const awayFromS2InAz = pref([5, term('az', In('security', 'S2'))]);
const nsSelectorTerm = term('region', In('security', 'S1'), { namespaces: ['subteam2.team2'], ...withTeam1 });
const nsSelectorPref = pref([5, nsSelectorTerm]);
const n = (...labels: Record<string, string>[]) => labels.map((l, i) => node(`node${i + 1}`, l));
const on = (i: number, o: P = {}) => pod({ node: `node${i}`, ...o });

interface ScoreCase {
  name: string;
  pod: PodInfo;
  pods?: PodInfo[];
  nodes: NodeInfo[];
  args?: InterPodAffinityArgs;
  want: number[] | 'skip';
}

const scoreCases: ScoreCase[] = [
  {
    name: 'pod without affinity, no pods with affinity: skip',
    pod: pod({ labels: S1 }),
    nodes: n(china, india, az1),
    want: 'skip',
  },
  {
    name: 'affinity: matching topology and pods score high',
    pod: pod({ labels: S1, affinity: stayWithS1InRegion }),
    pods: [on(1, { labels: S1 }), on(2, { labels: S2 }), on(3, { labels: S1 })],
    nodes: n(china, india, az1),
    want: [100, 0, 0],
  },
  {
    name: 'affinity: every node of the matching topology value scores the same',
    pod: pod({ affinity: stayWithS1InRegion }),
    pods: [on(1, { labels: S1 })],
    nodes: n(china, chinaAz1, india),
    want: [100, 100, 0],
  },
  {
    name: 'affinity: the region with more matching pods wins',
    pod: pod({ labels: S1, affinity: stayWithS2InRegion }),
    pods: [
      on(1, { labels: S2 }),
      on(1, { labels: S2 }),
      on(2, { labels: S2 }),
      on(3, { labels: S2 }),
      on(4, { labels: S2 }),
      on(5, { labels: S2 }),
    ],
    nodes: n(china, india, china, china, india),
    want: [100, 0, 100, 100, 0],
  },
  {
    name: 'affinity: different operators, partial matches (2 vs 10 → 20)',
    pod: pod({ labels: S1, affinity: affinity3 }),
    pods: [on(1, { labels: S1 }), on(2, { labels: S2 }), on(3, { labels: S1 })],
    nodes: n(china, india, az1),
    want: [20, 100, 0],
  },
  {
    name: 'normalized scores are truncated (2 of 3 → 66)',
    pod: pod({
      labels: S1,
      affinity: pref([2, term('region', In('security', 'S1'))], [1, term('az', In('security', 'S1'))]),
    }),
    pods: [on(2, { labels: S1 })],
    nodes: n(china, chinaAz1, india),
    want: [66, 100, 0],
  },
  {
    name: 'affinity symmetry: existing pods’ preferred terms',
    pod: pod({ labels: S2 }),
    pods: [
      on(1, { labels: S1, affinity: stayWithS1InRegion }),
      on(2, { labels: S2, affinity: stayWithS2InRegion }),
    ],
    nodes: n(china, india, az1),
    want: [0, 100, 0],
  },
  {
    name: 'affinity symmetry with namespaceSelector',
    pod: pod({ ns: 'subteam1.team1', labels: S1 }),
    pods: [
      on(1, { labels: S1, affinity: nsSelectorPref }),
      on(2, { labels: S2, affinity: stayWithS2InRegion }),
    ],
    nodes: n(china, india, az1),
    want: [100, 0, 0],
  },
  {
    name: 'anti-affinity symmetry with namespaceSelector',
    pod: pod({ ns: 'subteam1.team1', labels: S1 }),
    pods: [on(1, { labels: S1, anti: nsSelectorPref }), on(2, { labels: S2, affinity: stayWithS2InRegion })],
    nodes: n(china, india, az1),
    want: [0, 100, 100],
  },
  {
    name: 'affinity symmetry: existing pods’ required terms × hardPodAffinityWeight',
    pod: pod({ labels: S1 }),
    pods: [on(1, { labels: S1, affinity: hardAffinity }), on(2, { labels: S2, affinity: hardAffinity })],
    nodes: n(china, india, az1),
    want: [100, 100, 0],
  },
  {
    name: 'anti-affinity: node with a matching pod in the topology scores low',
    pod: pod({ labels: S1, anti: awayFromS1InAz }),
    pods: [on(1, { labels: S1 }), on(2, { labels: S2 })],
    nodes: n(az1, china),
    want: [0, 100],
  },
  {
    name: 'anti-affinity: node without the topology key scores high',
    pod: pod({ labels: S1, anti: awayFromS1InAz }),
    pods: [on(1, { labels: S1 }), on(2, { labels: S1 })],
    nodes: n(az1, china),
    want: [0, 100],
  },
  {
    name: 'anti-affinity: more matching pods, lower score',
    pod: pod({ labels: S1, anti: awayFromS1InAz }),
    pods: [on(1, { labels: S1 }), on(1, { labels: S1 }), on(2, { labels: S2 })],
    nodes: n(az1, india),
    want: [0, 100],
  },
  {
    name: 'anti-affinity symmetry',
    pod: pod({ labels: S2 }),
    pods: [on(1, { labels: S1, anti: awayFromS2InAz }), on(2, { labels: S2, anti: awayFromS1InAz })],
    nodes: n(az1, az2),
    want: [0, 100],
  },
  {
    name: 'affinity and anti-affinity together',
    pod: pod({ labels: S1, affinity: stayWithS1InRegion, anti: awayFromS2InAz }),
    pods: [on(1, { labels: S1 }), on(2, { labels: S1 })],
    nodes: n(china, az1),
    want: [100, 0],
  },
  {
    name: 'same labels: together in the region, apart at node level',
    pod: pod({ labels: S1, affinity: pref([8, term('region', In('security', 'S1'))]), anti: awayFromS2InAz }),
    pods: [1, 1, 2, 3, 3, 4, 5].map((i) => on(i, { labels: S1 })),
    nodes: n(chinaAz1, india, china, china, india),
    want: [100, 0, 100, 100, 0],
  },
  {
    name: 'affinity, anti-affinity and both symmetries',
    pod: pod({ labels: S1, affinity: pref([8, term('region', In('security', 'S1'))]), anti: awayFromS2InAz }),
    pods: [
      on(1, { labels: S1 }),
      on(2, { labels: S2 }),
      on(3, { affinity: pref([8, term('region', In('security', 'S1'))]), anti: awayFromS2InAz }),
      on(4, { anti: awayFromS1InAz }),
    ],
    nodes: n(china, az1, india, az2),
    want: [100, 0, 100, 0],
  },
  {
    name: 'equal raw scores normalize to 0 (issue 82796)',
    pod: pod({ labels: S1 }),
    pods: [
      on(1, { labels: S1 }),
      on(2, { affinity: pref([8, term('region', In('security', 'S1'))]), anti: awayFromS2InAz }),
    ],
    nodes: n(china, china),
    want: [0, 0],
  },
  {
    name: 'own preferred affinity with namespaceSelector',
    pod: pod({ ns: 'subteam1.team1', labels: S1, affinity: nsSelectorPref }),
    pods: [
      on(1, { ns: 'subteam1.team1', labels: S1 }),
      on(1, { ns: 'subteam1.team1', labels: S1 }),
      on(1, { ns: 'subteam1.team2', labels: S1 }),
      on(2, { ns: 'subteam2.team1', labels: S1 }),
    ],
    nodes: n(china, india),
    want: [100, 0],
  },
  {
    name: 'own preferred affinity with namespaceSelector and namespaces',
    pod: pod({ ns: 'subteam1.team1', labels: S1, affinity: nsSelectorPref }),
    pods: [
      on(1, { ns: 'subteam1.team1', labels: S1 }),
      on(1, { ns: 'subteam1.team1', labels: S1 }),
      on(1, { ns: 'subteam2.team2', labels: S1 }),
      on(2, { ns: 'subteam2.team1', labels: S1 }),
    ],
    nodes: n(china, india),
    want: [100, 0],
  },
  {
    name: 'own preferred anti-affinity with namespaceSelector',
    pod: pod({ ns: 'subteam1.team1', labels: S1, anti: nsSelectorPref }),
    pods: [
      on(1, { ns: 'subteam1.team1', labels: S1 }),
      on(1, { ns: 'subteam1.team1', labels: S1 }),
      on(1, { ns: 'subteam1.team2', labels: S1 }),
      on(2, { ns: 'subteam2.team1', labels: S1 }),
    ],
    nodes: n(china, india),
    want: [0, 100],
  },
  {
    name: 'ignorePreferredTermsOfExistingPods, pod without preferred terms: skip',
    pod: pod({ labels: S2 }),
    pods: [
      on(1, { labels: S1, affinity: pref([8, term('region', In('security', 'S1'))]), anti: awayFromS2InAz }),
      on(2, { labels: S2, affinity: stayWithS2InRegion }),
    ],
    nodes: n(china, india),
    args: { ignorePreferredTermsOfExistingPods: true },
    want: 'skip',
  },
  {
    name: 'existing pods’ preferred terms count by default',
    pod: pod({ labels: S2 }),
    pods: [
      on(1, { labels: S1, affinity: pref([8, term('region', In('security', 'S1'))]), anti: awayFromS2InAz }),
      on(2, { labels: S2, affinity: stayWithS2InRegion }),
    ],
    nodes: n(china, india),
    want: [0, 100],
  },
  {
    name: 'ignorePreferredTermsOfExistingPods still counts them when the pod has preferred terms',
    pod: pod({ labels: S2, anti: awayFromS1InAz }),
    pods: [on(2, { labels: S2, affinity: stayWithS2InRegion })],
    nodes: n(china, india),
    args: { ignorePreferredTermsOfExistingPods: true },
    want: [0, 100],
  },
  { name: 'no nodes: skip', pod: pod({ labels: S2 }), nodes: [], want: 'skip' },
];

// TestPreferredAffinityWithHardPodAffinitySymmetricWeight
const hardPodAffinity = req(
  term('region', In('service', 'S1'), { namespaces: ['default', 'subteam2.team2'], ...withTeam1 }),
);
const hardPods = () => [on(1, { affinity: hardPodAffinity }), on(2, { affinity: hardPodAffinity })];
const serviceS1 = { service: 'S1' };
const hardCases: ScoreCase[] = [
  {
    name: 'hard weight: default 1',
    pod: pod({ labels: serviceS1 }),
    pods: hardPods(),
    nodes: n(china, india, az1),
    want: [100, 100, 0],
  },
  {
    name: 'hard weight: zero skips',
    pod: pod({ labels: serviceS1 }),
    pods: hardPods(),
    nodes: n(china, india, az1),
    args: { hardPodAffinityWeight: 0 },
    want: 'skip',
  },
  {
    name: 'hard weight: no matching namespace skips',
    pod: pod({ ns: 'subteam1.team2', labels: serviceS1 }),
    pods: hardPods(),
    nodes: n(china, india, az1),
    want: 'skip',
  },
  {
    name: 'hard weight: matching namespaceSelector',
    pod: pod({ ns: 'subteam1.team1', labels: serviceS1 }),
    pods: hardPods(),
    nodes: n(china, india, az1),
    want: [100, 100, 0],
  },
  {
    name: 'hard weight: matching namespaces',
    pod: pod({ ns: 'subteam2.team2', labels: serviceS1 }),
    pods: hardPods(),
    nodes: n(china, india, az1),
    want: [100, 100, 0],
  },
];

describe('InterPodAffinity Score', () => {
  for (const c of [...scoreCases, ...hardCases]) {
    it(c.name, () => {
      expect(scoreAll(c.pod, c.nodes, c.pods ?? [], c.args)).toEqual(c.want);
    });
  }

  it('raw scores sum weights per topology pair', () => {
    const plugin = interPodAffinity({ hardPodAffinityWeight: 3 });
    const p = pod({ labels: S1 });
    const ctx = contextOf(p, n(china, india), [
      on(1, { affinity: hardAffinity }),
      on(2, { anti: awayFromS1InAz }),
    ]);
    const state = new CycleState();
    expect(plugin.preScore(state, ctx, ctx.snapshot.list())).toBeUndefined();
    // node1: two required terms of the pod on node1 select p → 2 × 3; node2 has no az label → nothing.
    expect(ctx.snapshot.list().map((x) => plugin.score(state, ctx, x))).toEqual([6, 0]);
  });

  it('rejects an out-of-range hardPodAffinityWeight', () => {
    expect(() => interPodAffinity({ hardPodAffinityWeight: 101 })).toThrow(RangeError);
  });

  it('runs through the framework runtime', () => {
    const ctx = contextOf(pod({ labels: S1, affinity: stayWithS1InRegion }), n(china, india), [
      on(1, { labels: S1 }),
    ]);
    const profile = profileOf(interPodAffinity());
    const { state, feasible } = runFilters(profile, ctx);
    const ranked = runScores(profile, state, ctx, feasible);
    expect(ranked.map((r) => [r.node, r.score])).toEqual([
      ['node1', 100],
      ['node2', 0],
    ]);
  });
});

// NodeAffinity: nodeSelector, required terms (operators, matchFields, OR of terms), preferred is soft.
import { expr, node, pod, requiredNodeAffinity, taint } from '../build.js';
import type { Scenario } from '../types.js';

const only = (...exprs: Parameters<typeof expr>[]) => ({
  spec: { affinity: requiredNodeAffinity({ exprs: exprs.map((e) => expr(...e)) }) },
});

export const nodeAffinityScenarios: Scenario[] = [
  {
    name: 'In and NotIn',
    area: 'NodeAffinity',
    description: 'In needs the label with a listed value; NotIn also matches nodes without the label.',
    orderIndependent: true,
    nodes: [node('n1', { labels: { disk: 'ssd' } }), node('n2', { labels: { disk: 'hdd' } }), node('n3')],
    pods: [
      pod('in-ssd', only(['disk', 'In', ['ssd']])),
      pod('in-ssd-or-hdd', only(['disk', 'In', ['ssd', 'hdd']])),
      pod('notin-ssd', only(['disk', 'NotIn', ['ssd']])),
      pod('in-nvme', only(['disk', 'In', ['nvme']])),
    ],
    expect: {
      unschedulable: ['in-nvme'],
      placements: { 'in-ssd': ['n1'], 'in-ssd-or-hdd': ['n1', 'n2'], 'notin-ssd': ['n2', 'n3'] },
    },
  },
  {
    name: 'Exists and DoesNotExist',
    area: 'NodeAffinity',
    description: 'Exists/DoesNotExist look at the key only, whatever its value (even empty).',
    orderIndependent: true,
    nodes: [node('n1', { labels: { gpu: '' } }), node('n2', { labels: { gpu: 'a100' } }), node('n3')],
    pods: [
      pod('exists', only(['gpu', 'Exists'])),
      pod('absent', only(['gpu', 'DoesNotExist'])),
      pod('both', only(['gpu', 'Exists'], ['gpu', 'DoesNotExist'])),
    ],
    expect: { unschedulable: ['both'], placements: { exists: ['n1', 'n2'], absent: ['n3'] } },
  },
  {
    name: 'Gt and Lt compare integers',
    area: 'NodeAffinity',
    description: 'Gt/Lt parse the label value as an integer; a non-integer or missing label never matches.',
    orderIndependent: true,
    nodes: [
      node('n1', { labels: { cores: '8' } }),
      node('n2', { labels: { cores: '32' } }),
      node('n3', { labels: { cores: 'many' } }),
      node('n4'),
    ],
    pods: [
      pod('gt-16', only(['cores', 'Gt', ['16']])),
      pod('lt-16', only(['cores', 'Lt', ['16']])),
      pod('gt-8', only(['cores', 'Gt', ['8']])),
      pod('gt-7-lt-9', only(['cores', 'Gt', ['7']], ['cores', 'Lt', ['9']])),
      pod('gt-100', only(['cores', 'Gt', ['100']])),
    ],
    expect: {
      unschedulable: ['gt-100'],
      placements: { 'gt-16': ['n2'], 'lt-16': ['n1'], 'gt-8': ['n2'], 'gt-7-lt-9': ['n1'] },
    },
  },
  {
    name: 'matchFields on metadata.name',
    area: 'NodeAffinity',
    description:
      'matchFields selects nodes by name (as DaemonSets do), In and NotIn with exactly one value each ' +
      '(the API refuses more); several field requirements in one term are ANDed.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2'), node('n3')],
    pods: [
      pod('name-n2', {
        spec: { affinity: requiredNodeAffinity({ fields: [expr('metadata.name', 'In', ['n2'])] }) },
      }),
      pod('not-n1', {
        spec: { affinity: requiredNodeAffinity({ fields: [expr('metadata.name', 'NotIn', ['n1'])] }) },
      }),
      pod('not-n1-not-n2', {
        spec: {
          affinity: requiredNodeAffinity({
            fields: [expr('metadata.name', 'NotIn', ['n1']), expr('metadata.name', 'NotIn', ['n2'])],
          }),
        },
      }),
      pod('name-missing', {
        spec: { affinity: requiredNodeAffinity({ fields: [expr('metadata.name', 'In', ['n9'])] }) },
      }),
    ],
    expect: {
      unschedulable: ['name-missing'],
      placements: { 'name-n2': ['n2'], 'not-n1': ['n2', 'n3'], 'not-n1-not-n2': ['n3'] },
    },
  },
  {
    name: 'terms are ORed, requirements within a term ANDed',
    area: 'NodeAffinity',
    description:
      'nodeSelectorTerms match when any term matches; a term needs all its expressions and fields to match; ' +
      'an empty term matches no node.',
    orderIndependent: true,
    nodes: [
      node('n1', { labels: { a: '1' } }),
      node('n2', { labels: { b: '1' } }),
      node('n3', { labels: { a: '1', b: '1' } }),
    ],
    pods: [
      pod('or', {
        spec: {
          affinity: requiredNodeAffinity(
            { exprs: [expr('a', 'In', ['1']), expr('c', 'Exists')] },
            { exprs: [expr('b', 'In', ['1'])] },
          ),
        },
      }),
      pod('and', only(['a', 'In', ['1']], ['b', 'In', ['1']])),
      pod('empty-term-or-b', {
        spec: { affinity: requiredNodeAffinity({}, { exprs: [expr('b', 'In', ['1'])] }) },
      }),
      pod('empty-term-only', { spec: { affinity: requiredNodeAffinity({}) } }),
      pod('expr-and-field', {
        spec: {
          affinity: requiredNodeAffinity({
            exprs: [expr('a', 'In', ['1'])],
            fields: [expr('metadata.name', 'In', ['n2'])],
          }),
        },
      }),
    ],
    expect: {
      unschedulable: ['expr-and-field', 'empty-term-only'],
      placements: { or: ['n2', 'n3'], and: ['n3'], 'empty-term-or-b': ['n2', 'n3'] },
    },
  },
  {
    name: 'nodeSelector and required affinity both apply; preferred is soft',
    area: 'NodeAffinity',
    description:
      'spec.nodeSelector is ANDed with required node affinity. A preference for a label no node has never ' +
      'makes a pod Unschedulable (which node it gets is a score: not compared).',
    orderIndependent: true,
    nodes: [
      node('n1', { labels: { pool: 'a', disk: 'ssd' } }),
      node('n2', { labels: { pool: 'a' } }),
      node('n3', { labels: { disk: 'ssd' } }),
    ],
    pods: [
      pod('selector-and-affinity', {
        spec: { nodeSelector: { pool: 'a' }, ...only(['disk', 'In', ['ssd']]).spec },
      }),
      pod('selector-only', { spec: { nodeSelector: { pool: 'a' } } }),
      pod('selector-miss', { spec: { nodeSelector: { pool: 'b' } } }),
      pod('prefers-missing', {
        spec: {
          affinity: {
            nodeAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 100, preference: { matchExpressions: [expr('nowhere', 'Exists')] } },
              ],
            },
          },
        },
      }),
    ],
    expect: {
      unschedulable: ['selector-miss'],
      placements: { 'selector-and-affinity': ['n1'], 'selector-only': ['n1', 'n2'] },
    },
  },
  {
    name: 'normalized scores are integers: TaintToleration and NodeAffinity truncate as int64',
    area: 'NodeAffinity',
    description:
      'x has 1 PreferNoSchedule taint, y none, z 3; the pod prefers tier=x (weight 99) and tier=y (50). ' +
      'Upstream normalizes in int64: TaintToleration x 100 − ⌊100/3⌋ = 67, y 100; NodeAffinity x 100, ' +
      'y ⌊5000/99⌋ = 50. x: 3 × 67 + 2 × 100 = 401 beats y: 3 × 100 + 2 × 50 = 400. With fractions ' +
      '(66.67 and 50.51) y would win, 401.01 to 400. Best-effort pod on empty nodes: every other score ties.',
    orderIndependent: true,
    nodes: [
      node('x', { labels: { tier: 'x' }, taints: [taint('a', 'PreferNoSchedule')] }),
      node('y', { labels: { tier: 'y' } }),
      node('z', {
        labels: { tier: 'z' },
        taints: [
          taint('a', 'PreferNoSchedule'),
          taint('b', 'PreferNoSchedule'),
          taint('c', 'PreferNoSchedule'),
        ],
      }),
    ],
    pods: [
      pod('prefers', {
        spec: {
          affinity: {
            nodeAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 99, preference: { matchExpressions: [expr('tier', 'In', ['x'])] } },
                { weight: 50, preference: { matchExpressions: [expr('tier', 'In', ['y'])] } },
              ],
            },
          },
        },
      }),
    ],
    expect: { unschedulable: [], placements: { prefers: ['x'] } },
  },
];

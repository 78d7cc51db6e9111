// Load-aware scenarios: NodeLoadRules make nodeload deliberately differ from kube-scheduler (which knows
// nothing of them). Load is requests-based here (no metrics.k8s.io in the private cluster).
import { cpu, node, pod, pods } from '../build.js';
import type { Scenario } from '../types.js';

export const loadAwareScenarios: Scenario[] = [
  {
    name: 'rule maxCPU caps each node below allocatable',
    area: 'NodeLoadRule',
    description:
      'Two 4-CPU nodes, five 1-CPU pods: kube-scheduler binds all; a maxCPU 50 rule stops at 2 per node.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    pods: pods('web', 5, cpu('1')),
    rules: [{ name: 'half', spec: { maxCPU: 50, maxMemory: 100 } }],
    expect: { unschedulable: [] },
    expectDifference: {
      why: 'maxCPU 50: a node may take pods only while its requested CPU stays ≤ 2 of 4 after placement',
      nodeload: { boundCount: 4 },
    },
  },
  {
    name: 'rule allowedNodes confines the pods',
    area: 'NodeLoadRule',
    description: 'Three nodes, allowedNodes [n1]: kube-scheduler spreads the pods, nodeload puts all on n1.',
    orderIndependent: true,
    compare: 'none',
    nodes: [node('n1'), node('n2'), node('n3')],
    pods: pods('web', 3, cpu('100m')),
    rules: [{ name: 'only-n1', spec: { allowedNodes: ['n1'] } }],
    expect: { unschedulable: [] },
    expectDifference: {
      why: 'allowedNodes [n1]: every covered pod must land on n1',
      nodeload: { unschedulable: [], placements: { 'web-1': ['n1'], 'web-2': ['n1'], 'web-3': ['n1'] } },
    },
  },
  {
    name: 'rule podSelector: only covered pods are held back',
    area: 'NodeLoadRule',
    description:
      'One 8-CPU node, a batch pod then three 2-CPU web pods: kube-scheduler binds all (8 CPU). A maxCPU 50 ' +
      'rule covering tier=web admits web-1 (4 of 8 CPU) and refuses web-2 and web-3; the batch pod is not covered.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [node('n1', { cpu: '8' })],
    pods: [
      pod('batch-1', { ...cpu('2'), labels: { tier: 'batch' } }),
      ...pods('web', 3, { ...cpu('2'), labels: { tier: 'web' } }),
    ],
    rules: [
      {
        name: 'web-half',
        spec: { maxCPU: 50, maxMemory: 100, podSelector: { matchLabels: { tier: 'web' } } },
      },
    ],
    expect: { unschedulable: [] },
    expectDifference: {
      why: 'maxCPU 50 for tier=web only: after batch-1 and web-1 the node is at 50 %',
      nodeload: { unschedulable: ['web-2', 'web-3'], placements: { 'batch-1': ['n1'], 'web-1': ['n1'] } },
    },
  },
  {
    name: 'rule nodeSelector narrows the eligible nodes',
    area: 'NodeLoadRule',
    description:
      'A rule nodeSelector pool=web leaves only n1 for covered pods; kube-scheduler uses both nodes.',
    orderIndependent: true,
    compare: 'none',
    nodes: [node('n1', { labels: { pool: 'web' } }), node('n2', { labels: { pool: 'batch' } })],
    pods: pods('web', 2, cpu('100m')),
    rules: [{ name: 'web-pool', spec: { nodeSelector: { matchLabels: { pool: 'web' } } } }],
    expect: { unschedulable: [] },
    expectDifference: {
      why: 'rule nodeSelector pool=web: covered pods only on n1',
      nodeload: { unschedulable: [], placements: { 'web-1': ['n1'], 'web-2': ['n1'] } },
    },
  },
  {
    name: 'burst guard caps placements per node and window',
    area: 'NodeLoadRule',
    description:
      'burst {maxPlacements 2, windowSeconds 600}: of six tiny pods on two nodes nodeload binds 4 within the ' +
      'window; kube-scheduler binds all six.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    pods: pods('web', 6, cpu('10m', '16Mi')),
    rules: [
      {
        name: 'burst',
        spec: { maxCPU: 100, maxMemory: 100, burst: { maxPlacements: 2, windowSeconds: 600 } },
      },
    ],
    expect: { unschedulable: [] },
    expectDifference: {
      why: 'at most 2 placements per node per 600 s window',
      nodeload: { boundCount: 4 },
    },
  },
];

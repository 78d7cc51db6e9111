// Batches created all at once: a scheduler with many binds in flight must account for the pods it has
// just placed (assumed) in every plugin, not only for what its informer already shows bound.
import { antiAffinity, HOSTNAME, node, pods, podTerm, selector, spread, ZONE, zonedNodes } from '../build.js';
import type { Scenario } from '../types.js';

const GPU = 'example.com/gpu';
const web = { app: 'web' };

export const concurrencyScenarios: Scenario[] = [
  {
    name: 'batch: 8 one-GPU pods on 3 nodes with 2 GPUs each',
    area: 'Concurrency',
    description: 'Exactly 6 bind and 2 are Unschedulable; no node ends with more than 2 GPU pods.',
    orderIndependent: true,
    compare: 'unschedulable-count',
    nodes: [1, 2, 3].map((i) => node(`n${i}`, { extra: { [GPU]: '2' } })),
    pods: pods('gpu', 8, { requests: { cpu: '100m', [GPU]: '1' }, limits: { [GPU]: '1' } }),
    expect: { boundCount: 6 },
  },
  {
    name: 'batch: 6 pods on host port 80 over 4 nodes',
    area: 'Concurrency',
    description: 'One pod per node can hold TCP 80: 4 bind, 2 are Unschedulable.',
    orderIndependent: true,
    compare: 'unschedulable-count',
    nodes: [1, 2, 3, 4].map((i) => node(`n${i}`)),
    pods: pods('ingress', 6, { hostPorts: [[80]] }),
    expect: { boundCount: 4 },
  },
  {
    name: 'batch: 20 replicas spread over 3 zones',
    area: 'Concurrency',
    description:
      'maxSkew 1 over zones a/b/c (2 nodes each) and anti-affinity-free: all 20 bind as 7/7/6, checked on the ' +
      'final state.',
    orderIndependent: true,
    nodes: zonedNodes('n', 6, ['a', 'b', 'c']),
    pods: pods('web', 20, {
      labels: web,
      spec: { topologySpreadConstraints: [spread(ZONE, selector(web))] },
    }),
    expect: { unschedulable: [] },
  },
  {
    name: 'batch: 12 pods with hostname anti-affinity on 10 nodes, 2 CPU each',
    area: 'Concurrency',
    description: 'One per node: 10 bind, 2 are Unschedulable.',
    orderIndependent: true,
    compare: 'unschedulable-count',
    nodes: Array.from({ length: 10 }, (_, i) => node(`n${i + 1}`, { cpu: '2' })),
    pods: pods('db', 12, {
      labels: { app: 'db' },
      requests: { cpu: '500m' },
      spec: { affinity: antiAffinity(podTerm(HOSTNAME, selector({ app: 'db' }))) },
    }),
    expect: { boundCount: 10 },
  },
];

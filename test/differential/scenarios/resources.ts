// NodeResourcesFit: every resource name against allocatable minus what bound pods request, with the
// sidecar (KEP-753) formula, pod overhead and pod-level resources.
import { container, cpu, existing, HOSTNAME, node, pod, pods } from '../build.js';
import type { Scenario } from '../types.js';

const GPU = 'example.com/gpu';
const on = (n: string) => ({ [HOSTNAME]: n });
const exact = (r: Record<string, string>) => ({ requests: r, limits: r });

export const resourceScenarios: Scenario[] = [
  {
    name: 'cpu: requests must fit what is left',
    area: 'NodeResourcesFit',
    description: '4 CPU with 3 requested: 500m fits, 2 CPU does not (whatever the order).',
    orderIndependent: true,
    nodes: [node('n1', { cpu: '4' })],
    existingPods: [existing('busy', 'n1', cpu('3'))],
    pods: [pod('small', cpu('500m')), pod('big', cpu('2'))],
    expect: { unschedulable: ['big'], placements: { small: ['n1'] } },
  },
  {
    name: 'memory: requests must fit what is left',
    area: 'NodeResourcesFit',
    description: '8Gi with 6Gi requested: 1Gi fits, 3Gi does not.',
    orderIndependent: true,
    nodes: [node('n1', { memory: '8Gi' })],
    existingPods: [existing('busy', 'n1', cpu('100m', '6Gi'))],
    pods: [pod('small', cpu('100m', '1Gi')), pod('big', cpu('100m', '3Gi'))],
    expect: { unschedulable: ['big'], placements: { small: ['n1'] } },
  },
  {
    name: 'pods: allocatable pod count',
    area: 'NodeResourcesFit',
    description: 'pods=3 with 2 bound: one more fits ("Too many pods" after), even with zero requests.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [node('n1', { pods: '3' })],
    existingPods: [existing('e1', 'n1'), existing('e2', 'n1')],
    pods: pods('p', 3),
    expect: { unschedulable: ['p-2', 'p-3'], placements: { 'p-1': ['n1'] } },
  },
  {
    name: 'ephemeral-storage',
    area: 'NodeResourcesFit',
    description: '10Gi ephemeral-storage with 6Gi requested: 2Gi fits, 5Gi does not.',
    orderIndependent: true,
    nodes: [node('n1', { extra: { 'ephemeral-storage': '10Gi' } })],
    existingPods: [existing('busy', 'n1', { requests: { 'ephemeral-storage': '6Gi' } })],
    pods: [
      pod('small', { requests: { cpu: '100m', 'ephemeral-storage': '2Gi' } }),
      pod('big', { requests: { cpu: '100m', 'ephemeral-storage': '5Gi' } }),
    ],
    expect: { unschedulable: ['big'], placements: { small: ['n1'] } },
  },
  {
    name: 'hugepages-2Mi',
    area: 'NodeResourcesFit',
    description:
      'A node with 8Mi of 2Mi pages, 4Mi taken: 4Mi fits, 6Mi does not; a node without hugepages fits none.',
    orderIndependent: true,
    nodes: [node('n1', { extra: { 'hugepages-2Mi': '8Mi' } }), node('n2')],
    existingPods: [existing('busy', 'n1', exact({ memory: '64Mi', 'hugepages-2Mi': '4Mi' }))],
    pods: [
      pod('small', exact({ memory: '64Mi', 'hugepages-2Mi': '4Mi' })),
      pod('big', exact({ memory: '64Mi', 'hugepages-2Mi': '6Mi' })),
    ],
    expect: { unschedulable: ['big'], placements: { small: ['n1'] } },
  },
  {
    name: 'extended resource example.com/gpu',
    area: 'NodeResourcesFit',
    description:
      'n1 has 2 GPUs, n2 none: two 1-GPU pods fill n1, the third is Unschedulable and never lands on the ' +
      'GPU-less node; a pod without a GPU request still fits anywhere.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [node('n1', { extra: { [GPU]: '2' } }), node('n2')],
    pods: [...pods('gpu', 3, exact({ cpu: '100m', [GPU]: '1' })), pod('cpu-only', cpu('100m'))],
    expect: { unschedulable: ['gpu-3'], placements: { 'gpu-1': ['n1'], 'gpu-2': ['n1'] } },
  },
  {
    name: 'init containers: the largest one sets the floor',
    area: 'NodeResourcesFit',
    description:
      'Effective request = max(sum of app containers, each init container). 1.5 CPU bound on each 4-CPU node: ' +
      'init 3 CPU + app 500m needs 3 CPU (does not fit); init 2 CPU + app 2.5 CPU needs 2.5 (fits).',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    existingPods: [existing('busy-1', 'n1', cpu('1500m')), existing('busy-2', 'n2', cpu('1500m'))],
    pods: [
      pod('big-init', {
        ...cpu('500m'),
        spec: { nodeSelector: on('n1'), initContainers: [container('init', cpu('3'))] },
      }),
      pod('small-init', {
        ...cpu('2500m'),
        spec: { nodeSelector: on('n2'), initContainers: [container('init', cpu('2'))] },
      }),
    ],
    expect: { unschedulable: ['big-init'], placements: { 'small-init': ['n2'] } },
  },
  {
    name: 'a sidecar before a regular init container adds to it',
    area: 'NodeResourcesFit',
    description:
      'initContainers [proxy (restartPolicy Always) 1 CPU, migrate 2 CPU], app 500m: migrate runs next to the ' +
      'proxy, so 3 CPU are needed (no fit beside 1.5 CPU on 4). With the sidecar declared after migrate, 2 CPU ' +
      '(fits). Sidecars always add to the app containers.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2'), node('n3')],
    existingPods: [
      existing('busy-1', 'n1', cpu('1500m')),
      existing('busy-2', 'n2', cpu('1500m')),
      existing('busy-3', 'n3', cpu('1500m')),
    ],
    pods: [
      pod('sidecar-first', {
        ...cpu('500m'),
        spec: {
          nodeSelector: on('n1'),
          initContainers: [
            container('proxy', { ...cpu('1'), restartPolicy: 'Always' }),
            container('migrate', cpu('2')),
          ],
        },
      }),
      pod('sidecar-last', {
        ...cpu('500m'),
        spec: {
          nodeSelector: on('n2'),
          initContainers: [
            container('migrate', cpu('2')),
            container('proxy', { ...cpu('1'), restartPolicy: 'Always' }),
          ],
        },
      }),
      pod('sidecar-sum', {
        ...cpu('1500m'),
        spec: {
          nodeSelector: on('n3'),
          initContainers: [container('proxy', { ...cpu('1100m'), restartPolicy: 'Always' })],
        },
      }),
    ],
    expect: { unschedulable: ['sidecar-first', 'sidecar-sum'], placements: { 'sidecar-last': ['n2'] } },
  },
  {
    name: 'pod overhead (RuntimeClass) is added to requests',
    area: 'NodeResourcesFit',
    description:
      'RuntimeClass admission sets spec.overhead 500m: 750m + 500m does not fit beside 3 CPU on 4; the same ' +
      'pod without the runtime class does.',
    orderIndependent: true,
    runtimeClasses: [{ name: 'kata', overhead: { cpu: '500m', memory: '64Mi' } }],
    nodes: [node('n1'), node('n2')],
    existingPods: [existing('busy-1', 'n1', cpu('3')), existing('busy-2', 'n2', cpu('3'))],
    pods: [
      pod('with-overhead', { ...cpu('750m'), spec: { nodeSelector: on('n1'), runtimeClassName: 'kata' } }),
      pod('without', { ...cpu('750m'), spec: { nodeSelector: on('n2') } }),
    ],
    expect: { unschedulable: ['with-overhead'], placements: { without: ['n2'] } },
  },
  {
    name: 'pod-level resources replace the container sum',
    area: 'NodeResourcesFit',
    description:
      'spec.resources.requests (PodLevelResources) is what the pod needs for cpu/memory: 2 CPU does not fit ' +
      'beside 3 CPU on 4 although the containers ask 100m; pod-level 500m does.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    existingPods: [existing('busy-1', 'n1', cpu('3')), existing('busy-2', 'n2', cpu('3'))],
    pods: [
      pod('pod-level-big', {
        ...cpu('100m'),
        spec: { nodeSelector: on('n1'), resources: { requests: { cpu: '2', memory: '256Mi' } } },
      }),
      pod('pod-level-small', {
        ...cpu('100m'),
        spec: { nodeSelector: on('n2'), resources: { requests: { cpu: '500m', memory: '256Mi' } } },
      }),
    ],
    expect: { unschedulable: ['pod-level-big'], placements: { 'pod-level-small': ['n2'] } },
  },
  {
    name: 'zero requests always fit; extended resources in init containers count',
    area: 'NodeResourcesFit',
    description:
      'A resource a pod does not request is not checked: pods without (cpu) requests fit a node whose CPU is ' +
      'fully requested. ' +
      'An init container asking 2 GPUs makes the pod need 2 although its app asks 1 (n2 has 1 of 2 free).',
    orderIndependent: true,
    nodes: [node('n1', { cpu: '2' }), node('n2', { extra: { [GPU]: '2' } })],
    existingPods: [
      existing('full', 'n1', cpu('2', '1Gi')),
      existing('gpu-user', 'n2', exact({ cpu: '100m', [GPU]: '1' })),
    ],
    pods: [
      pod('no-requests', { spec: { nodeSelector: on('n1') } }),
      pod('memory-only', { requests: { memory: '1Gi' }, spec: { nodeSelector: on('n1') } }),
      pod('gpu-init', {
        ...exact({ cpu: '100m', [GPU]: '1' }),
        spec: {
          nodeSelector: on('n2'),
          initContainers: [container('warmup', exact({ cpu: '100m', [GPU]: '2' }))],
        },
      }),
      pod('gpu-app', { ...exact({ cpu: '100m', [GPU]: '1' }), spec: { nodeSelector: on('n2') } }),
    ],
    expect: {
      unschedulable: ['gpu-init'],
      placements: { 'no-requests': ['n1'], 'memory-only': ['n1'], 'gpu-app': ['n2'] },
    },
  },
  {
    name: 'balanced allocation: the node the pod evens out wins (v1.36 formula)',
    area: 'NodeResourcesBalancedAllocation',
    description:
      'Two 8-CPU / 8Gi nodes, n-even at 4 CPU / 4Gi, n-skewed at 1 CPU / 7Gi; a 2-CPU pod with no memory request. ' +
      'LeastAllocated gives both 36 (memory counted at its 200Mi non-zero default), LoadAware both 37.5, so ' +
      'BalancedAllocation decides: v1.36 scores the change of balance, 50 + ⌊(50 + with − before) / 2⌋ — ' +
      'n-even 100 → 87 scores 68, n-skewed 62 → 75 scores 81. The formula before v1.36 (the balance with the ' +
      'pod placed, 87.5 vs 75) chose n-even.',
    orderIndependent: true,
    nodes: [node('n-even', { cpu: '8', memory: '8Gi' }), node('n-skewed', { cpu: '8', memory: '8Gi' })],
    existingPods: [
      existing('half', 'n-even', { requests: { cpu: '4', memory: '4Gi' } }),
      existing('memory-heavy', 'n-skewed', { requests: { cpu: '1', memory: '7Gi' } }),
    ],
    pods: [pod('cpu-heavy', { requests: { cpu: '2' } })],
    expect: { unschedulable: [], placements: { 'cpu-heavy': ['n-skewed'] } },
  },
];

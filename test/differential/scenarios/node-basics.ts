// NodeUnschedulable, NodeName, TaintToleration, NodeDeclaredFeatures and ImageLocality.
import { container, cpu, node, pod, taint, toleration } from '../build.js';
import type { Scenario } from '../types.js';

const UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

export const nodeBasicsScenarios: Scenario[] = [
  {
    name: 'cordoned node is never chosen',
    area: 'NodeUnschedulable',
    description: 'spec.unschedulable nodes are filtered out for pods without the unschedulable toleration.',
    orderIndependent: true,
    nodes: [node('n1', { unschedulable: true }), node('n2')],
    pods: [pod('p1'), pod('p2'), pod('p3')],
    expect: { unschedulable: [], placements: { p1: ['n2'], p2: ['n2'], p3: ['n2'] } },
  },
  {
    name: 'the unschedulable toleration lets a pod onto a cordoned node',
    area: 'NodeUnschedulable',
    description:
      'NodeUnschedulable passes when the pod tolerates node.kubernetes.io/unschedulable:NoSchedule; ' +
      'the only node is cordoned, so the plain pod stays Unschedulable.',
    orderIndependent: true,
    nodes: [node('n1', { unschedulable: true })],
    pods: [
      pod('plain'),
      pod('tolerant', { spec: { tolerations: [toleration(UNSCHEDULABLE, 'NoSchedule')] } }),
      pod('tolerates-all', { spec: { tolerations: [{ operator: 'Exists' }] } }),
    ],
    expect: { unschedulable: ['plain'], placements: { tolerant: ['n1'], 'tolerates-all': ['n1'] } },
  },
  {
    name: 'a pod created with nodeName bypasses scheduling but its requests count',
    area: 'NodeName',
    description:
      'A pod with spec.nodeName is bound at creation (no scheduler involved, even onto a node its ' +
      'nodeSelector would refuse); the next pod must see its 1500m on the 2-CPU node and stay Unschedulable.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [node('n1', { cpu: '2', labels: { pool: 'a' } })],
    pods: [
      pod('pinned', { ...cpu('1500m'), spec: { nodeName: 'n1', nodeSelector: { pool: 'elsewhere' } } }),
      pod('next', cpu('1')),
      pod('small', cpu('400m')),
    ],
    expect: { unschedulable: ['next'], placements: { pinned: ['n1'], small: ['n1'] } },
  },
  {
    name: 'NoSchedule taints need a matching toleration',
    area: 'TaintToleration',
    description:
      'Equal needs key, value and effect to match; Exists matches any value; an empty effect matches every ' +
      'effect; an empty key with Exists tolerates everything.',
    orderIndependent: true,
    nodes: [
      node('n1', { taints: [taint('dedicated', 'NoSchedule', 'gpu')] }),
      node('n2', { taints: [taint('team', 'NoSchedule', 'a')] }),
    ],
    pods: [
      pod('plain'),
      pod('equal', { spec: { tolerations: [toleration('dedicated', 'NoSchedule', 'gpu')] } }),
      pod('exists', { spec: { tolerations: [toleration('dedicated', 'NoSchedule')] } }),
      pod('any-effect', { spec: { tolerations: [toleration('team')] } }),
      pod('wrong-value', { spec: { tolerations: [toleration('dedicated', 'NoSchedule', 'cpu')] } }),
      pod('wrong-effect', { spec: { tolerations: [toleration('dedicated', 'NoExecute', 'gpu')] } }),
      pod('everything', { spec: { tolerations: [{ operator: 'Exists' }] } }),
    ],
    expect: {
      unschedulable: ['plain', 'wrong-value', 'wrong-effect'],
      placements: { equal: ['n1'], exists: ['n1'], 'any-effect': ['n2'], everything: ['n1', 'n2'] },
    },
  },
  {
    name: 'NoExecute taints filter like NoSchedule',
    area: 'TaintToleration',
    description:
      'A NoExecute taint must be tolerated with effect NoExecute (or empty); a NoSchedule toleration of the ' +
      'same key does not cover it.',
    orderIndependent: true,
    nodes: [node('n1', { taints: [taint('maintenance', 'NoExecute')] })],
    pods: [
      pod('plain'),
      pod('tolerates', {
        spec: { tolerations: [{ ...toleration('maintenance', 'NoExecute'), tolerationSeconds: 3600 }] },
      }),
      pod('noschedule-only', { spec: { tolerations: [toleration('maintenance', 'NoSchedule')] } }),
    ],
    expect: { unschedulable: ['plain', 'noschedule-only'], placements: { tolerates: ['n1'] } },
  },
  {
    name: 'PreferNoSchedule is only a preference',
    area: 'TaintToleration',
    description: 'PreferNoSchedule never filters: with only such nodes, untolerating pods still bind.',
    orderIndependent: true,
    nodes: [
      node('n1', { taints: [taint('spot', 'PreferNoSchedule', 'true')] }),
      node('n2', { taints: [taint('spot', 'PreferNoSchedule', 'true'), taint('old', 'PreferNoSchedule')] }),
    ],
    pods: [pod('p1'), pod('p2'), pod('p3')],
    expect: { unschedulable: [] },
  },
  {
    name: 'a keyless Exists toleration with an effect covers only that effect',
    area: 'TaintToleration',
    description:
      '{operator: Exists, effect: NoExecute} tolerates every NoExecute taint (n1 has two) but no NoSchedule one (n2).',
    orderIndependent: true,
    nodes: [
      node('n1', { taints: [taint('a', 'NoExecute'), taint('b', 'NoExecute', 'x')] }),
      node('n2', { taints: [taint('c', 'NoSchedule')] }),
    ],
    pods: [
      pod('on-n1', {
        spec: {
          tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
          nodeSelector: { 'kubernetes.io/hostname': 'n1' },
        },
      }),
      pod('on-n2', {
        spec: {
          tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
          nodeSelector: { 'kubernetes.io/hostname': 'n2' },
        },
      }),
    ],
    expect: { unschedulable: ['on-n2'], placements: { 'on-n1': ['n1'] } },
  },
  {
    name: 'a pod needing a node feature goes only where the kubelet declares it',
    area: 'NodeDeclaredFeatures',
    description:
      'A container whose restart rule restarts all containers needs RestartAllContainersOnContainerExits in ' +
      'status.declaredFeatures (v1.36 default profile): n-new declares it, n-old does not. One such pod lands on ' +
      'n-new; one pinned to n-old is Unschedulable there.',
    orderIndependent: true,
    nodes: [node('n-old'), node('n-new', { declaredFeatures: ['RestartAllContainersOnContainerExits'] })],
    pods: [
      pod('restarts-all', { spec: { containers: [restartsAll()] } }),
      pod('restarts-all-on-old', {
        spec: { containers: [restartsAll()], nodeSelector: { 'kubernetes.io/hostname': 'n-old' } },
      }),
    ],
    expect: { unschedulable: ['restarts-all-on-old'], placements: { 'restarts-all': ['n-new'] } },
  },
  {
    name: "the node that holds the pod's image wins",
    area: 'ImageLocality',
    description:
      "n2 reports the pod's 900 MiB image in status.images, n1 and n3 nothing; every other score ties. " +
      'ImageLocality gives n2 ⌊100 × (900 MiB × 1/3 − 23 MiB) / (1000 MiB − 23 MiB)⌋ = 28 and the others 0, so n2.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2', { images: [image('registry.invalid/big:1', 900)] }), node('n3')],
    pods: [pod('app', { spec: { containers: [{ ...container('app'), image: 'registry.invalid/big:1' }] } })],
    expect: { unschedulable: [], placements: { app: ['n2'] } },
  },
  {
    name: "an init container's untagged image is found as :latest",
    area: 'ImageLocality',
    description:
      "The pod's init container names registry.invalid/tools without a tag; n2 reports " +
      'registry.invalid/tools:latest (as the kubelet names what it pulled), 900 MiB. Init containers count, ' +
      'the name is compared as :latest, and the maximum is 1000 MiB per container (two here): n2 scores ' +
      '⌊100 × (450 − 23) / (2000 − 23)⌋ = 21, n1 0.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2', { images: [image('registry.invalid/tools:latest', 900)] })],
    pods: [
      pod('app', {
        spec: { initContainers: [{ ...container('init'), image: 'registry.invalid/tools' }] },
      }),
    ],
    expect: { unschedulable: [], placements: { app: ['n2'] } },
  },
];

/** An entry of a node's status.images. */
function image(name: string, mebibytes: number) {
  return { names: [name], sizeBytes: mebibytes * 1024 * 1024 };
}

/** A container that restarts all of the pod's containers when it exits with 42 (KEP-5532). */
function restartsAll() {
  return {
    ...container('app'),
    restartPolicy: 'Never',
    restartPolicyRules: [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } }],
  };
}

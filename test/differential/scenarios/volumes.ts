// VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits (kube-scheduler v1.36.3,
// pkg/scheduler/framework/plugins/{volumebinding,volumezone,volumerestrictions,nodevolumelimits}).
// Static PVs are matched and bound by the scheduler for WaitForFirstConsumer claims (PreBind), the PV
// controller of kube-controller-manager completes the binding; 'dynamic' classes are served by the run's
// test provisioner, which creates a PV on the node named by volume.kubernetes.io/selected-node.
import type { V1PodSpec, V1Volume } from '@kubernetes/client-node';
import { claims, existing, node, pod, taint, ZONE, zonedNodes } from '../build.js';

const REGION = 'topology.kubernetes.io/region';

import type { Scenario, ScenarioObjects } from '../types.js';

/** Inline in-tree volumes, one per source (VolumeRestrictions compares them by disk identity). */
function inTree(...sources: Omit<V1Volume, 'name'>[]): Pick<V1PodSpec, 'volumes'> {
  return { volumes: sources.map((src, i) => ({ name: `disk${i}`, ...src })) };
}
const onNode = (name: string) => ({ nodeSelector: { 'kubernetes.io/hostname': name } });
const ISCSI_RO = { targetPortal: '10.0.0.5:3260', iqn: 'iqn.2026-12.test:disk', lun: 0, readOnly: true };
const rbd = (...monitors: string[]) => ({ monitors, pool: 'kube', image: 'img' });

const LOCAL = {
  name: 'local',
  provisioner: 'none' as const,
  volumeBindingMode: 'WaitForFirstConsumer' as const,
};
const DRIVER = 'attach.nodeload.test';

/** n1 may attach 1 volume of the driver, n2 two; bound claims a and b on CSI volumes of it. */
const TWO_ATTACH_LIMITS: ScenarioObjects = {
  csiNodes: [
    { node: 'n1', drivers: { [DRIVER]: 1 } },
    { node: 'n2', drivers: { [DRIVER]: 2 } },
  ],
  persistentVolumes: [
    { name: 'pv-a', csiDriver: DRIVER, claim: 'a' },
    { name: 'pv-b', csiDriver: DRIVER, claim: 'b' },
  ],
  persistentVolumeClaims: [
    { name: 'a', storageClass: '', volume: 'pv-a' },
    { name: 'b', storageClass: '', volume: 'pv-b' },
  ],
};

export const volumeScenarios: Scenario[] = [
  {
    name: 'a WaitForFirstConsumer claim follows the only local PV that fits',
    area: 'VolumeBinding',
    description:
      'A local PV reachable only from n2 and an unbound WaitForFirstConsumer claim: FindPodVolumes finds ' +
      'a matching PV only for n2; the scheduler binds the claim to it in PreBind and the pod lands on n2.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2'), node('n3')],
    objects: {
      storageClasses: [LOCAL],
      persistentVolumes: [{ name: 'pv', storageClass: 'local', nodes: ['n2'] }],
      persistentVolumeClaims: [{ name: 'data', storageClass: 'local' }],
    },
    pods: [pod('app', { spec: claims('data') })],
    expect: { unschedulable: [], placements: { app: ['n2'] } },
  },
  {
    name: 'two claims racing for two local PVs each get their own',
    area: 'VolumeBinding',
    description:
      'PVs on n1 and n3 fit both claims; the two pods are created at once. The assume cache keeps one PV ' +
      'from being given to both claims, so each pod lands on the node of a different PV.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2'), node('n3')],
    objects: {
      storageClasses: [LOCAL],
      persistentVolumes: [
        { name: 'pv-1', storageClass: 'local', nodes: ['n1'] },
        { name: 'pv-3', storageClass: 'local', nodes: ['n3'] },
      ],
      persistentVolumeClaims: [
        { name: 'a', storageClass: 'local' },
        { name: 'b', storageClass: 'local' },
      ],
    },
    pods: [pod('pa', { spec: claims('a') }), pod('pb', { spec: claims('b') })],
    expect: { unschedulable: [], placements: { pa: ['n1', 'n3'], pb: ['n1', 'n3'] } },
  },
  {
    name: 'no PV large enough and no provisioner',
    area: 'VolumeBinding',
    description:
      'The only PV holds 1Gi, the claim asks 5Gi, the class has no provisioner: "node(s) didn\'t find ' +
      'available persistent volumes to bind" on every node.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    objects: {
      storageClasses: [LOCAL],
      persistentVolumes: [{ name: 'small', storageClass: 'local', capacity: '1Gi', nodes: ['n1'] }],
      persistentVolumeClaims: [{ name: 'data', storageClass: 'local', size: '5Gi' }],
    },
    pods: [pod('app', { spec: claims('data') })],
    expect: { unschedulable: ['app'] },
  },
  {
    name: "the PV's only node is tainted",
    area: 'VolumeBinding',
    description:
      'The local PV lives on n1, which has an untolerated NoSchedule taint; n2 is free but has no volume ' +
      'for the claim. No node passes both TaintToleration and VolumeBinding.',
    orderIndependent: true,
    nodes: [node('n1', { taints: [taint('dedicated', 'NoSchedule', 'db')] }), node('n2')],
    objects: {
      storageClasses: [LOCAL],
      persistentVolumes: [{ name: 'pv', storageClass: 'local', nodes: ['n1'] }],
      persistentVolumeClaims: [{ name: 'data', storageClass: 'local' }],
    },
    pods: [pod('app', { spec: claims('data') })],
    expect: { unschedulable: ['app'] },
  },
  {
    name: 'an unbound Immediate claim keeps the pod Pending',
    area: 'VolumeBinding',
    description:
      "An Immediate-binding claim with no PV to bind stays Pending; VolumeBinding's PreFilter refuses the " +
      'pod ("pod has unbound immediate PersistentVolumeClaims") instead of choosing a node.',
    orderIndependent: true,
    nodes: [node('n1')],
    objects: {
      storageClasses: [{ name: 'now', provisioner: 'none', volumeBindingMode: 'Immediate' }],
      persistentVolumeClaims: [{ name: 'data', storageClass: 'now' }],
    },
    pods: [pod('app', { spec: claims('data') })],
    expect: { unschedulable: ['app'] },
  },
  {
    name: 'a claim that does not exist',
    area: 'VolumeBinding',
    description: 'The pod mounts claim "missing", which does not exist: the pod is not placed.',
    orderIndependent: true,
    nodes: [node('n1')],
    pods: [pod('app', { spec: claims('missing') })],
    expect: { unschedulable: ['app'] },
  },
  {
    name: "a bound claim keeps its pod in its PV's zone",
    area: 'VolumeBinding',
    description:
      'The claim is pre-bound to a PV whose required node affinity is zone b: for a bound claim ' +
      "VolumeBinding checks the PV's node affinity, so only zone-b nodes fit.",
    orderIndependent: true,
    nodes: zonedNodes('n', 4, ['a', 'b']),
    objects: {
      persistentVolumes: [{ name: 'pv', zones: ['b'], claim: 'data' }],
      persistentVolumeClaims: [{ name: 'data', storageClass: '', volume: 'pv' }],
    },
    pods: [pod('app', { spec: claims('data') })],
    expect: { unschedulable: [], placements: { app: ['n2', 'n4'] } },
  },
  {
    name: "VolumeZone: the PV's zone label",
    area: 'VolumeZone',
    description:
      'A PV with no node affinity but the label topology.kubernetes.io/zone=a (as cloud PVs carry): ' +
      'VolumeZone keeps the pod on nodes whose zone label matches.',
    orderIndependent: true,
    nodes: zonedNodes('n', 4, ['a', 'b']),
    objects: {
      persistentVolumes: [{ name: 'pv', labels: { 'topology.kubernetes.io/zone': 'a' }, claim: 'data' }],
      persistentVolumeClaims: [{ name: 'data', storageClass: '', volume: 'pv' }],
    },
    pods: [pod('p1', { spec: claims('data') }), pod('p2', { spec: claims('data') })],
    expect: { unschedulable: [], placements: { p1: ['n1', 'n3'], p2: ['n1', 'n3'] } },
  },
  {
    name: 'VolumeZone: a multi-zone label is a set, and the region must match too',
    area: 'VolumeZone',
    description:
      'The PV is labelled zone a__b (either zone) and region r1. n1 (a, r1) and n2 (b, r1) fit; n3 is in zone ' +
      'c, n4 in zone a but region r2: "node(s) had no available volume zone"; on-n4, pinned there, is ' +
      'Unschedulable.',
    orderIndependent: true,
    nodes: [
      node('n1', { labels: { [ZONE]: 'a', [REGION]: 'r1' } }),
      node('n2', { labels: { [ZONE]: 'b', [REGION]: 'r1' } }),
      node('n3', { labels: { [ZONE]: 'c', [REGION]: 'r1' } }),
      node('n4', { labels: { [ZONE]: 'a', [REGION]: 'r2' } }),
    ],
    objects: {
      persistentVolumes: [{ name: 'pv', labels: { [ZONE]: 'a__b', [REGION]: 'r1' }, claim: 'data' }],
      persistentVolumeClaims: [{ name: 'data', storageClass: '', volume: 'pv' }],
    },
    pods: [
      pod('p1', { spec: claims('data') }),
      pod('p2', { spec: claims('data') }),
      pod('on-n4', { spec: { ...claims('data'), nodeSelector: { 'kubernetes.io/hostname': 'n4' } } }),
    ],
    expect: { unschedulable: ['on-n4'], placements: { p1: ['n1', 'n2'], p2: ['n1', 'n2'] } },
  },
  {
    name: 'VolumeZone: a beta zone label on the PV matches a node with only the GA label',
    area: 'VolumeZone',
    description:
      'The PV carries failure-domain.beta.kubernetes.io/zone=b; the nodes only topology.kubernetes.io/zone. ' +
      "Upstream reads the node's GA label when it has no beta one, so the pods go to zone b (n2, n4).",
    orderIndependent: true,
    nodes: zonedNodes('n', 4, ['a', 'b']),
    objects: {
      persistentVolumes: [
        { name: 'pv', labels: { 'failure-domain.beta.kubernetes.io/zone': 'b' }, claim: 'data' },
      ],
      persistentVolumeClaims: [{ name: 'data', storageClass: '', volume: 'pv' }],
    },
    pods: [pod('p1', { spec: claims('data') }), pod('p2', { spec: claims('data') })],
    expect: { unschedulable: [], placements: { p1: ['n2', 'n4'], p2: ['n2', 'n4'] } },
  },
  {
    name: 'dynamic provisioning on a node the class allows',
    area: 'VolumeBinding',
    description:
      'A WaitForFirstConsumer class with a provisioner and allowedTopologies zone b: only zone-b nodes ' +
      'can provision; the scheduler sets volume.kubernetes.io/selected-node, the provisioner creates the ' +
      'PV there, and the pod is bound once the claim is.',
    orderIndependent: true,
    nodes: zonedNodes('n', 4, ['a', 'b']),
    objects: {
      storageClasses: [
        {
          name: 'dyn',
          provisioner: 'dynamic',
          volumeBindingMode: 'WaitForFirstConsumer',
          allowedTopologies: { 'topology.kubernetes.io/zone': ['b'] },
        },
      ],
      persistentVolumeClaims: [{ name: 'data', storageClass: 'dyn' }],
    },
    pods: [pod('app', { spec: claims('data') })],
    expect: { unschedulable: [], placements: { app: ['n2', 'n4'] } },
  },
  {
    name: 'an in-tree EBS volume takes an attach slot of the EBS CSI driver',
    area: 'NodeVolumeLimits',
    description:
      'CSINode n1 allows 1 volume of ebs.csi.aws.com, n2 two. The pod on n1 uses an in-tree ' +
      'awsElasticBlockStore PV, which kube-scheduler counts under ebs.csi.aws.com (CSI migration); n2 is ' +
      'busier, so every score prefers n1. A pod with a CSI EBS volume fits only n2.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    objects: {
      csiNodes: [
        { node: 'n1', drivers: { 'ebs.csi.aws.com': 1 } },
        { node: 'n2', drivers: { 'ebs.csi.aws.com': 2 } },
      ],
      persistentVolumes: [
        { name: 'pv-old', inTreeEbs: true, claim: 'old' },
        { name: 'pv-new', csiDriver: 'ebs.csi.aws.com', claim: 'new' },
      ],
      persistentVolumeClaims: [
        { name: 'old', storageClass: '', volume: 'pv-old' },
        { name: 'new', storageClass: '', volume: 'pv-new' },
      ],
    },
    existingPods: [
      existing('holder', 'n1', { spec: claims('old') }),
      existing('busy', 'n2', { requests: { cpu: '2', memory: '4Gi' } }),
    ],
    pods: [pod('app', { spec: claims('new') })],
    expect: { unschedulable: [], placements: { app: ['n2'] } },
  },
  {
    name: 'storage capacity: only a node whose CSIStorageCapacity holds the claim',
    area: 'VolumeBinding',
    description:
      "The run's provisioner is a CSIDriver with storageCapacity: true. Its class has 1Gi left for n1 and " +
      '10Gi for n2; a 5Gi claim can only be provisioned from n2 (hasEnoughCapacity), so the pod goes there ' +
      'although n1 sorts first. n3 has no capacity object at all.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2'), node('n3')],
    objects: {
      storageClasses: [{ name: 'fast', provisioner: 'dynamic', volumeBindingMode: 'WaitForFirstConsumer' }],
      csiDrivers: [{ name: 'dynamic', storageCapacity: true }],
      storageCapacities: [
        { name: 'on-n1', storageClass: 'fast', nodes: ['n1'], capacity: '1Gi' },
        { name: 'on-n2', storageClass: 'fast', nodes: ['n2'], capacity: '10Gi' },
      ],
      persistentVolumeClaims: [{ name: 'data', storageClass: 'fast', size: '5Gi' }],
    },
    pods: [pod('app', { spec: claims('data') })],
    expect: { unschedulable: [], placements: { app: ['n2'] } },
  },
  {
    name: 'a ReadWriteOncePod claim already in use',
    area: 'VolumeRestrictions',
    description:
      'A running pod uses a ReadWriteOncePod claim; a second pod mounting it is refused on every node ' +
      '(same priority, so no preemption).',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    objects: {
      persistentVolumes: [{ name: 'pv', accessModes: ['ReadWriteOncePod'], claim: 'data' }],
      persistentVolumeClaims: [
        { name: 'data', storageClass: '', accessModes: ['ReadWriteOncePod'], volume: 'pv' },
      ],
    },
    existingPods: [existing('holder', 'n1', { spec: claims('data') })],
    pods: [pod('second', { spec: claims('data') })],
    expect: { unschedulable: ['second'] },
  },
  {
    name: 'in-tree GCE PD: a read-write user keeps others off the node, read-only users share',
    area: 'VolumeRestrictions',
    description:
      'On n1, holder-rw mounts GCE PD disk-a read-write and holder-ro mounts disk-b read-only. writer (disk-a) ' +
      'must avoid n1 although n1 sorts first: n2. reader-b (disk-b read-only, pinned to n1) shares it; ' +
      'writer-b (disk-b read-write, pinned to n1) conflicts: "node(s) had no available disk".',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    existingPods: [
      existing('holder-rw', 'n1', { spec: inTree({ gcePersistentDisk: { pdName: 'disk-a' } }) }),
      existing('holder-ro', 'n1', {
        spec: inTree({ gcePersistentDisk: { pdName: 'disk-b', readOnly: true } }),
      }),
    ],
    pods: [
      pod('writer', { spec: inTree({ gcePersistentDisk: { pdName: 'disk-a' } }) }),
      pod('reader-b', {
        spec: { ...inTree({ gcePersistentDisk: { pdName: 'disk-b', readOnly: true } }), ...onNode('n1') },
      }),
      pod('writer-b', { spec: { ...inTree({ gcePersistentDisk: { pdName: 'disk-b' } }), ...onNode('n1') } }),
    ],
    expect: { unschedulable: ['writer-b'], placements: { writer: ['n2'], 'reader-b': ['n1'] } },
  },
  {
    name: 'in-tree AWS EBS: one volume ID conflicts even read-only; iSCSI read-only users share',
    area: 'VolumeRestrictions',
    description:
      'n1 holds EBS vol-1 and iSCSI iqn.2026-12.test:disk, both read-only. ebs-ro (vol-1 read-only, pinned ' +
      'to n1) still conflicts (EBS has no read-only exception); ebs (unpinned) goes to n2; iscsi-ro (pinned) ' +
      'shares the IQN read-only on n1.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    existingPods: [
      existing('holder', 'n1', {
        spec: inTree({ awsElasticBlockStore: { volumeID: 'vol-1', readOnly: true } }, { iscsi: ISCSI_RO }),
      }),
    ],
    pods: [
      pod('ebs-ro', {
        spec: { ...inTree({ awsElasticBlockStore: { volumeID: 'vol-1', readOnly: true } }), ...onNode('n1') },
      }),
      pod('ebs', { spec: inTree({ awsElasticBlockStore: { volumeID: 'vol-1' } }) }),
      pod('iscsi-ro', { spec: { ...inTree({ iscsi: ISCSI_RO }), ...onNode('n1') } }),
    ],
    expect: { unschedulable: ['ebs-ro'], placements: { ebs: ['n2'], 'iscsi-ro': ['n1'] } },
  },
  {
    name: 'in-tree Ceph RBD: the same pool and image conflict when the monitors overlap',
    area: 'VolumeRestrictions',
    description:
      'n1 holds RBD kube/img through monitors 10.0.0.1:6789 and 10.0.0.2:6789 (read-write). overlap (monitors ' +
      '10.0.0.2:6789 and 10.0.0.3:6789, pinned to n1) is the same image: no available disk. disjoint (monitor ' +
      "10.0.0.9:6789, pinned) is another cluster's image of that name: it fits n1.",
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    existingPods: [
      existing('holder', 'n1', { spec: inTree({ rbd: rbd('10.0.0.1:6789', '10.0.0.2:6789') }) }),
    ],
    pods: [
      pod('overlap', {
        spec: { ...inTree({ rbd: rbd('10.0.0.2:6789', '10.0.0.3:6789') }), ...onNode('n1') },
      }),
      pod('disjoint', { spec: { ...inTree({ rbd: rbd('10.0.0.9:6789') }), ...onNode('n1') } }),
    ],
    expect: { unschedulable: ['overlap'], placements: { disjoint: ['n1'] } },
  },
  {
    name: 'a CSI attach limit sends the pod to the other node',
    area: 'NodeVolumeLimits',
    description:
      'CSINode n1 allows 1 volume of the driver and one is in use there; n2 allows 2 and is busier (so ' +
      'every score prefers n1). A pod with another volume of the driver fits only n2.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    objects: TWO_ATTACH_LIMITS,
    existingPods: [
      existing('holder', 'n1', { spec: claims('a') }),
      existing('busy', 'n2', { requests: { cpu: '2', memory: '4Gi' } }),
    ],
    pods: [pod('app', { spec: claims('b') })],
    expect: { unschedulable: [], placements: { app: ['n2'] } },
  },
  {
    name: "a VolumeAttachment no pod uses still takes the node's attach slot",
    area: 'NodeVolumeLimits',
    description:
      'CSINode n1 allows 1 volume of the driver, and a VolumeAttachment holds volume a there though no pod ' +
      'uses it (a detach still pending); n2 allows 2 and is busier (so every score prefers n1). A pod with ' +
      "volume b fits only n2: upstream counts the node's VolumeAttachments with its pods' volumes.",
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    objects: { ...TWO_ATTACH_LIMITS, volumeAttachments: [{ node: 'n1', volume: 'pv-a' }] },
    existingPods: [existing('busy', 'n2', { requests: { cpu: '2', memory: '4Gi' } })],
    pods: [pod('app', { spec: claims('b') })],
    expect: { unschedulable: [], placements: { app: ['n2'] } },
  },
  {
    name: 'a CSI attach limit reached everywhere; the same volume again still fits',
    area: 'NodeVolumeLimits',
    description:
      'The only node allows 1 volume of the driver and one is in use: a pod with another volume exceeds ' +
      'the max volume count, while a pod sharing the volume already attached is not counted twice.',
    orderIndependent: true,
    nodes: [node('n1')],
    objects: {
      csiNodes: [{ node: 'n1', drivers: { [DRIVER]: 1 } }],
      persistentVolumes: [
        { name: 'pv-a', csiDriver: DRIVER, accessModes: ['ReadWriteMany'], claim: 'a' },
        { name: 'pv-b', csiDriver: DRIVER, claim: 'b' },
      ],
      persistentVolumeClaims: [
        { name: 'a', storageClass: '', accessModes: ['ReadWriteMany'], volume: 'pv-a' },
        { name: 'b', storageClass: '', volume: 'pv-b' },
      ],
    },
    existingPods: [existing('holder', 'n1', { spec: claims('a') })],
    pods: [pod('new-volume', { spec: claims('b') }), pod('same-volume', { spec: claims('a') })],
    expect: { unschedulable: ['new-volume'], placements: { 'same-volume': ['n1'] } },
  },
];

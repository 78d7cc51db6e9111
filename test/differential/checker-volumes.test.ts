// Table tests of the volume and preemption checks: hand-built final states and what must be reported.
import type {
  V1CSIDriver,
  V1CSINode,
  V1CSIStorageCapacity,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1StorageClass,
  V1VolumeAttachment,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { claims, HOSTNAME, pod, ZONE } from './build.js';
import type { ClusterSnapshot } from './checker.js';
import { checkPreemption, checkVolumes } from './checker-volumes.js';

const node = (name: string, zone = 'a'): V1Node => ({
  metadata: { name, labels: { [HOSTNAME]: name, [ZONE]: zone } },
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } },
});

/** A running pod on `nodeName` mounting `claimNames`; names starting with "old" are pre-bound. */
function p(name: string, nodeName: string, claimNames: string[] = [], priority = 0): V1Pod {
  return {
    metadata: { name, namespace: 'ns' },
    spec: { ...pod(name, { spec: claims(...claimNames) }).spec, nodeName, priority },
    status: { phase: 'Running' },
  };
}

function claim(name: string, volume?: string, modes = ['ReadWriteOnce']): V1PersistentVolumeClaim {
  return {
    metadata: { name, namespace: 'ns' },
    spec: { accessModes: modes, ...(volume ? { volumeName: volume } : {}) },
    status: { phase: volume ? 'Bound' : 'Pending' },
  };
}

function pv(
  name: string,
  o: { node?: string; zoneLabel?: string; driver?: string; ebs?: string } = {},
): V1PersistentVolume {
  return {
    metadata: { name, labels: o.zoneLabel ? { [ZONE]: o.zoneLabel } : {} },
    spec: {
      ...(o.driver ? { csi: { driver: o.driver, volumeHandle: name } } : {}),
      ...(o.ebs ? { awsElasticBlockStore: { volumeID: o.ebs } } : {}),
      ...(o.node
        ? {
            nodeAffinity: {
              required: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: HOSTNAME, operator: 'In', values: [o.node] }] },
                ],
              },
            },
          }
        : {}),
    },
  };
}

/** A PV with only the beta zone label (zone a): the checker reads it as the GA one. */
const betaZonePv: V1PersistentVolume = {
  ...pv('v'),
  metadata: { name: 'v', labels: { 'failure-domain.beta.kubernetes.io/zone': 'a' } },
};

const csiNode = (name: string, driver: string, count: number): V1CSINode => ({
  metadata: { name },
  spec: { drivers: [{ name: driver, nodeID: name, allocatable: { count } }] },
});

const attachment = (nodeName: string, attacher: string, volume: string): V1VolumeAttachment => ({
  metadata: { name: `${nodeName}-${attacher}-${volume}` },
  spec: { nodeName, attacher, source: { persistentVolumeName: volume } },
});

const scheduled = (x: V1Pod) => !x.metadata?.name?.startsWith('old');

/** A 5Gi claim of class `fast` the scheduler provisioned for `selectedNode`, bound to `v`. */
const provisioned = (name: string, selectedNode: string): V1PersistentVolumeClaim => {
  const c = claim(name, 'v');
  return {
    ...c,
    metadata: { ...c.metadata, annotations: { 'volume.kubernetes.io/selected-node': selectedNode } },
    spec: { ...c.spec, storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } },
  };
};
const fast: V1StorageClass = { metadata: { name: 'fast' }, provisioner: 'd' };
const tracking = (storageCapacity: boolean): V1CSIDriver => ({
  metadata: { name: 'd' },
  spec: { storageCapacity },
});
const capacity = (
  onNode: string,
  size: string,
  o: { maximumVolumeSize?: string; storageClassName?: string } = {},
): V1CSIStorageCapacity => ({
  metadata: { name: `${onNode}-${size}` },
  storageClassName: o.storageClassName ?? 'fast',
  nodeTopology: { matchLabels: { [HOSTNAME]: onNode } },
  capacity: size,
  ...(o.maximumVolumeSize ? { maximumVolumeSize: o.maximumVolumeSize } : {}),
});
/** A pod on n1 whose 5Gi claim was provisioned there, with these capacities (and a tracking driver). */
const onCapacities = (caps: V1CSIStorageCapacity[], driver = tracking(true)): Partial<ClusterSnapshot> => ({
  pods: [p('a', 'n1', ['c'])],
  claims: [provisioned('c', 'n1')],
  volumes: [pv('v', { node: 'n1' })],
  storageClasses: [fast],
  csiDrivers: [driver],
  storageCapacities: caps,
});

function volumes(s: Partial<ClusterSnapshot>): string[] {
  const snap: ClusterSnapshot = { nodes: [node('n1'), node('n2', 'b')], namespaces: [], pods: [], ...s };
  return checkVolumes(snap, scheduled).map((v) => `${v.plugin} ${v.pod}`);
}

describe('checkVolumes', () => {
  it.each<[string, Partial<ClusterSnapshot>, string[]]>([
    [
      'a claim bound to a PV on the pod node',
      { pods: [p('a', 'n1', ['c'])], claims: [claim('c', 'v')], volumes: [pv('v', { node: 'n1' })] },
      [],
    ],
    [
      "a PV's node affinity elsewhere",
      { pods: [p('a', 'n2', ['c'])], claims: [claim('c', 'v')], volumes: [pv('v', { node: 'n1' })] },
      ['VolumeBinding ns/a'],
    ],
    ['a missing claim', { pods: [p('a', 'n1', ['c'])] }, ['VolumeBinding ns/a']],
    ['an unbound claim', { pods: [p('a', 'n1', ['c'])], claims: [claim('c')] }, ['VolumeBinding ns/a']],
    [
      'a pre-bound pod is context only',
      { pods: [p('old', 'n2', ['c'])], claims: [claim('c', 'v')], volumes: [pv('v', { node: 'n1' })] },
      [],
    ],
    [
      "the PV's zone label against the node's",
      { pods: [p('a', 'n2', ['c'])], claims: [claim('c', 'v')], volumes: [pv('v', { zoneLabel: 'a' })] },
      ['VolumeZone ns/a'],
    ],
    [
      'a beta zone label against a node with only the GA one (here zone b: a mismatch)',
      {
        pods: [p('a', 'n2', ['c'])],
        claims: [claim('c', 'v')],
        volumes: [betaZonePv],
      },
      ['VolumeZone ns/a'],
    ],
    [
      'a beta zone label matches the GA one',
      {
        pods: [p('a', 'n1', ['c'])],
        claims: [claim('c', 'v')],
        volumes: [betaZonePv],
      },
      [],
    ],
    [
      'a multi-zone label is a set',
      { pods: [p('a', 'n2', ['c'])], claims: [claim('c', 'v')], volumes: [pv('v', { zoneLabel: 'a__b' })] },
      [],
    ],
    [
      'a ReadWriteOncePod claim used twice',
      {
        pods: [p('old', 'n1', ['c']), p('a', 'n2', ['c'])],
        claims: [claim('c', 'v', ['ReadWriteOncePod'])],
        volumes: [pv('v')],
      },
      ['VolumeRestrictions ns/old, ns/a'],
    ],
    [
      'a ReadWriteOnce claim used twice is not VolumeRestrictions business',
      { pods: [p('old', 'n1', ['c']), p('a', 'n2', ['c'])], claims: [claim('c', 'v')], volumes: [pv('v')] },
      [],
    ],
    [
      'two volumes of a driver on a node allowing one',
      {
        pods: [p('old', 'n1', ['c1']), p('a', 'n1', ['c2'])],
        claims: [claim('c1', 'v1'), claim('c2', 'v2')],
        volumes: [pv('v1', { driver: 'd' }), pv('v2', { driver: 'd' })],
        csiNodes: [csiNode('n1', 'd', 1)],
      },
      ['NodeVolumeLimits ns/a'],
    ],
    [
      "a VolumeAttachment no pod uses fills the node's one slot",
      {
        pods: [p('a', 'n1', ['c2'])],
        claims: [claim('c2', 'v2')],
        volumes: [pv('v1', { driver: 'd' }), pv('v2', { driver: 'd' })],
        csiNodes: [csiNode('n1', 'd', 1)],
        volumeAttachments: [attachment('n1', 'd', 'v1'), attachment('n2', 'd', 'v2')],
      },
      ['NodeVolumeLimits ns/a'],
    ],
    [
      "a VolumeAttachment of the pod's own volume, or on another node, or of another driver, adds nothing",
      {
        pods: [p('a', 'n1', ['c2'])],
        claims: [claim('c2', 'v2')],
        volumes: [pv('v1', { driver: 'd' }), pv('v2', { driver: 'd' })],
        csiNodes: [csiNode('n1', 'd', 1)],
        volumeAttachments: [
          attachment('n1', 'd', 'v2'),
          attachment('n2', 'd', 'v1'),
          attachment('n1', 'e', 'v1'),
        ],
      },
      [],
    ],
    [
      'an in-tree EBS PV takes a slot of the EBS CSI driver (CSI migration)',
      {
        pods: [p('old', 'n1', ['c1']), p('a', 'n1', ['c2'])],
        claims: [claim('c1', 'v1'), claim('c2', 'v2')],
        volumes: [pv('v1', { ebs: 'aws://us-east-1a/vol-1' }), pv('v2', { driver: 'ebs.csi.aws.com' })],
        csiNodes: [csiNode('n1', 'ebs.csi.aws.com', 1)],
      },
      ['NodeVolumeLimits ns/a'],
    ],
    [
      'an in-tree EBS PV and a CSI PV of the same disk count once',
      {
        pods: [p('old', 'n1', ['c1']), p('a', 'n1', ['c2'])],
        claims: [claim('c1', 'v1'), claim('c2', 'vol-2')],
        volumes: [pv('v1', { ebs: 'aws://us-east-1a/vol-2' }), pv('vol-2', { driver: 'ebs.csi.aws.com' })],
        csiNodes: [csiNode('n1', 'ebs.csi.aws.com', 1)],
      },
      [],
    ],
    ["a provisioned claim the node's capacity holds", onCapacities([capacity('n1', '10Gi')]), []],
    [
      "a provisioned claim no capacity on its node holds (another node's, another class's, too small)",
      onCapacities([
        capacity('n2', '10Gi'),
        capacity('n1', '10Gi', { storageClassName: 'slow' }),
        capacity('n1', '1Gi'),
      ]),
      ['VolumeBinding ns/a'],
    ],
    [
      'maximumVolumeSize, when set, is the limit rather than capacity',
      onCapacities([capacity('n1', '10Gi', { maximumVolumeSize: '4Gi' })]),
      ['VolumeBinding ns/a'],
    ],
    ['a driver that does not track capacity is not checked', onCapacities([], tracking(false)), []],
    [
      'a claim bound to an existing PV (not provisioned) is not checked',
      {
        ...onCapacities([]),
        claims: [{ ...provisioned('c', 'n1'), metadata: { name: 'c', namespace: 'ns' } }],
      },
      [],
    ],
    [
      'one volume shared by two pods counts once',
      {
        pods: [p('old', 'n1', ['c1']), p('a', 'n1', ['c1'])],
        claims: [claim('c1', 'v1')],
        volumes: [pv('v1', { driver: 'd' })],
        csiNodes: [csiNode('n1', 'd', 1)],
      },
      [],
    ],
  ])('%s', (_, snap, want) => {
    expect(volumes(snap)).toEqual(want);
  });
});

describe('checkPreemption', () => {
  const nodes = [node('n1'), node('n2')];
  const old = (name: string, on: string, priority: number) => p(`old-${name}`, on, [], priority);
  it.each<[string, V1Pod[], V1Pod[], string[]]>([
    ['a victim of a higher-priority pod bound there', [old('v', 'n1', 10)], [p('hi', 'n1', [], 1000)], []],
    [
      'a victim of a pod still nominated there',
      [old('v', 'n1', 10)],
      [
        {
          ...p('hi', 'n1', [], 1000),
          spec: { containers: [], priority: 1000 },
          status: { nominatedNodeName: 'n1' },
        },
      ],
      [],
    ],
    ['deleted with no preemptor on its node', [old('v', 'n1', 10)], [p('hi', 'n2', [], 1000)], ['ns/old-v']],
    ['deleted by an equal priority', [old('v', 'n1', 500)], [p('peer', 'n1', [], 500)], ['ns/old-v']],
    [
      'deleted by a pod that may not preempt',
      [old('v', 'n1', 10)],
      [
        {
          ...p('hi', 'n1', [], 1000),
          spec: { ...p('hi', 'n1', [], 1000).spec, preemptionPolicy: 'Never' },
        } as V1Pod,
      ],
      ['ns/old-v'],
    ],
  ])('%s', (_, existing, incoming, want) => {
    const snap: ClusterSnapshot = { nodes, namespaces: [], pods: incoming };
    expect(checkPreemption(snap, existing, scheduled).map((v) => v.pod)).toEqual(want);
  });

  it('an existing pod still alive is no victim', () => {
    const survivor = old('s', 'n1', 10);
    const snap: ClusterSnapshot = { nodes, namespaces: [], pods: [survivor] };
    expect(checkPreemption(snap, [survivor], scheduled)).toEqual([]);
  });
});

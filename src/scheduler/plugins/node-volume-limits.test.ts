/**
 * NodeVolumeLimits, with the facts of upstream's csi_test.go (TestCSILimits): attached + new volumes per
 * driver against the CSINode count, shared volumes counted once, unbound claims counted against their
 * class's provisioner, missing claims.
 */
import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../cluster/model.js';
import { ERR_MAX_VOLUME_COUNT, nodeVolumeLimits } from './node-volume-limits.js';
import { claim, csiNode, node, pod, pv, runFilter, storage, type VolumeSpec } from './volume.testing.js';

const EBS = 'ebs.csi.aws.com';
const GCE = 'pd.csi.storage.gke.io';

// Bound claims c-ebs-1..4 on EBS volumes, c-gce-1 on a GCE volume, c-nfs on a non-CSI PV.
const ebsPvs = [1, 2, 3, 4].map((i) => pv(`pv-ebs-${i}`, { csi: { driver: EBS }, claimRef: `c-ebs-${i}` }));
const PVS = [
  ...ebsPvs,
  pv('pv-gce-1', { csi: { driver: GCE }, claimRef: 'c-gce-1' }),
  pv('pv-nfs', { claimRef: 'c-nfs' }),
  // In-tree PVs: an EBS one (migrated: counts under the EBS driver), the CSI PV of the same disk, a vSphere one
  // (its migration is not among those kube-scheduler counts).
  pv('pv-intree', {
    claimRef: 'c-intree',
    source: { awsElasticBlockStore: { volumeID: 'aws://us-east-1a/vol-0abc' } },
  }),
  pv('pv-same-disk', { csi: { driver: EBS, handle: 'vol-0abc' }, claimRef: 'c-same-disk' }),
  pv('pv-vsphere', { claimRef: 'c-vsphere', source: { vsphereVolume: { volumePath: '[ds] v.vmdk' } } }),
];
const bound = (name: string, volumeName: string) => claim(name, { volumeName, bound: true, class: 'ebs' });
const CLAIMS = [
  ...PVS.map((v) => bound(v.claimRef?.name as string, v.name)),
  // Unbound claims of a class provisioned by the EBS driver, and one whose PV was deleted.
  claim('c-pending-1', { class: 'ebs' }),
  claim('c-pending-2', { class: 'ebs' }),
  claim('c-no-class', { class: null }),
  claim('c-dangling', { class: 'ebs', volumeName: 'pv-gone', bound: true }),
  // Unbound, of a class the in-tree EBS plugin provisions (a cluster's old default gp2 class).
  claim('c-gp2', { class: 'gp2' }),
];
const CLASSES = [EBS, 'kubernetes.io/aws-ebs'].map((provisioner) => ({
  name: provisioner === EBS ? 'ebs' : 'gp2',
  resourceVersion: '1',
  provisioner,
  volumeBindingMode: 'WaitForFirstConsumer',
  isDefault: false,
  allowedTopologies: [],
}));
const INLINE_EBS = { name: 'scratch', awsElasticBlockStore: { volumeID: 'vol-inline' } };

interface Case {
  name: string;
  wants: VolumeSpec[];
  /** Volumes of the pods already on node n, one pod per entry. */
  existing: VolumeSpec[][];
  limits?: Record<string, number | undefined>;
  /** VolumeAttachments: [PV name, node, attacher (default EBS)]. */
  attachments?: [string, string, string?][];
  want: string;
  skipped?: boolean;
}

const cases: Case[] = [
  { name: 'no volumes', wants: [], existing: [], limits: { [EBS]: 0 }, want: 'ok', skipped: true },
  { name: 'no CSINode: no limit', wants: ['c-ebs-1'], existing: [['c-ebs-2'], ['c-ebs-3']], want: 'ok' },
  {
    name: 'a driver without a count: no limit',
    wants: ['c-ebs-1'],
    existing: [['c-ebs-2']],
    limits: { [EBS]: undefined },
    want: 'ok',
  },
  {
    name: 'within the limit',
    wants: ['c-ebs-1'],
    existing: [['c-ebs-2'], ['c-ebs-3']],
    limits: { [EBS]: 3 },
    want: 'ok',
  },
  {
    name: 'over the limit',
    wants: ['c-ebs-1'],
    existing: [['c-ebs-2'], ['c-ebs-3']],
    limits: { [EBS]: 2 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'two new volumes over the limit',
    wants: ['c-ebs-1', 'c-ebs-2'],
    existing: [['c-ebs-3']],
    limits: { [EBS]: 2 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'a volume already attached for another pod is free',
    wants: ['c-ebs-1'],
    existing: [['c-ebs-1'], ['c-ebs-2']],
    limits: { [EBS]: 2 },
    want: 'ok',
  },
  {
    name: 'one volume used by two pods counts once',
    wants: ['c-ebs-3'],
    existing: [['c-ebs-1'], ['c-ebs-1']],
    limits: { [EBS]: 2 },
    want: 'ok',
  },
  {
    name: "another driver's volumes do not count",
    wants: ['c-ebs-1'],
    existing: [['c-gce-1']],
    limits: { [EBS]: 1, [GCE]: 1 },
    want: 'ok',
  },
  {
    name: "the other driver's limit is reached, not this one's",
    wants: ['c-gce-1'],
    existing: [['c-ebs-1']],
    limits: { [EBS]: 1, [GCE]: 0 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'a non-CSI PV is not counted',
    wants: ['c-nfs'],
    existing: [['c-ebs-1']],
    limits: { [EBS]: 1 },
    want: 'ok',
  },
  {
    name: "an unbound claim counts against its class's provisioner",
    wants: ['c-pending-1'],
    existing: [['c-ebs-1']],
    limits: { [EBS]: 1 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'an unbound claim on the node counts too',
    wants: ['c-ebs-1'],
    existing: [['c-pending-1']],
    limits: { [EBS]: 1 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'the same unbound claim counts once',
    wants: ['c-pending-1'],
    existing: [['c-pending-1']],
    limits: { [EBS]: 1 },
    want: 'ok',
  },
  {
    name: 'a claim whose PV is gone counts through its class',
    wants: ['c-dangling'],
    existing: [['c-ebs-1']],
    limits: { [EBS]: 1 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'a claim without a class is not counted',
    wants: ['c-no-class'],
    existing: [['c-ebs-1']],
    limits: { [EBS]: 1 },
    want: 'ok',
  },
  {
    name: "an existing pod's missing claim is not counted",
    wants: ['c-ebs-1'],
    existing: [['c-missing']],
    limits: { [EBS]: 1 },
    want: 'ok',
  },
  // In-tree volumes migrated to CSI count under their CSI driver (csi-translation-lib's translation).
  {
    name: 'an in-tree EBS PV takes an EBS attach slot',
    wants: ['c-ebs-1'],
    existing: [['c-intree']],
    limits: { [EBS]: 1 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'an in-tree PV and a CSI PV of the same disk count once',
    wants: ['c-same-disk'],
    existing: [['c-intree']],
    limits: { [EBS]: 1 },
    want: 'ok',
  },
  {
    name: "an unbound claim of an in-tree provisioner's class counts under its CSI driver",
    wants: ['c-gp2'],
    existing: [['c-ebs-1']],
    limits: { [EBS]: 1 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'an inline in-tree EBS volume counts, for the new pod and for those on the node',
    wants: [INLINE_EBS],
    existing: [['c-ebs-1']],
    limits: { [EBS]: 1 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'an inline volume on the node counts against a new claim',
    wants: ['c-ebs-1'],
    existing: [[INLINE_EBS]],
    limits: { [EBS]: 1 },
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'an in-tree vSphere PV is not counted',
    wants: ['c-vsphere'],
    existing: [],
    limits: { 'csi.vsphere.vmware.com': 0 },
    want: 'ok',
  },
  // VolumeAttachments count even where no pod uses the volume (a detach pending), once per volume.
  {
    name: 'VolumeAttachments alone reach the limit',
    wants: ['c-ebs-1'],
    existing: [],
    limits: { [EBS]: 2 },
    attachments: [
      ['pv-ebs-2', 'n'],
      ['pv-ebs-3', 'n'],
    ],
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'VolumeAttachments under the limit',
    wants: ['c-ebs-1'],
    existing: [],
    limits: { [EBS]: 2 },
    attachments: [['pv-ebs-2', 'n']],
    want: 'ok',
  },
  {
    name: "a VolumeAttachment of a pod's volume is not counted twice",
    wants: ['c-ebs-1'],
    existing: [['c-ebs-2']],
    limits: { [EBS]: 2 },
    attachments: [['pv-ebs-2', 'n']],
    want: 'ok',
  },
  {
    name: "another node's VolumeAttachments do not count",
    wants: ['c-ebs-1'],
    existing: [],
    limits: { [EBS]: 1 },
    attachments: [['pv-ebs-2', 'm']],
    want: 'ok',
  },
  {
    name: 'a VolumeAttachment of a missing or non-CSI PV, or with no attacher, is not counted',
    wants: ['c-ebs-1'],
    existing: [],
    limits: { [EBS]: 1 },
    attachments: [
      ['pv-gone', 'n'],
      ['pv-nfs', 'n'],
      ['pv-ebs-2', 'n', ''],
    ],
    want: 'ok',
  },
  {
    name: "a VolumeAttachment counts under its attacher's name",
    wants: ['c-ebs-1'],
    existing: [],
    limits: { [EBS]: 1, [GCE]: 1 },
    attachments: [['pv-ebs-2', 'n', GCE]],
    want: 'ok',
  },
  {
    // Upstream deletes from the new volumes only those pods use: one only a VolumeAttachment holds is
    // counted as attached and as new.
    name: 'the volume a VolumeAttachment holds, wanted again, counts twice',
    wants: ['c-ebs-2'],
    existing: [],
    limits: { [EBS]: 1 },
    attachments: [['pv-ebs-2', 'n']],
    want: ERR_MAX_VOLUME_COUNT,
  },
  {
    name: 'a missing claim of the pod',
    wants: ['c-missing'],
    existing: [],
    limits: { [EBS]: 1 },
    want: 'looking up PVC default/c-missing: persistentvolumeclaim "c-missing" not found',
  },
];

describe('NodeVolumeLimits', () => {
  it.each(cases)('$name', (c) => {
    const plugin = nodeVolumeLimits(
      storage({
        claims: CLAIMS,
        pvs: PVS,
        classes: CLASSES,
        csiNodes: c.limits ? [csiNode('n', c.limits)] : [],
        attachments: (c.attachments ?? []).map(([pvName, nodeName, attacher], i) => ({
          name: `va-${i}`,
          resourceVersion: '1',
          nodeName,
          attacher: attacher ?? EBS,
          persistentVolumeName: pvName,
        })),
      }),
    );
    const existing: PodInfo[] = c.existing.map((v, i) => pod(`e${i}`, v, { node: 'n' }));
    const r = runFilter(plugin, [node('n'), node('m')], existing, pod('p', c.wants));
    expect(r.outcome['n']).toBe(c.want);
    expect(r.outcome['m']).toBe(c.want.startsWith('looking up') ? c.want : 'ok');
    expect(r.skipped).toBe(c.skipped === true);
    const reason = r.verdicts[0]?.reasons[0];
    if (reason) expect(reason.unresolvable === true).toBe(c.want.startsWith('looking up'));
  });

  it('explains the count', () => {
    const plugin = nodeVolumeLimits(
      storage({ claims: CLAIMS, pvs: PVS, classes: CLASSES, csiNodes: [csiNode('n', { [EBS]: 1 })] }),
    );
    const r = runFilter(plugin, [node('n')], [pod('e', ['c-ebs-2'], { node: 'n' })], pod('p', ['c-ebs-1']));
    expect(r.verdicts[0]?.reasons[0]?.detail).toBe(`${EBS}: 1 attached + 1 new > 1 allowed`);
  });

  it('generic ephemeral volumes are counted like claims', () => {
    const eph = claim('p-scratch', { class: 'ebs' });
    const plugin = nodeVolumeLimits(
      storage({
        claims: [...CLAIMS, eph],
        pvs: PVS,
        classes: CLASSES,
        csiNodes: [csiNode('n', { [EBS]: 1 })],
      }),
    );
    const r = runFilter(
      plugin,
      [node('n')],
      [pod('e', ['c-ebs-2'], { node: 'n' })],
      pod('p', [{ ephemeral: 'scratch' }]),
    );
    expect(r.outcome).toEqual({ n: ERR_MAX_VOLUME_COUNT });
  });
});

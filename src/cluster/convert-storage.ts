/**
 * Storage and policy API objects → the plain data the scheduler's volume and preemption plugins read:
 * PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes, VolumeAttachments,
 * PodDisruptionBudgets; and DeviceClasses, which the webhook's gate reads. Like
 * convert.ts, every accessor tolerates both typed-client classes and raw JSON.
 */

import { migratedVolume } from './csi-migration.js';
import type {
  ClaimInfo,
  CsiDriverInfo,
  CsiNodeInfo,
  CsiStorageCapacityInfo,
  DeviceClassInfo,
  DisruptionBudgetInfo,
  LabelSelector,
  NodeSelectorTerm,
  StorageClassInfo,
  VolumeAttachmentInfo,
  VolumeInfo,
} from './model.js';
import { bytes } from './quantity.js';

// biome-ignore lint/suspicious/noExplicitAny: API objects are untyped JSON at this boundary.
type Json = any;

const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

function strMap(v: unknown): Record<string, string> {
  return v && typeof v === 'object' ? { ...(v as Record<string, string>) } : {};
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

/** A metav1.LabelSelector; undefined when absent (nil). */
export function toLabelSelector(v: Json): LabelSelector | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const out: LabelSelector = {};
  if (v.matchLabels) out.matchLabels = strMap(v.matchLabels);
  if (Array.isArray(v.matchExpressions)) {
    out.matchExpressions = (v.matchExpressions as Json[]).map((e) => ({
      key: String(e?.key ?? ''),
      operator: String(e?.operator ?? ''),
      values: strings(e?.values),
    }));
  }
  return out;
}

function terms(list: Json): NodeSelectorTerm[] {
  return ((list ?? []) as Json[]).map((t) => ({
    matchExpressions: t?.matchExpressions,
    matchFields: t?.matchFields,
  }));
}

export function toClaimInfo(o: Json): ClaimInfo {
  const meta = o?.metadata ?? {};
  const spec = o?.spec ?? {};
  const claim: ClaimInfo = {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    uid: meta.uid ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    phase: String(o?.status?.phase ?? 'Pending'),
    volumeName: spec.volumeName ?? '',
    accessModes: strings(spec.accessModes),
    requestBytes: bytes(spec.resources?.requests?.storage),
    volumeMode: spec.volumeMode ?? 'Filesystem',
    volumeAttributesClassName: spec.volumeAttributesClassName ?? '',
    annotations: strMap(meta.annotations),
    deleting: Boolean(meta.deletionTimestamp),
  };
  if (typeof spec.storageClassName === 'string') claim.storageClassName = spec.storageClassName;
  const sel = toLabelSelector(spec.selector);
  if (sel) claim.selector = sel;
  return claim;
}

function diskHandle(spec: Json): string | undefined {
  if (spec?.csi?.volumeHandle) return `csi:${spec.csi.driver}:${spec.csi.volumeHandle}`;
  if (spec?.gcePersistentDisk?.pdName) return `gce-pd:${spec.gcePersistentDisk.pdName}`;
  if (spec?.awsElasticBlockStore?.volumeID) return `aws-ebs:${spec.awsElasticBlockStore.volumeID}`;
  return undefined;
}

export function toVolumeInfo(o: Json): VolumeInfo {
  const meta = o?.metadata ?? {};
  const spec = o?.spec ?? {};
  const pv: VolumeInfo = {
    name: meta.name ?? '',
    uid: meta.uid ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    phase: String(o?.status?.phase ?? 'Pending'),
    // GetPersistentVolumeClass: the beta annotation first, as a PV made before spec.storageClassName has it.
    storageClassName: meta.annotations?.[BETA_CLASS_ANNOTATION] ?? spec.storageClassName ?? '',
    capacityBytes: bytes(spec.capacity?.storage),
    accessModes: strings(spec.accessModes),
    volumeMode: spec.volumeMode ?? 'Filesystem',
    volumeAttributesClassName: spec.volumeAttributesClassName ?? '',
    labels: strMap(meta.labels),
    nodeAffinity: terms(spec.nodeAffinity?.required?.nodeSelectorTerms),
    deleting: Boolean(meta.deletionTimestamp),
  };
  if (spec.claimRef?.name) {
    pv.claimRef = {
      namespace: spec.claimRef.namespace ?? '',
      name: spec.claimRef.name,
      uid: spec.claimRef.uid ?? '',
    };
  }
  if (spec.csi?.driver) pv.csiDriver = spec.csi.driver;
  const handle = diskHandle(spec);
  if (handle) pv.handle = handle;
  const migrated = spec.csi ? undefined : migratedVolume(spec, pv.labels);
  if (migrated) pv.migrated = migrated;
  return pv;
}

export function toStorageClassInfo(o: Json): StorageClassInfo {
  const meta = o?.metadata ?? {};
  return {
    name: meta.name ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    provisioner: o?.provisioner ?? '',
    volumeBindingMode: o?.volumeBindingMode ?? 'Immediate',
    isDefault: meta.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true',
    // allowedTopologies use matchLabelExpressions {key, values}: In over node labels.
    allowedTopologies: ((o?.allowedTopologies ?? []) as Json[]).map((t) => ({
      matchExpressions: ((t?.matchLabelExpressions ?? []) as Json[]).map((e) => ({
        key: String(e?.key ?? ''),
        operator: 'In',
        values: strings(e?.values),
      })),
    })),
  };
}

export function toCsiNodeInfo(o: Json): CsiNodeInfo {
  const meta = o?.metadata ?? {};
  return {
    name: meta.name ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    drivers: ((o?.spec?.drivers ?? []) as Json[]).map((d) => {
      const count = d?.allocatable?.count;
      return typeof count === 'number'
        ? { name: String(d?.name ?? ''), allocatableCount: count }
        : { name: String(d?.name ?? '') };
    }),
  };
}

export function toCsiDriverInfo(o: Json): CsiDriverInfo {
  const meta = o?.metadata ?? {};
  return {
    name: meta.name ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    storageCapacity: o?.spec?.storageCapacity === true,
  };
}

export function toCsiStorageCapacityInfo(o: Json): CsiStorageCapacityInfo {
  const meta = o?.metadata ?? {};
  const info: CsiStorageCapacityInfo = {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    storageClassName: String(o?.storageClassName ?? ''),
  };
  const topology = toLabelSelector(o?.nodeTopology);
  if (topology) info.nodeTopology = topology;
  const limit = o?.maximumVolumeSize ?? o?.capacity;
  if (limit !== undefined && limit !== null) info.limitBytes = bytes(limit);
  return info;
}

export function toVolumeAttachmentInfo(o: Json): VolumeAttachmentInfo {
  const meta = o?.metadata ?? {};
  const spec = o?.spec ?? {};
  const va: VolumeAttachmentInfo = {
    name: meta.name ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    nodeName: String(spec.nodeName ?? ''),
    attacher: String(spec.attacher ?? ''),
  };
  const pv = spec.source?.persistentVolumeName;
  if (typeof pv === 'string' && pv) va.persistentVolumeName = pv;
  return va;
}

export function toDeviceClassInfo(o: Json): DeviceClassInfo {
  const meta = o?.metadata ?? {};
  const created = meta.creationTimestamp ? new Date(meta.creationTimestamp).getTime() : 0;
  const dc: DeviceClassInfo = {
    name: meta.name ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    createdAt: Number.isFinite(created) ? created : 0,
  };
  const ext = o?.spec?.extendedResourceName;
  if (typeof ext === 'string' && ext) dc.extendedResourceName = ext;
  return dc;
}

export function toDisruptionBudgetInfo(o: Json): DisruptionBudgetInfo {
  const meta = o?.metadata ?? {};
  const pdb: DisruptionBudgetInfo = {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    disruptionsAllowed: Number(o?.status?.disruptionsAllowed) || 0,
  };
  const sel = toLabelSelector(o?.spec?.selector);
  if (sel) pdb.selector = sel;
  const disrupted = o?.status?.disruptedPods;
  if (disrupted && typeof disrupted === 'object') {
    const names = Object.keys(disrupted);
    if (names.length > 0) pdb.disruptedPods = names.sort();
  }
  return pdb;
}

/**
 * What the volume plugins (VolumeRestrictions, VolumeZone, NodeVolumeLimits, VolumeBinding) share: the
 * read-only storage view they get through PluginDeps, and component-helpers/storage/volume's rules —
 * a claim's class (GetPersistentVolumeClaimClass), "fully bound" (volumeName + bind-completed), a PV's
 * node affinity against a node (CheckNodeAffinity), the delay-binding mode of a class.
 */
import type {
  ClaimInfo,
  NodeInfo,
  PodInfo,
  PodVolume,
  StorageClassInfo,
  VolumeInfo,
} from '../../cluster/model.js';
import type { ClusterView } from '../../cluster/view.js';
import { termMatches } from '../predicates.js';

export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
const ANN_BETA_CLASS = 'volume.beta.kubernetes.io/storage-class';
/** A StorageClass provisioner saying "no dynamic provisioning" (local volumes). */
export const NOT_SUPPORTED_PROVISIONER = 'kubernetes.io/no-provisioner';
export const WAIT_FOR_FIRST_CONSUMER = 'WaitForFirstConsumer';
export const READ_WRITE_ONCE_POD = 'ReadWriteOncePod';

/** The shared cache's maps the volume plugins read (pods: VolumeBinding's PreBind stops waiting for a deleted one). */
export type StorageMaps = Pick<
  ClusterView,
  | 'claims'
  | 'volumes'
  | 'storageClasses'
  | 'csiNodes'
  | 'csiDrivers'
  | 'csiStorageCapacities'
  | 'volumeAttachments'
  | 'pods'
>;

/** The shared cache's storage kinds (ClusterCache with `storage: true` satisfies it), read-only. */
export interface StorageView extends StorageMaps {
  /** Calls `fn` after any claim, PV or pod change; returns the unsubscribe. */
  onChange(fn: () => void): () => void;
}

const EMPTY = new Map<never, never>();

/** A view with nothing in it (tests, a cache that does not watch storage). */
export const EMPTY_STORAGE: StorageView = {
  claims: EMPTY,
  volumes: EMPTY,
  storageClasses: EMPTY,
  csiNodes: EMPTY,
  csiDrivers: EMPTY,
  csiStorageCapacities: EMPTY,
  volumeAttachments: EMPTY,
  pods: EMPTY,
  onChange: () => () => {},
};

export function claimKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** The pod's volumes backed by a claim: persistentVolumeClaim and generic ephemeral ones. */
export function claimVolumes(pod: PodInfo): (PodVolume & { claimName: string })[] {
  return pod.volumes.filter((v): v is PodVolume & { claimName: string } => v.claimName !== undefined);
}

/** GetPersistentVolumeClaimClass: the beta annotation, then spec.storageClassName; '' = no class. */
export function claimClass(c: ClaimInfo): string {
  return c.annotations[ANN_BETA_CLASS] ?? c.storageClassName ?? '';
}

/** isPVCFullyBound: the PV controller finished binding (volumeName and pv.kubernetes.io/bind-completed). */
export function fullyBound(c: ClaimInfo): boolean {
  return c.volumeName !== '' && Object.hasOwn(c.annotations, ANN_BIND_COMPLETED);
}

/** IsDelayBindingMode: the claim's class exists and binds WaitForFirstConsumer. */
export function delayBinding(c: ClaimInfo, classes: ReadonlyMap<string, StorageClassInfo>): boolean {
  const name = claimClass(c);
  if (name === '') return false;
  return classes.get(name)?.volumeBindingMode === WAIT_FOR_FIRST_CONSUMER;
}

/** CheckNodeAffinity: a PV without required node affinity fits any node; else one term must match. */
export function volumeFitsNode(pv: VolumeInfo, node: NodeInfo): boolean {
  return pv.nodeAffinity.length === 0 || pv.nodeAffinity.some((t) => termMatches(t, node));
}

/** Every claim mode is offered by the PV (CheckAccessModes). */
export function accessModesFit(claim: ClaimInfo, pv: VolumeInfo): boolean {
  return claim.accessModes.every((m) => pv.accessModes.includes(m));
}

/** The "not found" texts apiserver errors carry, as upstream's statuses quote them. */
export function claimNotFound(name: string): string {
  return `persistentvolumeclaim "${name}" not found`;
}

/** Resource versions are etcd revisions: compare numerically when both are integers. */
export function olderThan(a: string, b: string): boolean {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(a) < BigInt(b);
  return false;
}

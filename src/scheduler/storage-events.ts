/**
 * The scheduler's side of the shared cache's storage kinds: the read-only StorageView the volume
 * plugins get, and which storage changes send unschedulable pods back to the queue — the events upstream's volume plugins
 * register (EventsToRegister), coarsened to "any pod may benefit" since the queue moves all at once:
 *   PVC add/update (VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits),
 *   PV add/update (VolumeBinding, VolumeZone),
 *   StorageClass add, or an update of allowedTopologies (VolumeBinding, VolumeZone),
 *   CSINode add, or an update of its drivers' limits (NodeVolumeLimits, VolumeBinding),
 *   VolumeAttachment delete (NodeVolumeLimits: a detached volume frees room under the node's limit).
 * Other deletions free nothing these plugins wait for (a deleted bound pod requeues through the pod event).
 */
import type {
  ClaimInfo,
  CsiDriverInfo,
  CsiNodeInfo,
  CsiStorageCapacityInfo,
  StorageClassInfo,
  VolumeAttachmentInfo,
  VolumeInfo,
} from '../cluster/model.js';
import type { ClusterView } from '../cluster/view.js';
import type { StorageView } from './plugins/volume-common.js';

/**
 * The cache's storage maps (empty when it does not watch them; each is one map for the cache's life, so
 * they are handed over as they are); onChange hears claims, PVs and pod deletes.
 */
export function storageViewOf(cache: ClusterView): StorageView {
  return {
    claims: cache.claims,
    volumes: cache.volumes,
    storageClasses: cache.storageClasses,
    csiNodes: cache.csiNodes,
    csiDrivers: cache.csiDrivers,
    csiStorageCapacities: cache.csiStorageCapacities,
    volumeAttachments: cache.volumeAttachments,
    pods: cache.pods,
    onChange(fn) {
      const offs = [
        cache.bus.on('claim', () => fn()),
        cache.bus.on('volume', () => fn()),
        cache.bus.on('pod', (c) => {
          if (!c.new) fn();
        }),
      ];
      return () => {
        for (const off of offs) off();
      };
    },
  };
}

interface Change<T> {
  old?: T;
  new?: T;
}

export function claimChangeMatters(c: Change<ClaimInfo>): boolean {
  return c.new !== undefined;
}

export function volumeChangeMatters(c: Change<VolumeInfo>): boolean {
  return c.new !== undefined;
}

export function storageClassChangeMatters(c: Change<StorageClassInfo>): boolean {
  if (!c.new) return false;
  if (!c.old) return true;
  return JSON.stringify(c.old.allowedTopologies) !== JSON.stringify(c.new.allowedTopologies);
}

/** Upstream's isSchedulableAfterVolumeAttachmentDeleted, coarsened: any deletion may free room. */
export function volumeAttachmentChangeMatters(c: Change<VolumeAttachmentInfo>): boolean {
  return c.new === undefined && c.old !== undefined;
}

export function csiNodeChangeMatters(c: Change<CsiNodeInfo>): boolean {
  if (!c.new) return false;
  if (!c.old) return true;
  return JSON.stringify(c.old.drivers) !== JSON.stringify(c.new.drivers);
}

/**
 * isSchedulableAfterCSIStorageCapacityChange, coarsened: a new capacity, or one that now allows larger
 * volumes or reaches other nodes or another class, may let a waiting claim be provisioned.
 */
export function storageCapacityChangeMatters(c: Change<CsiStorageCapacityInfo>): boolean {
  if (!c.new) return false;
  if (!c.old) return true;
  return (
    (c.new.limitBytes ?? 0) > (c.old.limitBytes ?? 0) ||
    c.new.storageClassName !== c.old.storageClassName ||
    JSON.stringify(c.new.nodeTopology) !== JSON.stringify(c.old.nodeTopology)
  );
}

/** isSchedulableAfterCSIDriverChange: a driver that stops tracking capacity no longer limits provisioning. */
export function csiDriverChangeMatters(c: Change<CsiDriverInfo>): boolean {
  return c.old?.storageCapacity === true && c.new !== undefined && !c.new.storageCapacity;
}

/**
 * NodeVolumeLimits (PreFilter + Filter), upstream's CSILimits: per CSI driver, the volumes attached to
 * the node plus the pod's new ones must not exceed what the node's CSINode says it can attach.
 *
 *   volume(claim) = (driver, handle) of its PV's spec.csi, or of the CSI volume an in-tree PV migrates to
 *                   (AWS EBS, GCE PD, Azure Disk, Cinder, Portworx: cluster/csi-migration.ts); claim not
 *                   bound yet (or PV missing) → (class.provisioner — an in-tree one as its CSI driver —,
 *                   "<random>-<ns>/<claim>"): a volume that will be provisioned; other PVs and claims
 *                   without a class are not counted
 *   volume(inline) = the CSI volume an inline in-tree volume of those plugins migrates to
 *   inUse         = { unique (d, handle) over the volumes of the pods on the node (bound and assumed) }
 *   vaOnly        = { (va.attacher, handle of va's CSI PV) over the node's VolumeAttachments } \ inUse
 *                   (attached but no pod there uses it, e.g. a detach still pending)
 *   attached[d]   = |inUse of d| + |vaOnly of d|
 *   new[d]        = |{ the pod's volumes of driver d } \ inUse|   (a volume shared with a pod there is free;
 *                   one only a VolumeAttachment holds is counted in both, as upstream does)
 *   fails ⇔ ∃ d with CSINode allocatable.count: attached[d] + new[d] > count[d]
 *   → Unschedulable "node(s) exceed max volume count".
 * A claim of the pod that does not exist fails UnschedulableAndUnresolvable (`looking up PVC ns/x: …`); an
 * existing pod's missing claim is not counted. A node without a CSINode, or one listing no counts, has no
 * limit. PreFilter skips pods without persistentVolumeClaim or generic ephemeral volumes, and groups the
 * VolumeAttachments by node once per cycle (upstream's informer index by spec.nodeName); one without an
 * attacher, a PV name, or whose PV is missing or not CSI is not counted (also an in-tree one, as upstream).
 */
import { randomBytes } from 'node:crypto';
import { MIGRATED_PROVISIONERS, type MigratedVolume } from '../../cluster/csi-migration.js';
import type { CsiNodeInfo, PodInfo } from '../../cluster/model.js';
import type { FilterPlugin, PreFilterPlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { PLUGIN } from './names.js';
import { claimClass, claimKey, claimNotFound, claimVolumes, type StorageView } from './volume-common.js';

export const ERR_MAX_VOLUME_COUNT = 'node(s) exceed max volume count';

/** A migrated volume's handle as a CSI PV's reads (VolumeInfo.handle), so the same disk counts once. */
function csiHandle(m: MigratedVolume): string {
  return `csi:${m.driver}:${m.handle}`;
}

/** unique volume name ("driver/handle") → driver. */
type Volumes = Map<string, string>;

/** PreFilter's state: each node's VolumeAttachments as unique volume names. */
type AttachmentsByNode = Map<string, Volumes>;
const NO_ATTACHMENTS: AttachmentsByNode = new Map();
const NO_VOLUMES: Volumes = new Map();

function limitsOf(csiNode: CsiNodeInfo | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const d of csiNode?.drivers ?? [])
    if (d.allocatableCount !== undefined) out.set(d.name, d.allocatableCount);
  return out;
}

export function nodeVolumeLimits(storage: StorageView): PreFilterPlugin & FilterPlugin {
  // Upstream's randomVolumeIDPrefix: volumes still to be provisioned never collide with real handles.
  const prefix = randomBytes(16).toString('hex');

  /** filterAttachableVolumes; returns the name of a missing claim of a new pod. */
  const attachable = (pod: PodInfo, newPod: boolean, out: Volumes): string | undefined => {
    for (const v of claimVolumes(pod)) {
      const key = claimKey(pod.namespace, v.claimName);
      const claim = storage.claims.get(key);
      if (!claim) {
        if (newPod) return v.claimName;
        continue;
      }
      let driver: string | undefined;
      let handle: string | undefined;
      const pv = claim.volumeName ? storage.volumes.get(claim.volumeName) : undefined;
      if (pv) {
        if (pv.csiDriver) {
          driver = pv.csiDriver;
          handle = pv.handle ?? pv.name;
        } else if (pv.migrated) {
          driver = pv.migrated.driver;
          handle = csiHandle(pv.migrated);
        } else continue;
      } else {
        // getCSIDriverInfoFromSC: an unbound (or dangling) claim counts against its class's driver.
        const className = claimClass(claim);
        const sc = className ? storage.storageClasses.get(className) : undefined;
        if (!sc?.provisioner) continue;
        driver = MIGRATED_PROVISIONERS.get(sc.provisioner) ?? sc.provisioner;
        handle = `${prefix}-${key}`;
      }
      out.set(`${driver}/${handle}`, driver);
    }
    for (const v of pod.volumes) {
      if (v.migrated) out.set(`${v.migrated.driver}/${csiHandle(v.migrated)}`, v.migrated.driver);
    }
    return undefined;
  };

  /** getNodeVolumeAttachmentInfo for every node at once. */
  const attachmentsByNode = (): AttachmentsByNode => {
    if (storage.volumeAttachments.size === 0) return NO_ATTACHMENTS;
    const out: AttachmentsByNode = new Map();
    for (const va of storage.volumeAttachments.values()) {
      if (!va.attacher || !va.persistentVolumeName) continue;
      const pv = storage.volumes.get(va.persistentVolumeName);
      if (!pv?.csiDriver) continue;
      let onNode = out.get(va.nodeName);
      if (!onNode) {
        onNode = new Map();
        out.set(va.nodeName, onNode);
      }
      onNode.set(`${va.attacher}/${pv.handle ?? pv.name}`, va.attacher);
    }
    return out;
  };

  return {
    name: PLUGIN.NodeVolumeLimits,
    preFilter(state, ctx) {
      if (!ctx.pod.volumes.some((v) => v.claimName !== undefined || v.migrated)) return { skip: true };
      state.write(PLUGIN.NodeVolumeLimits, attachmentsByNode());
      return undefined;
    },
    filter(state, ctx, n, verdict) {
      const newVolumes: Volumes = new Map();
      const missing = attachable(ctx.pod, true, newVolumes);
      if (missing !== undefined) {
        const msg = `looking up PVC ${ctx.pod.namespace}/${missing}: ${claimNotFound(missing)}`;
        addReason(verdict, {
          plugin: PLUGIN.NodeVolumeLimits,
          code: 'ClaimNotFound',
          reason: msg,
          detail: msg,
          unresolvable: true,
        });
        return;
      }
      if (newVolumes.size === 0) return;
      const limits = limitsOf(storage.csiNodes.get(n.name));
      if (limits.size === 0) return;
      const attached: Volumes = new Map();
      for (const p of n.pods.values()) attachable(p, false, attached);
      const attachedCount = new Map<string, number>();
      for (const [name, driver] of attached) {
        newVolumes.delete(name);
        attachedCount.set(driver, (attachedCount.get(driver) ?? 0) + 1);
      }
      const byNode = state.read<AttachmentsByNode>(PLUGIN.NodeVolumeLimits) ?? NO_ATTACHMENTS;
      for (const [name, driver] of byNode.get(n.name) ?? NO_VOLUMES) {
        if (!attached.has(name)) attachedCount.set(driver, (attachedCount.get(driver) ?? 0) + 1);
      }
      const newCount = new Map<string, number>();
      for (const driver of newVolumes.values()) newCount.set(driver, (newCount.get(driver) ?? 0) + 1);
      for (const [driver, count] of newCount) {
        const max = limits.get(driver);
        if (max === undefined) continue;
        const current = attachedCount.get(driver) ?? 0;
        if (current + count <= max) continue;
        addReason(verdict, {
          plugin: PLUGIN.NodeVolumeLimits,
          code: 'MaxVolumeCountExceeded',
          reason: ERR_MAX_VOLUME_COUNT,
          detail: `${driver}: ${current} attached + ${count} new > ${max} allowed`,
        });
        return;
      }
    },
  };
}

/**
 * VolumeRestrictions (PreFilter + Filter), as upstream's volumerestrictions plugin:
 *
 * - In-tree disks on the same node (isVolumeConflict), for each volume v of the pod and each volume e of a
 *   pod on the node:
 *     GCE PD:   v.pdName = e.pdName ∧ ¬(v.readOnly ∧ e.readOnly)
 *     AWS EBS:  v.volumeID = e.volumeID                       (read-only or not)
 *     iSCSI:    v.iqn = e.iqn ∧ ¬(v.readOnly ∧ e.readOnly)
 *     Ceph RBD: monitors overlap ∧ v.pool = e.pool ∧ v.image = e.image ∧ ¬(v.readOnly ∧ e.readOnly)
 *   → Unschedulable "node(s) had no available disk".
 * - ReadWriteOncePod claims: PreFilter looks the pod's persistentVolumeClaim volumes up (a missing claim
 *   is UnschedulableAndUnresolvable `persistentvolumeclaim "x" not found`); a ReadWriteOncePod claim that
 *   any pod in the cluster (bound or assumed) already uses makes every node fail with Unschedulable
 *   "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by
 *   another pod"
 *   (resolvable: preempting that pod frees the claim).
 * PreFilter skips the plugin when the pod has no in-tree disk and no conflicting ReadWriteOncePod claim.
 * PreFilterExtensions: addPod/removePod move the conflict count by the added or removed pod's volumes
 * naming one of those claims (a nominated pod in Filter's first pass, a preemption dry run's victims).
 */
import type { PodInfo, PodVolume } from '../../cluster/model.js';
import type { NodeSnapshot, Snapshot } from '../framework/snapshot.js';
import type { CycleState, FilterPlugin, PreFilterPlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { PLUGIN } from './names.js';
import { claimKey, claimNotFound, READ_WRITE_ONCE_POD, type StorageView } from './volume-common.js';

const STATE = 'VolumeRestrictions/preFilter';
export const ERR_DISK_CONFLICT = 'node(s) had no available disk';
export const ERR_RWOP_CONFLICT =
  'node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod';

interface State {
  /** The pod's ReadWriteOncePod claims, by name. */
  readWriteOncePod: ReadonlySet<string>;
  /**
   * Per claim other pods use: how many of them count here, and the node of the last one added (for the
   * message). Σ users is upstream's conflictingPVCRefCount: > 0 fails every node.
   */
  holders: Map<string, { users: number; node: string }>;
}

/**
 * Upstream's updateWithPod: the conflict count moves by `delta` per volume of `pod` naming one of the
 * pod's ReadWriteOncePod claims — by claim name alone, as upstream matches.
 */
function updateWithPod(state: CycleState, pod: PodInfo, node: NodeSnapshot, delta: 1 | -1): void {
  const s = state.read<State>(STATE);
  if (!s) return;
  for (const v of pod.volumes) {
    if (!v.claimName || v.ephemeral || !s.readWriteOncePod.has(v.claimName)) continue;
    const h = s.holders.get(v.claimName);
    s.holders.set(v.claimName, {
      users: (h?.users ?? 0) + delta,
      node: delta > 0 || !h ? node.name : h.node,
    });
  }
}

interface Disk {
  kind: string;
  id: string;
  /** Ceph monitors (RBD only). */
  monitors: string[];
}

/** Parses PodVolume.disk ("gce-pd:<pd>", "aws-ebs:<id>", "iscsi:<iqn>", "rbd:<mon,…>:<pool>:<image>"). */
function parseDisk(disk: string): Disk {
  const colon = disk.indexOf(':');
  const kind = disk.slice(0, colon);
  const rest = disk.slice(colon + 1);
  if (kind !== 'rbd') return { kind, id: rest, monitors: [] };
  // Monitors carry host:port, so pool and image are read from the right.
  const image = rest.slice(rest.lastIndexOf(':') + 1);
  const head = rest.slice(0, rest.lastIndexOf(':'));
  const pool = head.slice(head.lastIndexOf(':') + 1);
  const monitors = head.slice(0, head.lastIndexOf(':')).split(',').filter(Boolean);
  return { kind, id: `${pool}/${image}`, monitors };
}

/** isVolumeConflict for two in-tree disks. */
export function disksConflict(a: PodVolume, b: PodVolume): boolean {
  if (!a.disk || !b.disk) return false;
  const x = parseDisk(a.disk);
  const y = parseDisk(b.disk);
  if (x.kind !== y.kind || x.id !== y.id) return false;
  const bothReadOnly = a.readOnly === true && b.readOnly === true;
  switch (x.kind) {
    case 'aws-ebs':
      return true;
    case 'rbd':
      return x.monitors.some((m) => y.monitors.includes(m)) && !bothReadOnly;
    default:
      return !bothReadOnly;
  }
}

function diskConflictOn(pod: PodInfo, n: NodeSnapshot): PodVolume | undefined {
  for (const v of pod.volumes) {
    if (!v.disk) continue;
    for (const other of n.pods.values()) {
      if (other.volumes.some((e) => disksConflict(v, e))) return v;
    }
  }
  return undefined;
}

/** IsPVCUsedByPods: the node of some pod (bound or assumed) using the claim. */
function nodeUsingClaim(snapshot: Snapshot, key: string): string | undefined {
  for (const n of snapshot.list()) if ((n.claims.get(key) ?? 0) > 0) return n.name;
  return undefined;
}

export function volumeRestrictions(storage: StorageView): PreFilterPlugin & FilterPlugin {
  return {
    name: PLUGIN.VolumeRestrictions,
    preFilter(state, ctx) {
      const pod = ctx.pod;
      const needsDiskCheck = pod.volumes.some((v) => v.disk !== undefined);
      const readWriteOncePod = new Set<string>();
      const holders: State['holders'] = new Map();
      for (const v of pod.volumes) {
        if (!v.claimName || v.ephemeral) continue;
        const claim = storage.claims.get(claimKey(pod.namespace, v.claimName));
        if (!claim) {
          const msg = claimNotFound(v.claimName);
          return { reject: { code: 'ClaimNotFound', reason: msg, detail: msg, unresolvable: true } };
        }
        if (!claim.accessModes.includes(READ_WRITE_ONCE_POD)) continue;
        readWriteOncePod.add(v.claimName);
        const node = nodeUsingClaim(ctx.snapshot, claimKey(pod.namespace, v.claimName));
        if (node !== undefined) holders.set(v.claimName, { users: 1, node });
      }
      if (!needsDiskCheck && holders.size === 0) return { skip: true };
      state.write(STATE, { readWriteOncePod, holders } satisfies State);
      return undefined;
    },
    addPod(state, _ctx, pod, node) {
      updateWithPod(state, pod, node, 1);
    },
    removePod(state, _ctx, pod, node) {
      updateWithPod(state, pod, node, -1);
    },
    cloneState(from, to) {
      const s = from.read<State>(STATE);
      if (s) to.write(STATE, { ...s, holders: new Map(s.holders) } satisfies State);
    },
    filter(state, ctx, n, verdict) {
      const disk = diskConflictOn(ctx.pod, n);
      if (disk) {
        addReason(verdict, {
          plugin: PLUGIN.VolumeRestrictions,
          code: 'DiskConflict',
          reason: ERR_DISK_CONFLICT,
          detail: `volume ${disk.name} (${disk.disk}) is in use by a pod on this node`,
        });
        return;
      }
      const s = state.read<State>(STATE);
      if (!s) return;
      let conflicts = 0;
      let first: string | undefined;
      for (const [claim, h] of s.holders) {
        conflicts += h.users;
        if (first === undefined && h.users > 0)
          first = `ReadWriteOncePod claim ${claim} is used by a pod on node ${h.node}`;
      }
      // Σ > 0 has a holder with users > 0, so `first` is set.
      if (conflicts <= 0 || first === undefined) return;
      addReason(verdict, {
        plugin: PLUGIN.VolumeRestrictions,
        code: 'ReadWriteOncePodConflict',
        reason: ERR_RWOP_CONFLICT,
        detail: first,
      });
    },
  };
}

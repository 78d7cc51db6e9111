// The independent checker, continued (see checker.ts): volumes and preemption, from the API semantics.
// Imports nothing from src/. Sound on final states:
//  * VolumeBinding: every claim of a scheduled pod exists and is Bound, and its PV's required node
//    affinity matches the pod's node (the scheduler binds or provisions claims before the pod); a claim
//    provisioned for the pod's node (`volume.kubernetes.io/selected-node`) by a CSIDriver with
//    storageCapacity: true had a CSIStorageCapacity of its class whose nodeTopology selects the node and
//    whose maximumVolumeSize (else capacity) holds the claim's request (the run's capacities are fixed);
//  * VolumeZone: the PV's zone/region labels (a `__`-separated list is a set) contain the node's value
//    (for a beta key, the node's GA label when it has no beta one);
//  * VolumeRestrictions: a ReadWriteOncePod claim is used by at most one live pod;
//  * NodeVolumeLimits: the unique volumes of a CSI driver on a node (its pods' and its VolumeAttachments')
//    ≤ the CSINode's allocatable count; an in-tree AWS EBS PV counts under ebs.csi.aws.com by its volume ID
//    (CSI migration: csi-translation-lib's `aws://zone/vol-x` → `vol-x`);
//  * DefaultPreemption: every existing pod that was deleted had a lower priority than a scheduled pod,
//    allowed to preempt, that is bound or nominated on the victim's node.
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { type ClusterSnapshot, isActive, podKey, type Violation } from './checker.js';
import { milli, selectorMatches, termMatches } from './semantics.js';

const ZONE_LABELS = [
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
];

/** A beta topology key's GA successor: a node labelled only with GA keys still has a zone. */
const GA_OF_BETA: Record<string, string> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
};

const EBS_CSI_DRIVER = 'ebs.csi.aws.com';

/** The CSI driver and volume handle a PV attaches as: its own, or an in-tree EBS volume's migrated ones. */
function csiOf(pv: V1PersistentVolume | undefined): { driver: string; handle: string } | undefined {
  if (pv?.spec?.csi) return { driver: pv.spec.csi.driver, handle: pv.spec.csi.volumeHandle };
  const ebs = pv?.spec?.awsElasticBlockStore?.volumeID;
  if (!ebs) return undefined;
  return { driver: EBS_CSI_DRIVER, handle: ebs.startsWith('aws://') ? (ebs.split('/').pop() ?? ebs) : ebs };
}

const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

/**
 * Why provisioning `claim` for `node` had no room, or undefined: only claims provisioned there, by a
 * CSIDriver that opts into capacity tracking, with a storage request.
 */
function capacityShortfall(
  snap: ClusterSnapshot,
  claim: V1PersistentVolumeClaim,
  node: V1Node,
): string | undefined {
  const request = claim.spec?.resources?.requests?.['storage'];
  if (!claim.metadata?.annotations?.[SELECTED_NODE] || request === undefined) return undefined;
  const className = claim.spec?.storageClassName;
  const sc = (snap.storageClasses ?? []).find((c) => c.metadata?.name === className);
  const driver = (snap.csiDrivers ?? []).find((d) => d.metadata?.name === sc?.provisioner);
  if (!sc || driver?.spec?.storageCapacity !== true) return undefined;
  const need = milli(request);
  const fits = (snap.storageCapacities ?? []).some((c) => {
    const limit = c.maximumVolumeSize ?? c.capacity;
    return (
      c.storageClassName === className &&
      limit !== undefined &&
      milli(limit) >= need &&
      selectorMatches(c.nodeTopology, node.metadata?.labels)
    );
  });
  return fits ? undefined : `no CSIStorageCapacity of class ${className} on the node holds ${request}`;
}

const claimNames = (p: V1Pod): string[] =>
  (p.spec?.volumes ?? []).flatMap((v) =>
    v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : [],
  );

export function checkVolumes(snap: ClusterSnapshot, scheduled: (p: V1Pod) => boolean): Violation[] {
  const out: Violation[] = [];
  const nodes = new Map(snap.nodes.map((n) => [n.metadata?.name as string, n]));
  const claims = new Map((snap.claims ?? []).map((c) => [`${c.metadata?.namespace}/${c.metadata?.name}`, c]));
  const volumes = new Map((snap.volumes ?? []).map((v) => [v.metadata?.name as string, v]));
  const live = snap.pods.filter(isActive);
  const volumeOf = (c: V1PersistentVolumeClaim | undefined): V1PersistentVolume | undefined =>
    c?.status?.phase === 'Bound' && c.spec?.volumeName ? volumes.get(c.spec.volumeName) : undefined;

  for (const p of live) {
    if (!scheduled(p)) continue;
    const nodeName = p.spec?.nodeName as string;
    const node = nodes.get(nodeName);
    if (!node) continue; // reported by checkHardConstraints
    const v = (plugin: string, message: string) =>
      out.push({ pod: podKey(p), node: nodeName, plugin, message });
    for (const name of claimNames(p)) {
      const claim = claims.get(`${p.metadata?.namespace}/${name}`);
      if (!claim) {
        v('VolumeBinding', `claim ${name} does not exist`);
        continue;
      }
      const pv = volumeOf(claim);
      if (!pv) {
        v('VolumeBinding', `claim ${name} is not bound (${claim.status?.phase ?? 'no phase'})`);
        continue;
      }
      const shortfall = capacityShortfall(snap, claim, node);
      if (shortfall) v('VolumeBinding', `claim ${name}: ${shortfall}`);
      const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms;
      if (terms && !terms.some((t) => termMatches(t, node)))
        v('VolumeBinding', `volume ${pv.metadata?.name} node affinity does not match the node`);
      for (const key of ZONE_LABELS) {
        const want = pv.metadata?.labels?.[key];
        if (want === undefined) continue;
        const labels = node.metadata?.labels ?? {};
        const have = labels[key] ?? labels[GA_OF_BETA[key] ?? ''];
        if (have === undefined || !want.split('__').includes(have))
          v('VolumeZone', `volume ${pv.metadata?.name} ${key}=${want}, node has ${have ?? 'none'}`);
      }
    }
  }

  // ReadWriteOncePod: one live pod per claim, anywhere.
  const users = new Map<string, V1Pod[]>();
  for (const p of live) {
    for (const name of claimNames(p)) {
      const key = `${p.metadata?.namespace}/${name}`;
      if (claims.get(key)?.spec?.accessModes?.includes('ReadWriteOncePod'))
        users.set(key, [...(users.get(key) ?? []), p]);
    }
  }
  for (const [claim, pods] of users) {
    if (pods.length > 1 && pods.some(scheduled))
      out.push({
        pod: pods.map(podKey).join(', '),
        node: pods.map((p) => p.spec?.nodeName).join(', '),
        plugin: 'VolumeRestrictions',
        message: `ReadWriteOncePod claim ${claim} used by ${pods.length} pods`,
      });
  }

  // CSI attach limits per node and driver.
  for (const csiNode of snap.csiNodes ?? []) {
    const nodeName = csiNode.metadata?.name as string;
    const onNode = live.filter((p) => p.spec?.nodeName === nodeName);
    for (const d of csiNode.spec?.drivers ?? []) {
      const limit = d.allocatable?.count;
      if (limit === undefined) continue;
      const handles = new Set<string>();
      let mine = false;
      // Attached volumes no pod uses count as well (a detach still pending).
      for (const va of snap.volumeAttachments ?? []) {
        const csi = csiOf(volumes.get(va.spec?.source?.persistentVolumeName ?? ''));
        if (va.spec?.nodeName === nodeName && va.spec.attacher === d.name && csi) handles.add(csi.handle);
      }
      for (const p of onNode) {
        for (const name of claimNames(p)) {
          const csi = csiOf(volumeOf(claims.get(`${p.metadata?.namespace}/${name}`)));
          if (csi?.driver !== d.name) continue;
          handles.add(csi.handle);
          if (scheduled(p)) mine = true;
        }
      }
      if (mine && handles.size > limit)
        out.push({
          pod: onNode.filter(scheduled).map(podKey).join(', '),
          node: nodeName,
          plugin: 'NodeVolumeLimits',
          message: `${handles.size} volumes of ${d.name} > allocatable count ${limit}`,
        });
    }
  }
  return out;
}

/** `existing`: the scenario's pre-bound pods as admitted (with spec.priority). */
export function checkPreemption(
  snap: ClusterSnapshot,
  existing: V1Pod[],
  scheduled: (p: V1Pod) => boolean,
): Violation[] {
  const live = new Map(snap.pods.filter(isActive).map((p) => [podKey(p), p]));
  const preemptors = snap.pods.filter(
    (p) => scheduled(p) && !p.metadata?.deletionTimestamp && p.spec?.preemptionPolicy !== 'Never',
  );
  const out: Violation[] = [];
  for (const victim of existing) {
    if (live.has(podKey(victim))) continue;
    const node = victim.spec?.nodeName as string;
    const priority = victim.spec?.priority ?? 0;
    const by = preemptors.find(
      (p) => (p.spec?.nodeName ?? p.status?.nominatedNodeName) === node && (p.spec?.priority ?? 0) > priority,
    );
    if (!by)
      out.push({
        pod: podKey(victim),
        node,
        plugin: 'DefaultPreemption',
        message: `deleted (priority ${priority}) with no higher-priority preemptor bound or nominated there`,
      });
  }
  return out;
}

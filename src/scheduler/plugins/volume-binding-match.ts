/**
 * VolumeBinding's per-node decision (upstream's volumeBinder.FindPodVolumes), pure over plain data:
 *
 *   bound claims:    their PV must exist (else "node(s) unavailable due to one or more pvc(s) bound to
 *                    non-existent pv(s)") and its node affinity match the node (else "node(s) had volume
 *                    node affinity conflict");
 *   unbound claims (WaitForFirstConsumer), smallest request first:
 *     - with volume.kubernetes.io/selected-node: provisioning is under way there; another node fails;
 *     - else the smallest static PV that fits (FindMatchingVolume): not chosen for another claim of this
 *       pod, claimRef empty or naming this claim (a PV pre-bound to the claim wins at once, if its
 *       affinity fits), capacity ≥ request, same volumeMode, not being deleted, phase Available, labels
 *       matching the claim's selector, same class, node affinity matching, access modes ⊇ the claim's;
 *     - else dynamic provisioning: the class has a provisioner other than kubernetes.io/no-provisioner
 *       and the node matches its allowedTopologies, and — when the provisioner is a CSIDriver with
 *       storageCapacity: true — some CSIStorageCapacity of the class (any namespace) has nodeTopology
 *       selecting the node and maximumVolumeSize (else capacity) ≥ the claim's request (hasEnoughCapacity;
 *       else "node(s) did not have enough free storage");
 *     any claim left → "node(s) didn't find available persistent volumes to bind".
 * Every reason is UnschedulableAndUnresolvable.
 */

import { selectorMatches } from '../../cluster/labels.js';
import type {
  ClaimInfo,
  CsiDriverInfo,
  CsiStorageCapacityInfo,
  NodeInfo,
  StorageClassInfo,
  VolumeInfo,
} from '../../cluster/model.js';
import { termMatches } from '../predicates.js';
import {
  ANN_SELECTED_NODE,
  accessModesFit,
  claimClass,
  NOT_SUPPORTED_PROVISIONER,
  volumeFitsNode,
} from './volume-common.js';

export const ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const ERR_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const ERR_PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';
export const ERR_NOT_ENOUGH_SPACE = 'node(s) did not have enough free storage';

export interface StaticBinding {
  claim: ClaimInfo;
  pv: VolumeInfo;
}

/** What the pod's unbound claims get on one node. */
export interface PodVolumes {
  staticBindings: StaticBinding[];
  provisions: ClaimInfo[];
}

export interface FindResult {
  volumes: PodVolumes;
  /** Upstream's conflict reasons, in its order. */
  reasons: string[];
  /** A broken setup (no class, a missing class): upstream's Error status. */
  error?: string;
  /** Per-claim notes for the explanation. */
  details: string[];
}

export interface FindInput {
  node: NodeInfo;
  /** Fully bound claims with their PV (undefined: the PV is not in the cache). */
  bound: readonly { claim: ClaimInfo; pv: VolumeInfo | undefined }[];
  /** Unbound WaitForFirstConsumer claims, as the assume cache shows them. */
  unbound: readonly ClaimInfo[];
  /** PVs per class name (the assume cache's view), for the classes of `unbound`. */
  pvsByClass: ReadonlyMap<string, readonly VolumeInfo[]>;
  classes: ReadonlyMap<string, StorageClassInfo>;
  /** Storage capacity tracking; absent: every provisioner is trusted to have room. */
  capacity?: CapacityInput;
}

/** What the capacity check reads (upstream's CSIDriver and CSIStorageCapacity listers). */
export interface CapacityInput {
  drivers: ReadonlyMap<string, CsiDriverInfo>;
  /** CSIStorageCapacities of every namespace, by storageClassName. */
  byClass: ReadonlyMap<string, readonly CsiStorageCapacityInfo[]>;
}

/** hasEnoughCapacity: only drivers that opt in are checked; a pool the node reaches must hold the claim. */
function hasEnoughCapacity(
  capacity: CapacityInput | undefined,
  sc: StorageClassInfo,
  claim: ClaimInfo,
  node: NodeInfo,
): boolean {
  if (capacity?.drivers.get(sc.provisioner)?.storageCapacity !== true) return true;
  for (const c of capacity.byClass.get(sc.name) ?? []) {
    if (c.limitBytes === undefined || c.limitBytes < claim.requestBytes) continue;
    // A capacity without nodeTopology is reachable from no node.
    if (c.nodeTopology && selectorMatches(c.nodeTopology, node.labels)) return true;
  }
  return false;
}

function sameClaim(pv: VolumeInfo, claim: ClaimInfo): boolean {
  const ref = pv.claimRef;
  if (!ref || ref.name !== claim.name || ref.namespace !== claim.namespace) return false;
  return ref.uid === '' || ref.uid === claim.uid;
}

/** FindMatchingVolume on the scheduler's path (a node given, delayBinding). */
export function findMatchingVolume(
  claim: ClaimInfo,
  pvs: readonly VolumeInfo[],
  node: NodeInfo,
  excluded: ReadonlySet<string>,
): VolumeInfo | undefined {
  let smallest: VolumeInfo | undefined;
  const className = claimClass(claim);
  for (const pv of pvs) {
    if (excluded.has(pv.name)) continue;
    if (pv.claimRef && !sameClaim(pv, claim)) continue;
    if (pv.capacityBytes < claim.requestBytes) continue;
    if ((pv.volumeMode || 'Filesystem') !== (claim.volumeMode || 'Filesystem')) continue;
    // VolumeAttributesClass (GA): the PV controller binds only a PV of the claim's class, pre-bound or not.
    if (pv.volumeAttributesClassName !== claim.volumeAttributesClassName) continue;
    if (pv.deleting) continue;
    const fits = volumeFitsNode(pv, node);
    if (sameClaim(pv, claim)) return fits ? pv : undefined;
    if (pv.phase !== 'Available') continue;
    if (claim.selector && !selectorMatches(claim.selector, pv.labels)) continue;
    if (pv.storageClassName !== className || !fits || !accessModesFit(claim, pv)) continue;
    if (!smallest || pv.capacityBytes < smallest.capacityBytes) smallest = pv;
  }
  return smallest;
}

/** MatchTopologySelectorTerms: no terms = anywhere; else one term's every requirement (key In values). */
function topologyAllows(sc: StorageClassInfo, node: NodeInfo): boolean {
  return sc.allowedTopologies.length === 0 || sc.allowedTopologies.some((t) => termMatches(t, node));
}

export function findPodVolumes(input: FindInput): FindResult {
  const { node } = input;
  const out: FindResult = { volumes: { staticBindings: [], provisions: [] }, reasons: [], details: [] };
  let boundOk = true;
  let pvsFound = true;
  let unboundOk = true;
  let enoughSpace = true;
  for (const { claim, pv } of input.bound) {
    if (!pv) {
      pvsFound = false;
      out.details.push(`claim ${claim.name} is bound to PV ${claim.volumeName}, which does not exist`);
      break;
    }
    if (!volumeFitsNode(pv, node)) {
      boundOk = false;
      out.details.push(`PV ${pv.name} of claim ${claim.name} does not allow this node`);
      break;
    }
  }
  const finish = (): FindResult => {
    if (!boundOk) out.reasons.push(ERR_NODE_CONFLICT);
    if (!unboundOk) out.reasons.push(ERR_BIND_CONFLICT);
    if (!enoughSpace) out.reasons.push(ERR_NOT_ENOUGH_SPACE);
    if (!pvsFound) out.reasons.push(ERR_PV_NOT_EXIST);
    return out;
  };
  // Unbound claims are checked even when a bound one failed: both reasons are reported.
  if (input.unbound.length === 0) return finish();

  const toMatch: ClaimInfo[] = [];
  const toProvision: ClaimInfo[] = [];
  for (const claim of input.unbound) {
    const selected = claim.annotations[ANN_SELECTED_NODE];
    if (selected === undefined) toMatch.push(claim);
    else if (selected !== node.name) {
      unboundOk = false;
      out.details.push(`claim ${claim.name} is being provisioned for node ${selected}`);
      return finish();
    } else toProvision.push(claim);
  }
  // Smallest request first, so each claim gets the smallest PV that fits (byPVCSize, a stable sort).
  toMatch.sort((a, b) => a.requestBytes - b.requestBytes);
  const chosen = new Set<string>();
  for (const claim of toMatch) {
    const pv = findMatchingVolume(claim, input.pvsByClass.get(claimClass(claim)) ?? [], node, chosen);
    if (!pv) {
      unboundOk = false;
      toProvision.push(claim);
      continue;
    }
    chosen.add(pv.name);
    out.volumes.staticBindings.push({ claim, pv });
  }
  if (toProvision.length === 0) return finish();
  // checkVolumeProvisions decides for the claims left, whatever the static matching said.
  for (const claim of toProvision) {
    const className = claimClass(claim);
    if (className === '') {
      out.error = `no class for claim "${claim.namespace}/${claim.name}"`;
      return out;
    }
    const sc = input.classes.get(className);
    if (!sc) {
      out.error = `failed to find storage class "${className}"`;
      return out;
    }
    if (sc.provisioner === '' || sc.provisioner === NOT_SUPPORTED_PROVISIONER) {
      unboundOk = false;
      out.details.push(`no PV fits claim ${claim.name} here and class ${className} does not provision`);
      out.volumes.provisions = [];
      return finish();
    }
    if (!topologyAllows(sc, node)) {
      unboundOk = false;
      out.details.push(`class ${className} does not provision in this node's topology`);
      out.volumes.provisions = [];
      return finish();
    }
    if (!hasEnoughCapacity(input.capacity, sc, claim, node)) {
      // checkVolumeProvisions: provisioning is possible in principle, storage is not sufficient.
      unboundOk = true;
      enoughSpace = false;
      out.details.push(
        `no CSIStorageCapacity of class ${className} reachable from this node holds claim ${claim.name} ` +
          `(${claim.requestBytes} bytes)`,
      );
      out.volumes.provisions = [];
      return finish();
    }
    out.volumes.provisions.push(claim);
  }
  unboundOk = true;
  return finish();
}

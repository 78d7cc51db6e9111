/**
 * DefaultPreemption's per-node dry run, as upstream's SelectVictimsOnNode: the fewest, least important
 * pods whose eviction lets the preemptor pass PreFilter + Filter on the node.
 *
 *   potential = { q on node : priority(q) < priority(pod) }             (pods of every scheduler)
 *   remove all potential; fails Filter → the node cannot help
 *   sort potential by importance (priority desc, then earlier start first)
 *   reprieve, PDB-violating ones first, then the others, each most important first:
 *     add q back; still fits → q stays, else q is a victim (a violating victim counts a PDB violation)
 *
 * A pod's PDBs: same namespace, a non-empty selector matching its labels; walking the sorted list, each
 * match takes one of the budget's status.disruptionsAllowed, and a pod is violating when a budget goes
 * below 0 (upstream's filterPodsWithPDBViolation). A pod in the budget's status.disruptedPods takes
 * nothing: its eviction was already admitted, and the disruption controller has taken it off the budget.
 *
 * The node's load during the dry run: requests-based load minus the removed pods' requests (so a rule's
 * maxCPU/maxMemory is checked with them gone); a measured load stays as it is — their usage is unknown
 * until the next sample, which is why such nodes are not candidates when a rule's load fails (see
 * default-preemption.ts).
 */

import { selectorMatches } from '../../cluster/labels.js';
import { type DisruptionBudgetInfo, type PodInfo, podKey } from '../../cluster/model.js';
import type { NodeLoad } from '../../load/types.js';
import type { NodeSnapshot } from '../framework/snapshot.js';
import type { CycleContext, PostFilterHandle } from '../framework/types.js';
import { primaryReasons } from '../framework/verdict.js';

export const NO_VICTIMS = 'No preemption victims found for incoming pod';

export type VictimsOnNode =
  | { victims: PodInfo[]; pdbViolations: number }
  /** Why the node cannot help: the reasons of its first failing plugin with every victim gone. */
  | { failure: string[] };

/** When the pod started (its bind time here); a pod not known to have started counts as starting now. */
export function startTime(p: PodInfo, now: number): number {
  const t = p.scheduledAt ? Date.parse(p.scheduledAt) : Number.NaN;
  return Number.isNaN(t) ? now : t;
}

/** Upstream's MoreImportantPod as a comparator: higher priority first, then the longer-running. */
export function byImportance(now: number): (a: PodInfo, b: PodInfo) => number {
  return (a, b) => b.priority - a.priority || startTime(a, now) - startTime(b, now);
}

function budgetCovers(pdb: DisruptionBudgetInfo, pod: PodInfo): boolean {
  const sel = pdb.selector;
  // A nil or empty selector matches nothing; neither does a pod without labels.
  if (pdb.namespace !== pod.namespace || !sel || Object.keys(pod.labels).length === 0) return false;
  const empty = Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions?.length ?? 0) === 0;
  return !empty && selectorMatches(sel, pod.labels);
}

/** Stable split into [PDB-violating, non-violating], the order of `pods` kept in each. */
export function splitByBudgets<T extends { pod: PodInfo }>(
  pods: readonly T[],
  pdbs: readonly DisruptionBudgetInfo[],
): [T[], T[]] {
  const allowed = pdbs.map((b) => b.disruptionsAllowed);
  const violating: T[] = [];
  const rest: T[] = [];
  for (const item of pods) {
    let violated = false;
    pdbs.forEach((b, i) => {
      if (!budgetCovers(b, item.pod) || b.disruptedPods?.includes(item.pod.name)) return;
      allowed[i] = (allowed[i] as number) - 1;
      if ((allowed[i] as number) < 0) violated = true;
    });
    (violated ? violating : rest).push(item);
  }
  return [violating, rest];
}

function percentOf(used: number, allocatable: number): number {
  if (allocatable > 0) return (used * 100) / allocatable;
  return used > 0 ? 100 : 0;
}

/** Requests-based load without these pods; a measured load is returned unchanged. */
export function withoutPods(load: NodeLoad, pods: Iterable<PodInfo>): NodeLoad {
  if (load.source !== 'requests') return load;
  let cpu = 0;
  let mem = 0;
  let n = 0;
  for (const p of pods) {
    cpu += p.requests.cpuMilli;
    mem += p.requests.memoryBytes;
    n++;
  }
  if (n === 0) return load;
  const requested = {
    cpuMilli: Math.max(0, load.requested.cpuMilli - cpu),
    memoryBytes: Math.max(0, load.requested.memoryBytes - mem),
  };
  const effective = {
    cpuMilli: Math.max(0, load.effective.cpuMilli - cpu),
    memoryBytes: Math.max(0, load.effective.memoryBytes - mem),
  };
  return {
    ...load,
    requested,
    effective,
    podCount: Math.max(0, load.podCount - n),
    cpuPercent: percentOf(effective.cpuMilli, load.allocatable.cpuMilli),
    memoryPercent: percentOf(effective.memoryBytes, load.allocatable.memoryBytes),
  };
}

interface Potential {
  key: string;
  pod: PodInfo;
}

/**
 * The victims on one node, or why there are none. Runs inside one SnapshotEdit (the node's pods and
 * load are put back before it returns, whatever happens).
 */
export function selectVictimsOnNode(
  ctx: CycleContext,
  node: NodeSnapshot,
  pdbs: readonly DisruptionBudgetInfo[],
  handle: PostFilterHandle,
): VictimsOnNode {
  const self = podKey(ctx.pod);
  const potential: Potential[] = [];
  for (const [key, pod] of node.pods) {
    if (key !== self && pod.priority < ctx.pod.priority) potential.push({ key, pod });
  }
  if (potential.length === 0) return { failure: [NO_VICTIMS] };
  const edit = ctx.snapshot.edit();
  const dry = handle.dryRun(ctx, node);
  const load = node.load;
  const removed = new Map<string, PodInfo>();
  const fits = () => {
    node.load = load && withoutPods(load, removed.values());
    return dry.filter();
  };
  try {
    for (const { key, pod } of potential) {
      if (!edit.remove(key)) continue;
      removed.set(key, pod);
      dry.removePod(pod);
    }
    const bare = fits();
    if (!bare.feasible) return { failure: [...new Set(primaryReasons(bare).map((r) => r.reason))] };
    const order = byImportance(ctx.now);
    potential.sort((a, b) => order(a.pod, b.pod));
    const [violating, rest] = splitByBudgets(potential, pdbs);
    const victims: PodInfo[] = [];
    const reprieve = ({ key, pod }: Potential): boolean => {
      edit.add(key, pod, node.name);
      removed.delete(key);
      dry.addPod(pod);
      if (fits().feasible) return true;
      edit.remove(key);
      removed.set(key, pod);
      dry.removePod(pod);
      victims.push(pod);
      return false;
    };
    let pdbViolations = 0;
    for (const v of violating) if (!reprieve(v)) pdbViolations++;
    for (const v of rest) reprieve(v);
    if (violating.length > 0 && rest.length > 0) victims.sort(order);
    if (victims.length === 0) return { failure: [NO_VICTIMS] };
    return { victims, pdbViolations };
  } finally {
    edit.undo();
    node.load = load;
  }
}

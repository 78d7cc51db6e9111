/**
 * NodeResourcesBalancedAllocation (Score): favours nodes whose resource balance the pod improves, as
 * kube-scheduler v1.36 scores it (kubernetes/kubernetes#135573; before 1.36 only the balance with the
 * pod placed counted, which favoured a balanced node the pod unbalances over an unbalanced one it evens).
 *   fraction[r] = min(1, requested[r] / allocatable[r])           over the configured resources
 *   balance     = ⌊(1 − std(fraction)) × 100⌋                     (two resources: std = |f₀ − f₁| / 2)
 *   score       = 50 + ⌊(50 + balance(pod placed) − balance(node as it is)) / 2⌋
 * so the score is 50..100: 75 when the pod leaves the balance as it was, 100 when it turns a node
 * wholly used in one resource and idle in the other into an even one, 50 for the reverse. Integers, as
 * upstream's int64 arithmetic gives them. A resource the node has none of is left out, and so is an
 * extended one (example.com/gpu, hugepages-*, …) the pod does not request. PreScore skips pods that
 * request none of the resources (BestEffort), as upstream does.
 */
import type { ResourceList } from '../../cluster/model.js';
import type { PreScorePlugin, ScorePlugin } from '../framework/types.js';
import { PLUGIN } from './names.js';

/**
 * Upstream's IsScalarResourceName: extended resources (a domain-prefixed name), prefixed native ones
 * (kubernetes.io/…), hugepages and attachable volumes. Only these are skipped when the pod asks none.
 */
function isScalarResource(name: string): boolean {
  return name.includes('/') || name.startsWith('hugepages-') || name.startsWith('attachable-volume-');
}

/** What the node uses of `r`, capped at 1, with the pod's requests or without; −1: `r` is left out. */
function fraction(
  r: string,
  allocatable: ResourceList,
  requested: ResourceList,
  podRequests: ResourceList,
  withPod: boolean,
): number {
  const total = allocatable[r] ?? 0;
  const pod = podRequests[r] ?? 0;
  if (total <= 0 || (pod === 0 && isScalarResource(r))) return -1;
  return Math.min(1, ((requested[r] ?? 0) + (withPod ? pod : 0)) / total);
}

/**
 * ⌊(1 − std) × 100⌋ of the node's fractions, with the pod's requests added or not. Two passes over the
 * resources rather than an array of fractions: this runs twice for every feasible node of every cycle.
 */
function balance(
  resources: readonly string[],
  allocatable: ResourceList,
  requested: ResourceList,
  podRequests: ResourceList,
  withPod: boolean,
): number {
  let count = 0;
  let sum = 0;
  let first = 0;
  let second = 0;
  for (const r of resources) {
    const f = fraction(r, allocatable, requested, podRequests, withPod);
    if (f < 0) continue;
    if (count === 0) first = f;
    else if (count === 1) second = f;
    count++;
    sum += f;
  }
  let std = 0;
  // Upstream's two cases, in its order of operations (the int truncation below makes the last bit count).
  if (count === 2) std = Math.abs((first - second) / 2);
  else if (count > 2) {
    const mean = sum / count;
    let squares = 0;
    for (const r of resources) {
      const f = fraction(r, allocatable, requested, podRequests, withPod);
      if (f >= 0) squares += (f - mean) * (f - mean);
    }
    std = Math.sqrt(squares / count);
  }
  return Math.trunc((1 - std) * 100);
}

export function balancedAllocation(
  resources: readonly string[] = ['cpu', 'memory'],
): PreScorePlugin & ScorePlugin {
  return {
    name: PLUGIN.NodeResourcesBalancedAllocation,
    preScore(_state, ctx) {
      const req = ctx.pod.resourceRequests;
      return resources.some((r) => (req[r] ?? 0) > 0) ? undefined : 'skip';
    },
    score(_state, ctx, n) {
      const node = n.node;
      if (!node) return 0;
      const alloc = node.allocatableResources;
      const podReq = ctx.pod.resourceRequests;
      const placed = balance(resources, alloc, n.requested, podReq, true);
      const before = balance(resources, alloc, n.requested, podReq, false);
      // Go's integer division; the dividend is ≥ 0 (placed ≥ 50, before ≤ 100), so truncation is a floor.
      return 50 + Math.trunc((50 + placed - before) / 2);
    },
  };
}

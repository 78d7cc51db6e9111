/**
 * NodeResourcesBalancedAllocation (Score): favours nodes whose resources would be used evenly.
 *   fraction[r] = min(1, (requested[r] + pod[r]) / allocatable[r])   for r in {cpu, memory}
 *   score       = (1 − stddev(fraction)) × 100                        (two resources: std = |a − b| / 2)
 * PreScore skips pods that request none of the resources (BestEffort), as upstream does.
 */
import type { PreScorePlugin, ScorePlugin } from '../framework/types.js';
import { PLUGIN } from './names.js';

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
      // Two passes over the resources instead of an array of fractions (no closure either): this runs
      // for every feasible node of every cycle, and allocates nothing.
      const alloc = node.allocatableResources;
      const podReq = ctx.pod.resourceRequests;
      let count = 0;
      let sum = 0;
      for (const r of resources) {
        const total = alloc[r] ?? 0;
        if (total <= 0) continue;
        count++;
        sum += Math.min(1, ((n.requested[r] ?? 0) + (podReq[r] ?? 0)) / total);
      }
      if (count < 2) return 100;
      const mean = sum / count;
      let squares = 0;
      for (const r of resources) {
        const total = alloc[r] ?? 0;
        if (total > 0)
          squares += (Math.min(1, ((n.requested[r] ?? 0) + (podReq[r] ?? 0)) / total) - mean) ** 2;
      }
      return (1 - Math.sqrt(squares / count)) * 100;
    },
  };
}

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
      const fractions: number[] = [];
      for (const r of resources) {
        const alloc = node.allocatableResources[r] ?? 0;
        if (alloc <= 0) continue;
        const used = (n.requested[r] ?? 0) + (ctx.pod.resourceRequests[r] ?? 0);
        fractions.push(Math.min(1, used / alloc));
      }
      if (fractions.length < 2) return 100;
      const mean = fractions.reduce((a, b) => a + b, 0) / fractions.length;
      const variance = fractions.reduce((a, f) => a + (f - mean) ** 2, 0) / fractions.length;
      return (1 - Math.sqrt(variance)) * 100;
    },
  };
}

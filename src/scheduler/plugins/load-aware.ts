/**
 * LoadAware (Score, nodeload's own; takes the place of NodeResourcesFit's LeastAllocated): least
 * effectively loaded wins — measured usage plus in-flight estimates, or requests — with the pod placed.
 *   score = (w_cpu × (100 − cpu%after) + w_mem × (100 − memory%after)) / (w_cpu + w_mem)
 * Pods without requests count with the load model's estimate (250m / 200Mi unless configured), so
 * BestEffort replicas spread instead of stacking on one node.
 */
import type { ScorePlugin } from '../framework/types.js';
import { placePod } from './load-after.js';
import { PLUGIN } from './names.js';

export interface LoadAwareArgs {
  cpuWeight?: number;
  memoryWeight?: number;
}

function clampPercent(p: number): number {
  return Math.min(100, Math.max(0, p));
}

export function leastLoaded(
  cpuPercentAfter: number,
  memoryPercentAfter: number,
  args: LoadAwareArgs = {},
): number {
  const cpuFree = 100 - clampPercent(cpuPercentAfter);
  const memFree = 100 - clampPercent(memoryPercentAfter);
  const wc = args.cpuWeight ?? 1;
  const wm = args.memoryWeight ?? 1;
  const total = wc + wm;
  if (!(total > 0)) return (cpuFree + memFree) / 2;
  return (cpuFree * wc + memFree * wm) / total;
}

export function loadAware(args: LoadAwareArgs = {}): ScorePlugin {
  return {
    name: PLUGIN.LoadAware,
    score(state, ctx, n) {
      const load = n.load;
      if (!load || !placePod(state, ctx, n)) return 0;
      // In requests mode pods without requests add nothing to the figure, so they would all stack on
      // one node: count each of them (the incoming one included) with the load model's estimate.
      const unrequested = n.noRequestPods + (ctx.pod.noRequests ? 1 : 0);
      // (The placed load's source is the node's: requests stay requests with the pod placed.)
      if (unrequested > 0 && load.source === 'requests') {
        const est = ctx.loadOptions.estimate;
        const { cpuMilli, memoryBytes } = load.allocatable;
        const cpu =
          n.cpuPercentAfter + (cpuMilli > 0 ? (unrequested * est.defaultCpuMilli * 100) / cpuMilli : 0);
        const mem =
          n.memoryPercentAfter +
          (memoryBytes > 0 ? (unrequested * est.defaultMemoryBytes * 100) / memoryBytes : 0);
        return leastLoaded(cpu, mem, args);
      }
      return leastLoaded(n.cpuPercentAfter, n.memoryPercentAfter, args);
    },
  };
}

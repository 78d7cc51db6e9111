/**
 * The node's load with the incoming pod placed (load model's withPod: its requests, or its estimated
 * usage over a metrics sample), computed once per node per cycle and shared by NodeLoadRules and
 * LoadAware; plus the figures a verdict shows.
 */
import { withPod } from '../../load/model.js';
import type { NodeLoad } from '../../load/types.js';
import type { NodeSnapshot } from '../framework/snapshot.js';
import type { CycleContext, CycleState } from '../framework/types.js';
import type { CandidateLoad } from '../framework/verdict.js';

export function loadAfter(state: CycleState, ctx: CycleContext, n: NodeSnapshot): NodeLoad | undefined {
  const load = n.load;
  if (!load) return undefined;
  // Memoised on the node for this cycle (no per-cycle map): keyed by the cycle's state and by the load
  // object too, since a what-if (nominated pods, preemption's victims) swaps n.load.
  const memo = n.loadAfter;
  if (memo && memo.state === state && memo.load === load) return memo.after;
  const after = withPod(load, ctx.pod, ctx.loadOptions);
  n.loadAfter = { state, load, after };
  return after;
}

export function candidateLoad(load: NodeLoad, after: NodeLoad): CandidateLoad {
  return {
    source: load.source,
    cpuPercent: load.cpuPercent,
    memoryPercent: load.memoryPercent,
    cpuPercentAfter: after.cpuPercent,
    memoryPercentAfter: after.memoryPercent,
    estimatedCpuMilli: load.estimated.cpuMilli,
    estimatedMemoryBytes: load.estimated.memoryBytes,
    estimatedPods: load.estimatedPods,
    requestedCpuMilli: load.requested.cpuMilli,
    requestedMemoryBytes: load.requested.memoryBytes,
    allocatableCpuMilli: load.allocatable.cpuMilli,
    allocatableMemoryBytes: load.allocatable.memoryBytes,
    podCount: load.podCount,
    allocatablePods: load.allocatable.pods,
    metricsStale: load.metricsStale,
    unavailable: load.unavailable,
  };
}

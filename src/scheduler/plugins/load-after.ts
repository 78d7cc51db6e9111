/**
 * The node's load with the incoming pod placed (load model's withPod: its requests, or its estimated
 * usage over a metrics sample — as the view placedLoad, which computes the two percentages and reads the
 * rest through), computed once per node per cycle and shared by NodeLoadRules and LoadAware; plus the
 * figures a verdict shows.
 */
import { placedLoad } from '../../load/placed.js';
import type { NodeLoad } from '../../load/types.js';
import type { NodeSnapshot } from '../framework/snapshot.js';
import type { CycleContext, CycleState } from '../framework/types.js';
import type { CandidateLoad } from '../framework/verdict.js';

export function loadAfter(state: CycleState, ctx: CycleContext, n: NodeSnapshot): NodeLoad | undefined {
  const load = n.load;
  if (!load) return undefined;
  // Memoised on the node for this cycle (no per-cycle map): keyed by the cycle's state and by the load
  // object too, since a what-if (nominated pods, preemption's victims) swaps n.load.
  if (n.loadAfterState === state && n.loadAfterBase === load) return n.loadAfter;
  const after = placedLoad(load, ctx.pod, ctx.loadOptions);
  n.loadAfter = after;
  n.loadAfterState = state;
  n.loadAfterBase = load;
  return after;
}

/**
 * A verdict's load figures read through from the node's load and the load with the pod placed, instead
 * of copied: every node a cycle examines gets one, and a 16-field copy (with its boxed doubles) was the
 * largest allocation per node. Both records are immutable (the tracker hands out new ones), so reading
 * later shows what the cycle saw. Serialises as the plain figures.
 */
class CandidateLoadView implements CandidateLoad {
  readonly #load: NodeLoad;
  readonly #after: NodeLoad;
  constructor(load: NodeLoad, after: NodeLoad) {
    this.#load = load;
    this.#after = after;
  }
  get source() {
    return this.#load.source;
  }
  get cpuPercent() {
    return this.#load.cpuPercent;
  }
  get memoryPercent() {
    return this.#load.memoryPercent;
  }
  get cpuPercentAfter() {
    return this.#after.cpuPercent;
  }
  get memoryPercentAfter() {
    return this.#after.memoryPercent;
  }
  get estimatedCpuMilli() {
    return this.#load.estimated.cpuMilli;
  }
  get estimatedMemoryBytes() {
    return this.#load.estimated.memoryBytes;
  }
  get estimatedPods() {
    return this.#load.estimatedPods;
  }
  get requestedCpuMilli() {
    return this.#load.requested.cpuMilli;
  }
  get requestedMemoryBytes() {
    return this.#load.requested.memoryBytes;
  }
  get allocatableCpuMilli() {
    return this.#load.allocatable.cpuMilli;
  }
  get allocatableMemoryBytes() {
    return this.#load.allocatable.memoryBytes;
  }
  get podCount() {
    return this.#load.podCount;
  }
  get allocatablePods() {
    return this.#load.allocatable.pods;
  }
  get metricsStale() {
    return this.#load.metricsStale;
  }
  get unavailable() {
    return this.#load.unavailable;
  }
  toJSON(): CandidateLoad {
    return plainCandidateLoad(this);
  }
  /** The load with the pod placed that these figures read (rule checks read their margins from it). */
  static placed(view: CandidateLoad | undefined): NodeLoad | undefined {
    return view instanceof CandidateLoadView ? view.#after : undefined;
  }
}

/** The figures as a plain object (what a test compares, what JSON shows). */
export function plainCandidateLoad(l: CandidateLoad): CandidateLoad {
  return {
    source: l.source,
    cpuPercent: l.cpuPercent,
    memoryPercent: l.memoryPercent,
    cpuPercentAfter: l.cpuPercentAfter,
    memoryPercentAfter: l.memoryPercentAfter,
    estimatedCpuMilli: l.estimatedCpuMilli,
    estimatedMemoryBytes: l.estimatedMemoryBytes,
    estimatedPods: l.estimatedPods,
    requestedCpuMilli: l.requestedCpuMilli,
    requestedMemoryBytes: l.requestedMemoryBytes,
    allocatableCpuMilli: l.allocatableCpuMilli,
    allocatableMemoryBytes: l.allocatableMemoryBytes,
    podCount: l.podCount,
    allocatablePods: l.allocatablePods,
    metricsStale: l.metricsStale,
    unavailable: l.unavailable,
  };
}

export function candidateLoad(load: NodeLoad, after: NodeLoad): CandidateLoad {
  return new CandidateLoadView(load, after);
}

/** The placed load a verdict's load figures (candidateLoad's) were read from; undefined for any other. */
export function placedLoadOf(figures: CandidateLoad | undefined): NodeLoad | undefined {
  return CandidateLoadView.placed(figures);
}

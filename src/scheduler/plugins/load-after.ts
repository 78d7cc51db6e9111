/**
 * The node's load with the incoming pod placed (load model's withPod: its requests, or its estimated
 * usage over a metrics sample). Filters and scores read only its two percentages: placePod computes them
 * once per node per cycle onto the node snapshot, shared by NodeLoadRules and LoadAware. The whole placed
 * load (placedLoad, a view) is built only where something reads more: a verdict's load figures once
 * read, a rule's threshold message, the rule checks an explanation keeps.
 */

import type { PodInfo } from '../../cluster/model.js';
import { placedCpuPercent, placedLoad, placedMemoryPercent } from '../../load/placed.js';
import type { LoadOptions, NodeLoad } from '../../load/types.js';
import type { NodeSnapshot } from '../framework/snapshot.js';
import type { CycleContext, CycleState } from '../framework/types.js';
import type { CandidateLoad } from '../framework/verdict.js';

/**
 * Places the cycle's pod on the node: n.cpuPercentAfter and n.memoryPercentAfter hold the percentages
 * with it placed, for this cycle. False when the node has no load figure (nothing is set then).
 */
export function placePod(state: CycleState, ctx: CycleContext, n: NodeSnapshot): boolean {
  const load = n.load;
  if (!load) return false;
  // Keyed by the cycle's state and by the load object too, since a what-if (nominated pods, preemption's
  // victims) swaps n.load.
  if (n.placedState === state && n.placedBase === load) return true;
  n.cpuPercentAfter = placedCpuPercent(load, ctx.pod, ctx.loadOptions);
  n.memoryPercentAfter = placedMemoryPercent(load, ctx.pod, ctx.loadOptions);
  n.placedState = state;
  n.placedBase = load;
  return true;
}

/**
 * A verdict's load figures read through from the node's load, and from the load with the pod placed,
 * which is built the first time an "after" figure is read. Made for the verdicts an explanation keeps
 * (verdict-figures.ts), not for every node a cycle examines: a 16-field copy (with its boxed doubles) per
 * examined node was once the largest allocation of a cycle. The load, the pod and the options are
 * immutable (the tracker hands out new loads), so reading later shows what the cycle saw. Serialises as
 * the plain figures.
 */
class CandidateLoadView implements CandidateLoad {
  readonly #load: NodeLoad;
  readonly #pod: PodInfo;
  readonly #opts: LoadOptions;
  #after: NodeLoad | undefined = undefined;
  constructor(load: NodeLoad, pod: PodInfo, opts: LoadOptions) {
    this.#load = load;
    this.#pod = pod;
    this.#opts = opts;
  }
  #placed(): NodeLoad {
    this.#after ??= placedLoad(this.#load, this.#pod, this.#opts);
    return this.#after;
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
    return this.#placed().cpuPercent;
  }
  get memoryPercentAfter() {
    return this.#placed().memoryPercent;
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
    return view instanceof CandidateLoadView ? view.#placed() : undefined;
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

/** The verdict's load figures for the node's `load` with `pod` placed. */
export function candidateLoad(load: NodeLoad, pod: PodInfo, opts: LoadOptions): CandidateLoad {
  return new CandidateLoadView(load, pod, opts);
}

/** The placed load a verdict's load figures (candidateLoad's) read from, built once; undefined for any other. */
export function placedLoadOf(figures: CandidateLoad | undefined): NodeLoad | undefined {
  return CandidateLoadView.placed(figures);
}

/**
 * withPod (model.ts) as a view: the node's load with one more pod placed, for the scheduler's cycle,
 * which asks it of every node it examines and reads little more than the two percentages. withPod builds
 * a full NodeLoad (a 16-field copy and up to three CpuMem records) per node per cycle — the largest
 * allocation of a cycle. placedCpuPercent / placedMemoryPercent give the two percentages alone (what
 * every filter and score reads); placedLoad gives the whole load, with the percentages computed at once
 * and the other figures read through from the node's immutable load, or summed when read (what an
 * explanation or a threshold's message reads). Same numbers as withPod, field by field (placed.test.ts).
 */
import type { CpuMem, NodeResources, PodInfo } from '../cluster/model.js';
import { estimatedCpuMilli, estimatedMemoryBytes, percentOf } from './model.js';
import type { EstimateOptions, LoadOptions, LoadSource, NodeLoad } from './types.js';

/** Requests count as they are; over a metrics sample the pod adds its estimated usage. */
function byRequests(base: NodeLoad): boolean {
  return base.source === 'requests';
}

/** What the pod adds to the effective cpu figure: its requests, or its estimated usage over metrics. */
function addedCpuMilli(base: NodeLoad, pod: PodInfo, estimate: EstimateOptions): number {
  const cpu = pod.requests.cpuMilli;
  return byRequests(base) ? cpu : estimatedCpuMilli(cpu, estimate);
}

function addedMemoryBytes(base: NodeLoad, pod: PodInfo, estimate: EstimateOptions): number {
  const memory = pod.requests.memoryBytes;
  return byRequests(base) ? memory : estimatedMemoryBytes(memory, estimate);
}

/**
 * cpu% of allocatable with `pod` placed (withPod's cpuPercent), computed without building anything: the
 * scheduler's filters and scores read only the two percentages of most nodes they examine.
 */
export function placedCpuPercent(base: NodeLoad, pod: PodInfo, opts: LoadOptions): number {
  return percentOf(
    base.effective.cpuMilli + addedCpuMilli(base, pod, opts.estimate),
    base.allocatable.cpuMilli,
  );
}

/** memory% of allocatable with `pod` placed (withPod's memoryPercent). */
export function placedMemoryPercent(base: NodeLoad, pod: PodInfo, opts: LoadOptions): number {
  return percentOf(
    base.effective.memoryBytes + addedMemoryBytes(base, pod, opts.estimate),
    base.allocatable.memoryBytes,
  );
}

class PlacedLoad implements NodeLoad {
  readonly cpuPercent: number;
  readonly memoryPercent: number;
  readonly #base: NodeLoad;
  readonly #pod: PodInfo;
  // What the pod adds is derived when read (the percentages need it once, the other figures rarely):
  // one of these per node per cycle, and the two sums kept as fields were boxed doubles besides.
  readonly #estimate: EstimateOptions;

  constructor(base: NodeLoad, pod: PodInfo, opts: LoadOptions) {
    this.#base = base;
    this.#pod = pod;
    this.#estimate = opts.estimate;
    this.cpuPercent = placedCpuPercent(base, pod, opts);
    this.memoryPercent = placedMemoryPercent(base, pod, opts);
  }

  /** `figure` plus what the pod adds to the effective load. */
  #plus(figure: CpuMem): CpuMem {
    return {
      cpuMilli: figure.cpuMilli + addedCpuMilli(this.#base, this.#pod, this.#estimate),
      memoryBytes: figure.memoryBytes + addedMemoryBytes(this.#base, this.#pod, this.#estimate),
    };
  }

  get node(): string {
    return this.#base.node;
  }
  get allocatable(): NodeResources {
    return this.#base.allocatable;
  }
  get requested(): CpuMem {
    const r = this.#base.requested;
    const p = this.#pod.requests;
    return { cpuMilli: r.cpuMilli + p.cpuMilli, memoryBytes: r.memoryBytes + p.memoryBytes };
  }
  get podCount(): number {
    return this.#base.podCount + 1;
  }
  get usage(): NodeLoad['usage'] {
    return this.#base.usage;
  }
  get estimated(): CpuMem {
    const e = this.#base.estimated;
    if (byRequests(this.#base)) return e;
    return this.#plus(e);
  }
  get estimatedPods(): number {
    return this.#base.estimatedPods + (byRequests(this.#base) ? 0 : 1);
  }
  get effective(): CpuMem {
    return this.#plus(this.#base.effective);
  }
  get source(): LoadSource {
    return byRequests(this.#base) ? 'requests' : 'metrics+estimate';
  }
  get timestamp(): string {
    return this.#base.timestamp;
  }
  get metricsStale(): boolean {
    return this.#base.metricsStale;
  }
  get unavailable(): boolean {
    return this.#base.unavailable;
  }

  /** The plain figures, as withPod would have built them. */
  toJSON(): NodeLoad {
    const usage = this.usage;
    return {
      node: this.node,
      allocatable: this.allocatable,
      requested: this.requested,
      podCount: this.podCount,
      ...(usage ? { usage } : {}),
      estimated: this.estimated,
      estimatedPods: this.estimatedPods,
      effective: this.effective,
      cpuPercent: this.cpuPercent,
      memoryPercent: this.memoryPercent,
      source: this.source,
      timestamp: this.timestamp,
      metricsStale: this.metricsStale,
      unavailable: this.unavailable,
    };
  }
}

/** The load after placing `pod`, read through from `load` (which must not change; NodeLoads never do). */
export function placedLoad(load: NodeLoad, pod: PodInfo, opts: LoadOptions): NodeLoad {
  return new PlacedLoad(load, pod, opts);
}

/**
 * The load model: what a node's load is, and what it would be after placing one more pod.
 * Pure functions over the plain data in cluster/model.ts — the operator, the scheduler's filter, the
 * assume cache and every view use these same figures, so a decision and its explanation never disagree.
 */
import type { CpuMem, NodeMetricsInfo, NodeResources, PodInfo } from '../cluster/model.js';
import type { EstimateOptions, LoadOptions, NodeLoad, NodeLoadInput } from './types.js';

const ZERO: CpuMem = { cpuMilli: 0, memoryBytes: 0 };

function add(a: CpuMem, b: CpuMem): CpuMem {
  return { cpuMilli: a.cpuMilli + b.cpuMilli, memoryBytes: a.memoryBytes + b.memoryBytes };
}

/**
 * A pod's expected usage before metrics can see it: requests × factor, per resource; a resource the pod
 * does not request gets the default (a pod with only a CPU request still uses memory).
 */
export function estimatePodUsage(pod: PodInfo, opts: EstimateOptions): CpuMem {
  const { cpuMilli, memoryBytes } = pod.requests;
  return {
    cpuMilli: estimatedCpuMilli(cpuMilli, opts),
    memoryBytes: estimatedMemoryBytes(memoryBytes, opts),
  };
}

/** estimatePodUsage's CPU figure from the pod's CPU request, without building the record. */
export function estimatedCpuMilli(requestedMilli: number, opts: EstimateOptions): number {
  return requestedMilli > 0 ? Math.round(requestedMilli * opts.cpuFactor) : opts.defaultCpuMilli;
}

/** estimatePodUsage's memory figure from the pod's memory request, without building the record. */
export function estimatedMemoryBytes(requestedBytes: number, opts: EstimateOptions): number {
  return requestedBytes > 0 ? Math.round(requestedBytes * opts.memoryFactor) : opts.defaultMemoryBytes;
}

/**
 * Percent of allocatable; a node with nothing allocatable is full as soon as anything is placed on it.
 * Multiplying first keeps whole percentages exact (0.7 * 100 is 70.00000000000001), so a load exactly
 * at a threshold compares equal to it.
 */
export function percentOf(used: number, allocatable: number): number {
  if (allocatable > 0) return (used * 100) / allocatable;
  return used > 0 ? 100 : 0;
}

function withPercents(
  load: Omit<NodeLoad, 'cpuPercent' | 'memoryPercent'>,
  allocatable: NodeResources,
): NodeLoad {
  return {
    ...load,
    cpuPercent: percentOf(load.effective.cpuMilli, allocatable.cpuMilli),
    memoryPercent: percentOf(load.effective.memoryBytes, allocatable.memoryBytes),
  };
}

/** Milliseconds since the epoch, or undefined for a missing/unparseable time. */
function timeMs(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
}

/**
 * Whether the sample cannot vouch for the pod, which then counts with its estimate: a pod of unknown bind
 * time, or bound within the sample's window or after it. A sample's CPU is the mean rate over the window
 * that ends at its timestamp, so a pod bound within it shows a fraction of its rate at most (less while
 * its containers start); counting it as measured dropped it from the node's figure as soon as the sample
 * arrived, and the next pods herded there. Trimaran (bound less than 60 s before the window's end) and
 * Koordinator (within one report interval) estimate such pods too. It may count a pod partly twice, for
 * one window: the safe side.
 * Compared by the second: a NodeMetrics timestamp and a PodScheduled condition's time are both
 * metav1.Time, RFC 3339 to the second, so a pod bound in the window's first second may have been bound
 * within it. (Counting a pod bound in the sample's own second as measured hid every pod bound in that
 * second: the placement-quality bench saw 13 pods put on one idle node within a second.)
 */
function boundAfter(pod: PodInfo, sampleMs: number, windowSeconds: number): boolean {
  const bound = timeMs(pod.scheduledAt) ?? timeMs(pod.creationTimestamp);
  const windowStart = sampleMs - Math.max(0, windowSeconds) * 1000;
  return bound === undefined || Math.floor(bound / 1000) >= Math.floor(windowStart / 1000);
}

/** The sample time when the sample is fresh, else undefined (stale, or an unparseable time). */
function freshSampleMs(metrics: NodeMetricsInfo, now: number, options: LoadOptions): number | undefined {
  const sample = timeMs(metrics.timestamp);
  return sample !== undefined && now - sample <= options.metricsStalenessSeconds * 1000 ? sample : undefined;
}

/**
 * A node's load from the pods bound to it and its NodeMetrics sample.
 * Terminal pods no longer count; deleting pods do until they are gone (their containers may still run).
 */
export function computeNodeLoad(input: NodeLoadInput): NodeLoad {
  const { node, metrics, now, options } = input;
  const bound: PodInfo[] = [];
  for (const pod of input.pods) {
    if (pod.nodeName === node.name && !pod.terminal) bound.push(pod);
  }
  let requested = ZERO;
  for (const pod of bound) requested = add(requested, pod.requests);

  const base = {
    node: node.name,
    allocatable: node.allocatable,
    requested,
    podCount: bound.length,
    ...(metrics
      ? { usage: { ...metrics.usage, timestamp: metrics.timestamp, windowSeconds: metrics.windowSeconds } }
      : {}),
  };

  const sampleMs = options.metricsServed && metrics ? freshSampleMs(metrics, now, options) : undefined;
  if (metrics && sampleMs !== undefined) {
    let estimated = ZERO;
    let estimatedPods = 0;
    for (const pod of bound) {
      if (!boundAfter(pod, sampleMs, metrics.windowSeconds)) continue;
      estimated = add(estimated, estimatePodUsage(pod, options.estimate));
      estimatedPods++;
    }
    return withPercents(
      {
        ...base,
        estimated,
        estimatedPods,
        effective: add(metrics.usage, estimated),
        source: estimatedPods > 0 ? 'metrics+estimate' : 'metrics',
        timestamp: metrics.timestamp,
        metricsStale: false,
        unavailable: false,
      },
      node.allocatable,
    );
  }

  // Requests-based: either metrics are not served at all, or this node's sample is stale/missing. Under
  // fail-closed the figures are still filled in (so views can show something) but flagged unavailable.
  const degraded = options.metricsServed;
  return withPercents(
    {
      ...base,
      estimated: ZERO,
      estimatedPods: 0,
      effective: requested,
      source: 'requests',
      timestamp: new Date(now).toISOString(),
      metricsStale: degraded,
      unavailable: degraded && options.stalePolicy === 'fail-closed',
    },
    node.allocatable,
  );
}

/**
 * The load after placing `pod` on the node: measured load grows by the pod's estimate (metrics cannot
 * see it yet), requests-based load by its requests.
 */
export function withPod(load: NodeLoad, pod: PodInfo, opts: LoadOptions): NodeLoad {
  // One object per call (this runs for every node a cycle examines), the percentages set in it.
  const requested = add(load.requested, pod.requests);
  const { allocatable } = load;
  if (load.source === 'requests') {
    const effective = add(load.effective, pod.requests);
    return {
      ...load,
      requested,
      podCount: load.podCount + 1,
      effective,
      cpuPercent: percentOf(effective.cpuMilli, allocatable.cpuMilli),
      memoryPercent: percentOf(effective.memoryBytes, allocatable.memoryBytes),
    };
  }
  const estimate = estimatePodUsage(pod, opts.estimate);
  const effective = add(load.effective, estimate);
  return {
    ...load,
    requested,
    podCount: load.podCount + 1,
    estimated: add(load.estimated, estimate),
    estimatedPods: load.estimatedPods + 1,
    effective,
    source: 'metrics+estimate',
    cpuPercent: percentOf(effective.cpuMilli, allocatable.cpuMilli),
    memoryPercent: percentOf(effective.memoryBytes, allocatable.memoryBytes),
  };
}

/** A percentage for messages: "91" when whole, else one decimal ("80.5"). */
export function formatPercent(n: number): string {
  const rounded = Math.round(n * 10) / 10;
  return Number.isInteger(rounded) ? String(rounded) : rounded.toFixed(1);
}

const sameCpuMem = (a: CpuMem, b: CpuMem) => a.cpuMilli === b.cpuMilli && a.memoryBytes === b.memoryBytes;

/**
 * Equal for every purpose but the computation time a requests-based figure carries: the tracker emits
 * a change only when this is false. Field by field (it runs for every node on every recompute; a
 * JSON.stringify of both figures allocated two strings each time).
 */
export function sameLoad(a: NodeLoad, b: NodeLoad): boolean {
  const ua = a.usage;
  const ub = b.usage;
  return (
    a.node === b.node &&
    a.source === b.source &&
    a.cpuPercent === b.cpuPercent &&
    a.memoryPercent === b.memoryPercent &&
    a.podCount === b.podCount &&
    a.estimatedPods === b.estimatedPods &&
    a.metricsStale === b.metricsStale &&
    a.unavailable === b.unavailable &&
    (a.source === 'requests' || a.timestamp === b.timestamp) &&
    a.allocatable.pods === b.allocatable.pods &&
    sameCpuMem(a.allocatable, b.allocatable) &&
    sameCpuMem(a.requested, b.requested) &&
    sameCpuMem(a.estimated, b.estimated) &&
    sameCpuMem(a.effective, b.effective) &&
    (ua === ub ||
      (ua !== undefined &&
        ub !== undefined &&
        sameCpuMem(ua, ub) &&
        ua.timestamp === ub.timestamp &&
        ua.windowSeconds === ub.windowSeconds))
  );
}

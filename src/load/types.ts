import type { CpuMem, NodeInfo, NodeMetricsInfo, NodeResources, PodInfo } from '../cluster/model.js';

/** Where a node's load figure comes from. */
export type LoadSource = 'requests' | 'metrics' | 'metrics+estimate';

export interface EstimateOptions {
  /** Multiplies a pod's requests to estimate its usage before metrics see it (Koordinator: 0.85 cpu, 0.7 mem). */
  cpuFactor: number;
  memoryFactor: number;
  /** Used for pods with no request at all. */
  defaultCpuMilli: number;
  defaultMemoryBytes: number;
}

export interface LoadOptions {
  /** Whether metrics.k8s.io is served at all; when not, load is requests-based and never "stale". */
  metricsServed: boolean;
  /** A NodeMetrics sample older than this is stale. */
  metricsStalenessSeconds: number;
  /**
   * What stale or missing metrics mean (while metrics are served):
   * fail-open  → fall back to requests (source 'requests', metricsStale true);
   * fail-closed → the load is unknown (`unavailable` true): rules treat the node as ineligible.
   */
  stalePolicy: 'fail-open' | 'fail-closed';
  estimate: EstimateOptions;
}

export const DEFAULT_LOAD_OPTIONS: LoadOptions = {
  metricsServed: false,
  metricsStalenessSeconds: 180,
  stalePolicy: 'fail-open',
  estimate: { cpuFactor: 0.85, memoryFactor: 0.7, defaultCpuMilli: 250, defaultMemoryBytes: 200 * 2 ** 20 },
};

export interface NodeLoad {
  node: string;
  allocatable: NodeResources;
  /** Sum of requests of the non-terminal pods bound to the node (plus pods assumed by the scheduler). */
  requested: CpuMem;
  podCount: number;
  /** The fresh-or-stale NodeMetrics sample, if any. */
  usage?: CpuMem & { timestamp: string; windowSeconds: number };
  /** Estimated usage of pods bound after the metrics sample (zero when source is 'requests'). */
  estimated: CpuMem;
  estimatedPods: number;
  /** The figure every decision uses. */
  effective: CpuMem;
  cpuPercent: number;
  memoryPercent: number;
  source: LoadSource;
  /** Time the figure refers to: the metrics sample time, or the computation time for requests. */
  timestamp: string;
  metricsStale: boolean;
  /** True only under fail-closed when fresh metrics are missing: the load is unknown. */
  unavailable: boolean;
}

/** Everything computeNodeLoad needs for one node. */
export interface NodeLoadInput {
  node: NodeInfo;
  /** The pods bound to the node (others are ignored, so passing more is harmless). */
  pods: Iterable<PodInfo>;
  /** The node's latest NodeMetrics sample, if any. */
  metrics?: NodeMetricsInfo;
  /** Milliseconds since the epoch. */
  now: number;
  options: LoadOptions;
}

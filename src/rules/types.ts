import type { LabelSelector } from '../cluster/model.js';

export const RULE_GROUP = 'example.com';
export const RULE_VERSION = 'v1';
export const RULE_PLURAL = 'nodeloadrules';
export const RULE_KIND = 'NodeLoadRule';
/** The original design's default threshold, in percent of allocatable. */
export const DEFAULT_MAX_PERCENT = 80;

export interface BurstGuard {
  /** At most this many placements of the rule's pods on one node ... */
  maxPlacements: number;
  /** ... per sliding window of this many seconds. */
  windowSeconds: number;
}

/** NodeLoadRule spec with defaults applied. */
export interface RuleSpec {
  maxCPU: number;
  maxMemory: number;
  /** Empty = every node. */
  allowedNodes: string[];
  /** Which pods of the namespace the rule covers; undefined = all. */
  podSelector?: LabelSelector;
  /** Label selector over nodes; with allowedNodes both must match (intersection). */
  nodeSelector?: LabelSelector;
  burst?: BurstGuard;
}

export interface NodeLoadRule {
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  resourceVersion: string;
  creationTimestamp: string;
  spec: RuleSpec;
  /** The status as last written by the operator (absent on a new rule). */
  status?: RuleStatus;
}

/** Why a node is not eligible for a rule (or a pod), in kube-scheduler's style. */
export type ReasonCode =
  | 'NotAllowed' // not in allowedNodes
  | 'NodeSelectorMismatch' // rule nodeSelector does not match
  | 'CPUThresholdExceeded'
  | 'MemoryThresholdExceeded'
  | 'LoadUnavailable'; // fail-closed with stale/missing metrics

export interface Reason {
  code: ReasonCode;
  rule: string;
  /** Human text with the numbers, e.g. "cpu 91% > maxCPU 80%" or "not in allowedNodes". */
  message: string;
  /** For threshold reasons: the figure and the limit, in percent. */
  value?: number;
  threshold?: number;
}

export interface NodeVerdict {
  node: string;
  eligible: boolean;
  reasons: Reason[];
  /** Remaining headroom in percentage points (min over cpu and memory) — ranks suggestions. */
  headroom: number;
}

/** How the nodes of a rule's node set are judged (metrics-condition.ts). */
export interface MetricsTally {
  /** On a fresh metrics sample. */
  measured: number;
  /** On requests though metrics are served: the sample is missing or stale. */
  degraded: number;
  /** On requests because metrics.k8s.io is not served. */
  notServed: number;
  /** Degraded nodes are ineligible rather than judged by requests (--stale-metrics-policy fail-closed). */
  failClosed: boolean;
}

/** One rule evaluated against every node. */
export interface RuleEvaluation {
  rule: string;
  namespace: string;
  /** Sorted by headroom (desc), then name. */
  eligible: NodeVerdict[];
  /** Sorted by name. */
  ineligible: NodeVerdict[];
  evaluatedAt?: string;
  /** How the nodes of the rule's node set are judged (the MetricsAvailable condition). */
  metrics?: MetricsTally;
}

export interface RuleCondition {
  type: 'Ready' | string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration: number;
}

export interface IneligibleNodeStatus {
  node: string;
  /** Reason messages, e.g. "cpu 91% > maxCPU 80%". */
  reasons: string[];
}

export interface NodeSuggestion {
  node: string;
  /** Percentage points left before the tighter threshold, rounded down. */
  headroom: number;
}

/** NodeLoadRule .status as the operator writes it. */
export interface RuleStatus {
  observedGeneration: number;
  /** Every eligible node, by name. */
  eligibleNodes: string[];
  eligibleCount: number;
  /**
   * At most MAX_LISTED_INELIGIBLE entries (load-related reasons first, then by name) so the object stays
   * small on large clusters; ineligibleCount is the full number.
   */
  ineligibleNodes: IneligibleNodeStatus[];
  ineligibleCount: number;
  conditions: RuleCondition[];
  lastEvaluationTime: string;
  /** The best eligible nodes, most headroom first (top 10). */
  suggestions: NodeSuggestion[];
}

export interface EligibilityTransitions {
  becameIneligible: IneligibleNodeStatus[];
  becameEligible: string[];
}

/** A covered pod running on a node over the rule's thresholds, and where it could go instead. */
export interface RebalanceHint {
  pod: string;
  namespace: string;
  from: string;
  /** The eligible node with the most headroom; absent when no node is eligible. */
  to?: string;
  reason: string;
}

/**
 * What a scheduling cycle says about each node, kept for the explanation: every failed check with the
 * plugin that found it, nodeload's load figures and rule checks, and each Score plugin's share.
 */
import type { LoadSource, NodeLoad } from '../../load/types.js';

/**
 * Why a plugin rejects a node, in two voices: `reason` is the aggregatable text kube-scheduler counts
 * in "0/N nodes are available: 3 Insufficient cpu, …" (identical across nodes); `detail` carries this
 * node's numbers for the explanation.
 */
export interface FilterReason {
  /** The plugin, named as upstream names it (NodeResourcesFit, InterPodAffinity, …) or nodeload's own. */
  plugin: string;
  code: string;
  reason: string;
  detail: string;
  /** UnschedulableAndUnresolvable: preempting pods on this node would not help. */
  unresolvable?: boolean;
  /** The rule's name, for NodeLoadRules and BurstGuard reasons. */
  rule?: string;
  /** Rejected by the plugin's PreFilter: every node carries it (the message then names it once). */
  preFilter?: boolean;
}

/** The numbers a verdict rests on. Percentages are of allocatable, "after" = with this pod placed. */
export interface CandidateLoad {
  source: LoadSource;
  cpuPercent: number;
  memoryPercent: number;
  cpuPercentAfter: number;
  memoryPercentAfter: number;
  /** Estimated usage of pods bound (or being bound) after the metrics sample: the in-flight estimate. */
  estimatedCpuMilli: number;
  estimatedMemoryBytes: number;
  estimatedPods: number;
  requestedCpuMilli: number;
  requestedMemoryBytes: number;
  allocatableCpuMilli: number;
  allocatableMemoryBytes: number;
  podCount: number;
  allocatablePods: number;
  metricsStale: boolean;
  unavailable: boolean;
}

export interface BurstCheck {
  placements: number;
  maxPlacements: number;
  windowSeconds: number;
}

export interface RuleCheck {
  rule: string;
  namespace: string;
  allowed: boolean;
  /** DaemonSet pods (vouched for by the webhook) are exempt from load thresholds and burst limits. */
  bypassed: boolean;
  maxCPU: number;
  maxMemory: number;
  /** Threshold minus load after placement, in percentage points (negative = over). */
  cpuMargin: number;
  memoryMargin: number;
  burst?: BurstCheck;
}

export interface NodeVerdict {
  node: string;
  feasible: boolean;
  /** Every failed check, in plugin order (added through addReason: NO_REASONS is shared until then). */
  reasons: readonly FilterReason[];
  /** The load figures (with `rules`, built for the verdicts an explanation keeps: plugins/verdict-figures.ts). */
  load?: CandidateLoad;
  rules: readonly RuleCheck[];
  burst?: BurstCheck;
  /**
   * The node's load NodeLoadRules placed the pod on (under nominated pods, the what-if's), until the
   * load figures are built from it; cleared then.
   */
  placedOn?: NodeLoad;
}

/**
 * The empty lists every verdict starts with, shared: a cycle makes a verdict for every node it examines
 * (~420 at 1,000 nodes) and most pass every check, so two empty arrays each were 64 of a verdict's
 * ~160 bytes (allocation profile, README). Frozen, so a stray push fails loudly instead of leaking a
 * reason into every verdict.
 */
export const NO_REASONS: readonly FilterReason[] = Object.freeze([]);
export const NO_RULE_CHECKS: readonly RuleCheck[] = Object.freeze([]);

/** Records a failed check on the verdict (its first replaces the shared NO_REASONS). */
export function addReason(verdict: NodeVerdict, reason: FilterReason): void {
  if (verdict.reasons === NO_REASONS) verdict.reasons = [reason];
  else (verdict.reasons as FilterReason[]).push(reason);
}

/** One Score plugin's part in a node's total: normalized 0–100, times the profile's weight. */
export interface ScoreContribution {
  plugin: string;
  weight: number;
  score: number;
}

/** The reasons kube-scheduler would count for this node: those of its first failing plugin. */
export function primaryReasons(verdict: NodeVerdict): FilterReason[] {
  const first = verdict.reasons[0];
  if (!first) return [];
  return verdict.reasons.filter((r) => r.plugin === first.plugin);
}

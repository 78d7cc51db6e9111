/**
 * Filter: can this pod go on this node? One verdict per node, each failed check with the reason string
 * kube-scheduler would aggregate ("Insufficient cpu", "node(s) had untolerated taint {k: v}") or ours for
 * NodeLoadRules ("node(s) exceed rule web-tier cpu 80%"), plus this node's numbers.
 *
 * Every check runs, so an explanation shows all of a node's problems; the FailedScheduling message counts
 * only the first failing stage per node, as kube-scheduler stops at the first failing plugin.
 */
import type { NodeInfo, PodInfo } from '../cluster/model.js';
import { formatCpu, formatMemory } from '../cluster/quantity.js';
import { formatPercent, withPod } from '../load/model.js';
import type { LoadOptions, LoadSource, NodeLoad } from '../load/types.js';
import { evaluatePlacement, nodeAllowedByRule, ruleKey } from '../rules/rule.js';
import type { BurstGuard, NodeLoadRule } from '../rules/types.js';
import {
  NOT_READY_TAINT,
  nodeAffinityMatches,
  toleratesTaintKey,
  UNSCHEDULABLE_TAINT,
  untoleratedTaint,
} from './predicates.js';

/** In kube-scheduler's plugin order; the message for a node counts only its first failing stage. */
export const FILTER_STAGES = [
  'node',
  'taints',
  'affinity',
  'resources',
  'ruleNodes',
  'ruleLoad',
  'burst',
] as const;
export type FilterStage = (typeof FILTER_STAGES)[number];

export type FilterCode =
  | 'NodeNotReady'
  | 'NodeUnschedulable'
  | 'NoLoad'
  | 'TaintNotTolerated'
  | 'NodeAffinityMismatch'
  | 'InsufficientCPU'
  | 'InsufficientMemory'
  | 'TooManyPods'
  | 'RuleNotAllowed'
  | 'RuleCPUExceeded'
  | 'RuleMemoryExceeded'
  | 'RuleLoadUnavailable'
  | 'RuleBurstLimit'
  | 'BurstLimit';

export interface FilterReason {
  code: FilterCode;
  stage: FilterStage;
  /** The aggregatable text, identical across nodes: "Insufficient cpu", "node(s) exceed rule web cpu 80%". */
  reason: string;
  /** This node's numbers: "cpu 91% > maxCPU 80%", "requests 500m, free 300m of 4". */
  detail: string;
  /** The rule's name for rule reasons. */
  rule?: string;
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
  /** DaemonSet pods are exempt from load thresholds and burst limits. */
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
  /** Every failed check, in stage order. */
  reasons: FilterReason[];
  load?: CandidateLoad;
  rules: RuleCheck[];
  burst?: BurstCheck;
}

/** How many placements a node had recently; `rule` narrows to the placements of that rule's pods. */
export interface BurstView {
  placements(node: string, windowSeconds: number, rule?: string): number;
}

export interface FilterContext {
  pod: PodInfo;
  /** The rules covering the pod (rulesForPod), in name order. */
  rules: NodeLoadRule[];
  loadOptions: LoadOptions;
  /** The cluster-wide burst guard, if configured. */
  burst?: BurstGuard;
  placements?: BurstView;
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

function nodeChecks(ctx: FilterContext, node: NodeInfo, out: FilterReason[]): void {
  const tolerations = ctx.pod.tolerations;
  // The node lifecycle controller taints not-ready nodes with both effects; either toleration lets a pod in.
  const toleratesNotReady =
    toleratesTaintKey(tolerations, NOT_READY_TAINT, 'NoSchedule') ||
    toleratesTaintKey(tolerations, NOT_READY_TAINT, 'NoExecute');
  if (!node.ready && !toleratesNotReady) {
    out.push({
      code: 'NodeNotReady',
      stage: 'node',
      reason: 'node(s) not ready',
      detail: 'condition Ready is not True',
    });
  }
  if (node.unschedulable && !toleratesTaintKey(tolerations, UNSCHEDULABLE_TAINT, 'NoSchedule')) {
    out.push({
      code: 'NodeUnschedulable',
      stage: 'node',
      reason: 'node(s) were unschedulable',
      detail: 'spec.unschedulable is true (cordoned)',
    });
  }
  const taint = untoleratedTaint(node.taints, tolerations);
  if (taint) {
    out.push({
      code: 'TaintNotTolerated',
      stage: 'taints',
      reason: `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`,
      detail: `taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect} not tolerated`,
    });
  }
  if (!nodeAffinityMatches(ctx.pod, node)) {
    out.push({
      code: 'NodeAffinityMismatch',
      stage: 'affinity',
      reason: "node(s) didn't match Pod's node affinity/selector",
      detail: 'nodeSelector or required node affinity does not match the node',
    });
  }
}

/** NodeResourcesFit: requests against allocatable minus what is already requested (assumed pods included). */
function resourceChecks(pod: PodInfo, load: NodeLoad, out: FilterReason[]): void {
  const { allocatable, requested } = load;
  if (load.podCount + 1 > allocatable.pods) {
    out.push({
      code: 'TooManyPods',
      stage: 'resources',
      reason: 'Too many pods',
      detail: `${load.podCount} pods of ${allocatable.pods} allowed`,
    });
  }
  const freeCpu = allocatable.cpuMilli - requested.cpuMilli;
  if (pod.requests.cpuMilli > 0 && pod.requests.cpuMilli > freeCpu) {
    out.push({
      code: 'InsufficientCPU',
      stage: 'resources',
      reason: 'Insufficient cpu',
      detail: `requests ${formatCpu(pod.requests.cpuMilli)}, free ${formatCpu(Math.max(0, freeCpu))} of ${formatCpu(allocatable.cpuMilli)}`,
    });
  }
  const freeMem = allocatable.memoryBytes - requested.memoryBytes;
  if (pod.requests.memoryBytes > 0 && pod.requests.memoryBytes > freeMem) {
    out.push({
      code: 'InsufficientMemory',
      stage: 'resources',
      reason: 'Insufficient memory',
      detail: `requests ${formatMemory(pod.requests.memoryBytes)}, free ${formatMemory(Math.max(0, freeMem))} of ${formatMemory(allocatable.memoryBytes)}`,
    });
  }
}

function burstCheck(ctx: FilterContext, node: string, guard: BurstGuard, rule?: string): BurstCheck {
  return {
    placements: ctx.placements?.placements(node, guard.windowSeconds, rule) ?? 0,
    maxPlacements: guard.maxPlacements,
    windowSeconds: guard.windowSeconds,
  };
}

function burstDetail(b: BurstCheck): string {
  return `${b.placements} placements in the last ${b.windowSeconds}s, limit ${b.maxPlacements}`;
}

function ruleChecks(ctx: FilterContext, node: NodeInfo, after: NodeLoad, out: FilterReason[]): RuleCheck[] {
  const bypassed = ctx.pod.isDaemonSetPod;
  const checks: RuleCheck[] = [];
  for (const rule of ctx.rules) {
    const name = rule.name;
    const notAllowed = nodeAllowedByRule(rule, node);
    const check: RuleCheck = {
      rule: name,
      namespace: rule.namespace,
      allowed: !notAllowed,
      bypassed,
      maxCPU: rule.spec.maxCPU,
      maxMemory: rule.spec.maxMemory,
      cpuMargin: rule.spec.maxCPU - after.cpuPercent,
      memoryMargin: rule.spec.maxMemory - after.memoryPercent,
    };
    if (notAllowed) {
      out.push({
        code: 'RuleNotAllowed',
        stage: 'ruleNodes',
        reason: `node(s) not allowed by rule ${name}`,
        detail: `rule ${name}: ${notAllowed.message}`,
        rule: name,
      });
    }
    if (!bypassed) {
      for (const r of evaluatePlacement(rule, node, after)) {
        if (r.code === 'CPUThresholdExceeded' || r.code === 'MemoryThresholdExceeded') {
          const cpu = r.code === 'CPUThresholdExceeded';
          out.push({
            code: cpu ? 'RuleCPUExceeded' : 'RuleMemoryExceeded',
            stage: 'ruleLoad',
            reason: `node(s) exceed rule ${name} ${cpu ? 'cpu' : 'memory'} ${formatPercent(cpu ? rule.spec.maxCPU : rule.spec.maxMemory)}%`,
            detail: `rule ${name}: ${r.message} with this pod`,
            rule: name,
          });
        } else if (r.code === 'LoadUnavailable') {
          out.push({
            code: 'RuleLoadUnavailable',
            stage: 'ruleLoad',
            reason: `node(s) have no fresh load metrics for rule ${name}`,
            detail: `rule ${name}: ${r.message}`,
            rule: name,
          });
        }
      }
      if (rule.spec.burst) {
        check.burst = burstCheck(ctx, node.name, rule.spec.burst, ruleKey(rule));
        if (check.burst.placements >= check.burst.maxPlacements) {
          out.push({
            code: 'RuleBurstLimit',
            stage: 'burst',
            reason: `node(s) hit burst limit of rule ${name}`,
            detail: `rule ${name}: ${burstDetail(check.burst)}`,
            rule: name,
          });
        }
      }
    }
    checks.push(check);
  }
  return checks;
}

/** The verdict for one node. `load` is the node's load in this cycle's snapshot (undefined: not known yet). */
export function filterNode(ctx: FilterContext, node: NodeInfo, load: NodeLoad | undefined): NodeVerdict {
  const reasons: FilterReason[] = [];
  nodeChecks(ctx, node, reasons);
  if (!load) {
    reasons.push({
      code: 'NoLoad',
      stage: 'node',
      reason: 'node(s) had no load figure yet',
      detail: 'node just added',
    });
    return { node: node.name, feasible: false, reasons, rules: [] };
  }
  const after = withPod(load, ctx.pod, ctx.loadOptions);
  resourceChecks(ctx.pod, load, reasons);
  const rules = ruleChecks(ctx, node, after, reasons);
  const verdict: NodeVerdict = {
    node: node.name,
    feasible: false,
    reasons,
    load: candidateLoad(load, after),
    rules,
  };
  if (ctx.burst && !ctx.pod.isDaemonSetPod) {
    verdict.burst = burstCheck(ctx, node.name, ctx.burst);
    if (verdict.burst.placements >= verdict.burst.maxPlacements) {
      reasons.push({
        code: 'BurstLimit',
        stage: 'burst',
        reason: 'node(s) hit burst limit',
        detail: burstDetail(verdict.burst),
      });
    }
  }
  reasons.sort((a, b) => FILTER_STAGES.indexOf(a.stage) - FILTER_STAGES.indexOf(b.stage));
  verdict.feasible = reasons.length === 0;
  return verdict;
}

/** Verdicts for every node, in the nodes' order. */
export function filterNodes(
  ctx: FilterContext,
  nodes: Iterable<NodeInfo>,
  loads: ReadonlyMap<string, NodeLoad>,
): NodeVerdict[] {
  const out: NodeVerdict[] = [];
  for (const node of nodes) out.push(filterNode(ctx, node, loads.get(node.name)));
  return out;
}

/** The reasons kube-scheduler would count for this node: those of its first failing stage. */
export function primaryReasons(verdict: NodeVerdict): FilterReason[] {
  const first = verdict.reasons[0];
  if (!first) return [];
  return verdict.reasons.filter((r) => r.stage === first.stage);
}

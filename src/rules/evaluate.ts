/**
 * A rule against the whole cluster: which nodes are eligible, the status object the operator writes,
 * what changed since the last write (for Events), and which running pods sit on nodes over the limits.
 */
import type { NodeInfo, PodInfo } from '../cluster/model.js';
import type { NodeLoad } from '../load/types.js';
import { emptyTally, metricsCondition, tally } from './metrics-condition.js';
import {
  evaluateNodeForRule,
  LOAD_REASON_CODES,
  nodeAllowedByRule,
  ruleCoversPod,
  THRESHOLD_REASON_CODES,
} from './rule.js';
import type {
  EligibilityTransitions,
  IneligibleNodeStatus,
  NodeLoadRule,
  NodeSuggestion,
  NodeVerdict,
  RebalanceHint,
  RuleCondition,
  RuleEvaluation,
  RuleStatus,
} from './types.js';

/** Cap on status.ineligibleNodes so the object stays small on large clusters. */
export const MAX_LISTED_INELIGIBLE = 100;
export const MAX_SUGGESTIONS = 10;

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A node the load tracker has no figure for yet: ineligible, with the node-set reason if any. */
export function missingLoadVerdict(rule: NodeLoadRule, node: NodeInfo): NodeVerdict {
  const notAllowed = nodeAllowedByRule(rule, node);
  return {
    node: node.name,
    eligible: false,
    reasons: [
      ...(notAllowed ? [notAllowed] : []),
      { code: 'LoadUnavailable', rule: rule.name, message: 'no load figure for the node yet' },
    ],
    headroom: 0,
  };
}

/** Every node's verdict; a node without a load figure is ineligible until it has one. */
export function evaluateRule(
  rule: NodeLoadRule,
  nodes: Iterable<NodeInfo>,
  loads: ReadonlyMap<string, NodeLoad>,
  now?: number,
): RuleEvaluation {
  const eligible: NodeVerdict[] = [];
  const ineligible: NodeVerdict[] = [];
  const metrics = emptyTally();
  for (const node of nodes) {
    const load = loads.get(node.name);
    const verdict = load ? evaluateNodeForRule(rule, node, load) : missingLoadVerdict(rule, node);
    (verdict.eligible ? eligible : ineligible).push(verdict);
    if (load && !nodeAllowedByRule(rule, node)) tally(metrics, load);
  }
  eligible.sort((a, b) => b.headroom - a.headroom || compareStrings(a.node, b.node));
  ineligible.sort((a, b) => compareStrings(a.node, b.node));
  const evaluation: RuleEvaluation = {
    rule: rule.name,
    namespace: rule.namespace,
    eligible,
    ineligible,
    metrics,
  };
  if (now !== undefined) evaluation.evaluatedAt = new Date(now).toISOString();
  return evaluation;
}

/** Nodes inside the rule's node set that fail on load are the interesting ones: list them first. */
function outsideNodeSet(v: NodeVerdict): boolean {
  return v.reasons.some((r) => r.code === 'NotAllowed' || r.code === 'NodeSelectorMismatch');
}

function listedIneligible(evaluation: RuleEvaluation): IneligibleNodeStatus[] {
  return [...evaluation.ineligible]
    .sort((a, b) => Number(outsideNodeSet(a)) - Number(outsideNodeSet(b)) || compareStrings(a.node, b.node))
    .slice(0, MAX_LISTED_INELIGIBLE)
    .map((v) => ({ node: v.node, reasons: v.reasons.map((r) => r.message) }));
}

/** Whole percentage points, so status does not change (and get rewritten) on every metrics tick. */
function suggestions(evaluation: RuleEvaluation): NodeSuggestion[] {
  return evaluation.eligible
    .map((v) => ({ node: v.node, headroom: Math.max(0, Math.floor(v.headroom)) }))
    .sort((a, b) => b.headroom - a.headroom || compareStrings(a.node, b.node))
    .slice(0, MAX_SUGGESTIONS);
}

/**
 * "2 CPUThresholdExceeded, 3 NotAllowed" — why nodes are out, like kube-scheduler's FailedScheduling.
 * A node outside the rule's node set counts only for that: its load is beside the point.
 */
function reasonSummary(ineligible: NodeVerdict[]): string {
  const counts = new Map<string, number>();
  for (const v of ineligible) {
    const reasons = outsideNodeSet(v) ? v.reasons.filter((r) => !LOAD_REASON_CODES.has(r.code)) : v.reasons;
    for (const code of new Set(reasons.map((r) => r.code))) counts.set(code, (counts.get(code) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => compareStrings(a[0], b[0]))
    .map(([code, n]) => `${n} ${code}`)
    .join(', ');
}

function readyCondition(
  rule: NodeLoadRule,
  evaluation: RuleEvaluation,
  previous: RuleStatus | undefined,
  now: number,
): RuleCondition {
  const eligibleCount = evaluation.eligible.length;
  const total = eligibleCount + evaluation.ineligible.length;
  const status = eligibleCount > 0 ? 'True' : 'False';
  const summary = reasonSummary(evaluation.ineligible);
  const prev = previous?.conditions.find((c) => c.type === 'Ready');
  return {
    type: 'Ready',
    status,
    reason: status === 'True' ? 'NodesEligible' : 'NoEligibleNodes',
    message: `${eligibleCount} of ${total} nodes eligible${status === 'False' && summary ? `: ${summary}` : ''}`,
    lastTransitionTime: transitionTime(now)(status, prev),
    observedGeneration: rule.generation,
  };
}

/** A condition keeps its lastTransitionTime while its status stays; a flip moves it to now. */
function transitionTime(now: number) {
  return (status: RuleCondition['status'], prev: RuleCondition | undefined): string =>
    prev && prev.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(now);
}

/**
 * The status to write. Deterministic for the same inputs (eligibleNodes by name, lastTransitionTime
 * carried over while Ready keeps its status), so statusChanged can skip no-op writes.
 */
export function statusFor(
  rule: NodeLoadRule,
  evaluation: RuleEvaluation,
  previous: RuleStatus | undefined,
  now: number,
): RuleStatus {
  return {
    observedGeneration: rule.generation,
    eligibleNodes: evaluation.eligible.map((v) => v.node).sort(compareStrings),
    eligibleCount: evaluation.eligible.length,
    ineligibleNodes: listedIneligible(evaluation),
    ineligibleCount: evaluation.ineligible.length,
    conditions: [
      readyCondition(rule, evaluation, previous, now),
      ...(evaluation.metrics
        ? [metricsCondition(rule, evaluation.metrics, previous, transitionTime(now))]
        : []),
    ],
    lastEvaluationTime: rfc3339(now),
    suggestions: suggestions(evaluation),
  };
}

/** JSON equality: key order does not matter and an undefined property equals an absent one. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
    );
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  for (const key of keys) if (!jsonEqual(ra[key], rb[key])) return false;
  return true;
}

/** Whether writing `next` over `prev` changes anything but lastEvaluationTime. */
export function statusChanged(prev: RuleStatus | undefined, next: RuleStatus | undefined): boolean {
  if (!prev || !next) return prev !== next;
  return !jsonEqual({ ...prev, lastEvaluationTime: undefined }, { ...next, lastEvaluationTime: undefined });
}

/**
 * Nodes that entered or left the eligible set, for Events. No previous status means no baseline: a new
 * rule (or one the operator meets for the first time) reports nothing. A node that became ineligible is
 * reported only if listed in next.ineligibleNodes — load-related ones are listed first, so only changes
 * beyond MAX_LISTED_INELIGIBLE at once go unreported. A node created after `prev` was written (`createdAt`,
 * ms) joined the cluster since: it entered no set it had left, so it is not reported eligible "again" —
 * 4,000 nodes added made 4,000 NodeEligible Events per rule, written one by one for minutes.
 */
export function eligibilityTransitions(
  prev: RuleStatus | undefined,
  next: RuleStatus,
  createdAt: (node: string) => number | undefined = () => undefined,
): EligibilityTransitions {
  if (!prev) return { becameIneligible: [], becameEligible: [] };
  const wasEligible = new Set(prev.eligibleNodes);
  const since = Date.parse(prev.lastEvaluationTime);
  const joinedSince = (node: string) => (createdAt(node) ?? Number.NEGATIVE_INFINITY) > since;
  return {
    becameIneligible: next.ineligibleNodes.filter((e) => wasEligible.has(e.node)),
    becameEligible: next.eligibleNodes.filter((n) => !wasEligible.has(n) && !joinedSince(n)),
  };
}

function movable(pod: PodInfo, node: string): boolean {
  return (
    pod.nodeName === node && pod.phase === 'Running' && !pod.terminal && !pod.deleting && !pod.isDaemonSetPod
  );
}

/**
 * Covered running pods on nodes over the rule's thresholds, each with the eligible node with the most
 * headroom. Hints only — nothing is evicted. DaemonSet pods are skipped (they cannot move); lower
 * priority pods come first as the cheaper ones to move.
 */
export function rebalanceHints(
  rule: NodeLoadRule,
  evaluation: RuleEvaluation,
  podsByNode: ReadonlyMap<string, readonly PodInfo[]>,
): RebalanceHint[] {
  const to = evaluation.eligible[0]?.node;
  const hints: RebalanceHint[] = [];
  for (const verdict of evaluation.ineligible) {
    const over = verdict.reasons.filter((r) => THRESHOLD_REASON_CODES.has(r.code));
    if (over.length === 0) continue;
    const reason = `node ${verdict.node}: ${over.map((r) => r.message).join(', ')}`;
    const pods = (podsByNode.get(verdict.node) ?? [])
      .filter((p) => movable(p, verdict.node) && ruleCoversPod(rule, p))
      .sort((a, b) => a.priority - b.priority || compareStrings(a.name, b.name));
    for (const pod of pods) {
      hints.push({
        pod: pod.name,
        namespace: pod.namespace,
        from: verdict.node,
        ...(to ? { to } : {}),
        reason,
      });
    }
  }
  return hints;
}

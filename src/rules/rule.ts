/**
 * NodeLoadRule semantics: parsing the raw object, which pods a rule covers, which nodes it allows, and
 * whether a node's load is within its thresholds. The operator, scheduler and webhook all decide with
 * these functions, so their answers and messages agree.
 */
import { isoTime } from '../cluster/convert.js';
import { selectorMatches } from '../cluster/labels.js';
import type { LabelSelector, LabelSelectorRequirement, NodeInfo } from '../cluster/model.js';
import { formatPercent } from '../load/model.js';
import type { NodeLoad } from '../load/types.js';
import {
  type BurstGuard,
  DEFAULT_MAX_PERCENT,
  type IneligibleNodeStatus,
  type NodeLoadRule,
  type NodeSuggestion,
  type NodeVerdict,
  type Reason,
  type ReasonCode,
  type RuleCondition,
  type RuleStatus,
} from './types.js';

// biome-ignore lint/suspicious/noExplicitAny: the raw object is untyped JSON at this boundary.
type Json = any;

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function finite(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function toSelector(v: unknown): LabelSelector | undefined {
  if (!isObject(v)) return undefined;
  const sel: LabelSelector = {};
  if (isObject(v.matchLabels)) {
    sel.matchLabels = Object.fromEntries(
      Object.entries(v.matchLabels).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  }
  if (Array.isArray(v.matchExpressions)) {
    sel.matchExpressions = v.matchExpressions.filter(isObject).map(
      (e): LabelSelectorRequirement => ({
        key: str(e.key),
        operator: str(e.operator),
        ...(Array.isArray(e.values) ? { values: strings(e.values) } : {}),
      }),
    );
  }
  return sel;
}

function toBurst(v: unknown): BurstGuard | undefined {
  if (!isObject(v)) return undefined;
  const maxPlacements = finite(v.maxPlacements);
  const windowSeconds = finite(v.windowSeconds);
  return maxPlacements !== undefined && windowSeconds !== undefined
    ? { maxPlacements, windowSeconds }
    : undefined;
}

/** The status as stored, or undefined when the object has none (a rule the operator has not seen yet). */
export function toRuleStatus(v: unknown): RuleStatus | undefined {
  if (!isObject(v)) return undefined;
  const list = (x: unknown) => (Array.isArray(x) ? x.filter(isObject) : []);
  return {
    observedGeneration: finite(v.observedGeneration) ?? 0,
    eligibleNodes: strings(v.eligibleNodes),
    eligibleCount: finite(v.eligibleCount) ?? 0,
    ineligibleNodes: list(v.ineligibleNodes).map(
      (e): IneligibleNodeStatus => ({ node: str(e.node), reasons: strings(e.reasons) }),
    ),
    ineligibleCount: finite(v.ineligibleCount) ?? 0,
    conditions: list(v.conditions).map(
      (c): RuleCondition => ({
        type: str(c.type),
        status: c.status === 'True' || c.status === 'False' ? c.status : 'Unknown',
        reason: str(c.reason),
        message: str(c.message),
        lastTransitionTime: isoTime(c.lastTransitionTime),
        observedGeneration: finite(c.observedGeneration) ?? 0,
      }),
    ),
    lastEvaluationTime: isoTime(v.lastEvaluationTime),
    suggestions: list(v.suggestions).map(
      (s): NodeSuggestion => ({ node: str(s.node), headroom: finite(s.headroom) ?? 0 }),
    ),
  };
}

/**
 * A NodeLoadRule from the raw API object (watch event or list item), with the original design's
 * defaults: maxCPU/maxMemory 80, allowedNodes empty (= every node). Tolerates a missing spec.
 */
export function toRule(obj: unknown): NodeLoadRule {
  const o = isObject(obj) ? obj : {};
  const meta = isObject(o.metadata) ? o.metadata : {};
  const spec = isObject(o.spec) ? o.spec : {};
  const rule: NodeLoadRule = {
    namespace: str(meta.namespace),
    name: str(meta.name),
    uid: str(meta.uid),
    generation: finite(meta.generation) ?? 0,
    resourceVersion: str(meta.resourceVersion),
    creationTimestamp: isoTime(meta.creationTimestamp),
    spec: {
      maxCPU: finite(spec.maxCPU) ?? DEFAULT_MAX_PERCENT,
      maxMemory: finite(spec.maxMemory) ?? DEFAULT_MAX_PERCENT,
      allowedNodes: strings(spec.allowedNodes),
    },
  };
  const podSelector = toSelector(spec.podSelector);
  if (podSelector) rule.spec.podSelector = podSelector;
  const nodeSelector = toSelector(spec.nodeSelector);
  if (nodeSelector) rule.spec.nodeSelector = nodeSelector;
  const burst = toBurst(spec.burst);
  if (burst) rule.spec.burst = burst;
  const status = toRuleStatus(o.status);
  if (status) rule.status = status;
  return rule;
}

export function ruleKey(rule: { namespace: string; name: string }): string {
  return `${rule.namespace}/${rule.name}`;
}

export function ruleCoversPod(
  rule: NodeLoadRule,
  pod: { namespace: string; labels: Record<string, string> },
): boolean {
  return rule.namespace === pod.namespace && selectorMatches(rule.spec.podSelector, pod.labels);
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The rules covering a pod, sorted by name so every component sees them in the same order. */
export function rulesForPod(
  rules: Iterable<NodeLoadRule>,
  pod: { namespace: string; labels: Record<string, string> },
): NodeLoadRule[] {
  const out: NodeLoadRule[] = [];
  for (const rule of rules) if (ruleCoversPod(rule, pod)) out.push(rule);
  return out.sort(byName);
}

// allowedNodes may hold up to 1000 names and is checked once per node per evaluation; rules are
// replaced (not mutated) on update, so the array identity is a safe cache key.
const allowedSets = new WeakMap<string[], Set<string>>();

function allowedSet(allowed: string[]): Set<string> {
  let set = allowedSets.get(allowed);
  if (!set) {
    set = new Set(allowed);
    allowedSets.set(allowed, set);
  }
  return set;
}

/** Whether the rule's node set (allowedNodes ∩ nodeSelector) contains the node; the reason when not. */
export function nodeAllowedByRule(rule: NodeLoadRule, node: NodeInfo): Reason | undefined {
  const { allowedNodes, nodeSelector } = rule.spec;
  if (allowedNodes.length > 0 && !allowedSet(allowedNodes).has(node.name)) {
    return { code: 'NotAllowed', rule: rule.name, message: 'not in allowedNodes' };
  }
  if (!selectorMatches(nodeSelector, node.labels)) {
    return {
      code: 'NodeSelectorMismatch',
      rule: rule.name,
      message: 'node labels do not match nodeSelector',
    };
  }
  return undefined;
}

/** The nodes every given rule allows (all nodes when there are no rules). */
export function allowedNodeNames(rules: Iterable<NodeLoadRule>, nodes: Iterable<NodeInfo>): Set<string> {
  const list = [...rules];
  const out = new Set<string>();
  for (const node of nodes) {
    if (list.every((rule) => nodeAllowedByRule(rule, node) === undefined)) out.add(node.name);
  }
  return out;
}

/**
 * Whether some node is allowed by every rule (true when there are no rules). Asked on every admission
 * review, so it does not walk the cluster when it need not: when a rule lists allowedNodes only the
 * shortest list is looked up, otherwise the scan stops at the first allowed node.
 */
export function someNodeAllowed(
  rules: readonly NodeLoadRule[],
  nodes: ReadonlyMap<string, NodeInfo>,
): boolean {
  const allowedByAll = (node: NodeInfo) => rules.every((rule) => nodeAllowedByRule(rule, node) === undefined);
  let shortest: string[] | undefined;
  for (const rule of rules) {
    const listed = rule.spec.allowedNodes;
    if (listed.length > 0 && (!shortest || listed.length < shortest.length)) shortest = listed;
  }
  if (shortest) {
    return shortest.some((name) => {
      const node = nodes.get(name);
      return node !== undefined && allowedByAll(node);
    });
  }
  for (const node of nodes.values()) if (allowedByAll(node)) return true;
  return false;
}

/**
 * "80.04" would print as "80", which reads as "80% > 80%": add decimals until the figure differs
 * from the limit it exceeds.
 */
function formatAbove(value: number, limit: number): string {
  let text = formatPercent(value);
  for (let digits = 2; digits <= 6 && Number(text) <= limit; digits++) {
    text = String(Number(value.toFixed(digits)));
  }
  return text;
}

function thresholdReason(
  code: ReasonCode,
  rule: NodeLoadRule,
  what: string,
  limitName: string,
  value: number,
  threshold: number,
): Reason {
  return {
    code,
    rule: rule.name,
    message: `${what} ${formatAbove(value, threshold)}% > ${limitName} ${formatPercent(threshold)}%`,
    value,
    threshold,
  };
}

/** Load checks only; a load exactly at the limit is within it. */
export function loadReasons(rule: NodeLoadRule, load: NodeLoad): Reason[] {
  if (load.unavailable) {
    return [{ code: 'LoadUnavailable', rule: rule.name, message: 'metrics stale or missing (fail-closed)' }];
  }
  const { maxCPU, maxMemory } = rule.spec;
  const reasons: Reason[] = [];
  if (load.cpuPercent > maxCPU) {
    reasons.push(thresholdReason('CPUThresholdExceeded', rule, 'cpu', 'maxCPU', load.cpuPercent, maxCPU));
  }
  if (load.memoryPercent > maxMemory) {
    reasons.push(
      thresholdReason('MemoryThresholdExceeded', rule, 'memory', 'maxMemory', load.memoryPercent, maxMemory),
    );
  }
  return reasons;
}

/** Percentage points left before the tighter of the two thresholds (negative when over). */
export function headroom(rule: NodeLoadRule, load: NodeLoad): number {
  return Math.min(rule.spec.maxCPU - load.cpuPercent, rule.spec.maxMemory - load.memoryPercent);
}

/**
 * Whether the node is eligible for the rule's pods right now. An unavailable load still gets a
 * headroom from its requests-based figures, only for ordering views.
 */
export function evaluateNodeForRule(rule: NodeLoadRule, node: NodeInfo, load: NodeLoad): NodeVerdict {
  const reasons = evaluatePlacement(rule, node, load);
  return { node: node.name, eligible: reasons.length === 0, reasons, headroom: headroom(rule, load) };
}

/** The scheduler's check: why placing the pod would break the rule, given the node's load after placing it. */
export function evaluatePlacement(rule: NodeLoadRule, node: NodeInfo, loadAfter: NodeLoad): Reason[] {
  const notAllowed = nodeAllowedByRule(rule, node);
  return notAllowed ? [notAllowed, ...loadReasons(rule, loadAfter)] : loadReasons(rule, loadAfter);
}

export const LOAD_REASON_CODES: ReadonlySet<ReasonCode> = new Set([
  'CPUThresholdExceeded',
  'MemoryThresholdExceeded',
  'LoadUnavailable',
]);
export const THRESHOLD_REASON_CODES: ReadonlySet<ReasonCode> = new Set([
  'CPUThresholdExceeded',
  'MemoryThresholdExceeded',
]);
export { selectorMatches };

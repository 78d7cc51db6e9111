/**
 * The operator's decisions, without I/O: which status to write and whether to write it, which Events
 * to emit for it, the flat suggestion list the views serve, and the bookkeeping of the debounced,
 * retried work queue. operator.ts only applies these.
 */
import { formatPercent } from '../load/model.js';
import type { NodeLoad } from '../load/types.js';
import { eligibilityTransitions, statusChanged, statusFor } from '../rules/evaluate.js';
import { METRICS_CONDITION } from '../rules/metrics-condition.js';
import {
  type EligibilityTransitions,
  type NodeLoadRule,
  RULE_GROUP,
  RULE_KIND,
  RULE_VERSION,
  type RuleEvaluation,
  type RuleStatus,
} from '../rules/types.js';

export const REPORTING_CONTROLLER = 'nodeload.example.com/operator';
export const EVENT_ACTION = 'Evaluate';
/** events.k8s.io/v1 rejects longer notes. */
export const MAX_NOTE_LENGTH = 1024;
/** Our own write is trusted over the cache's copy for at most this long (the informer normally catches up in ms). */
export const WRITTEN_STATUS_TTL_MS = 60_000;

export type RuleEventReason = 'NodeIneligible' | 'NodeEligible' | 'MetricsUnavailable' | 'MetricsAvailable';

export interface RuleEventSpec {
  type: 'Warning' | 'Normal';
  reason: RuleEventReason;
  /** The node it is about (the Event's related object); absent on an Event that names several. */
  node?: string;
  note: string;
}

/**
 * Per pass and reason, nodes that get an Event each; past this many, one Event names them all, as
 * client-go's correlator combines similar Events. A mass transition (metrics failing closed for every
 * node) would otherwise be one create per node, written one by one.
 */
export const MAX_NODE_EVENTS_PER_PASS = 10;

/** A status this operator wrote, with the resourceVersion the write produced. */
export interface WrittenStatus {
  status: RuleStatus;
  resourceVersion: string;
  at: number;
}

/**
 * What we compare the new status against. The cache's copy lags our own writes by a watch round-trip;
 * comparing against it in that window would write (and emit Events) twice. So our last write wins
 * until the cache shows it (same resourceVersion) or it is too old to be trusted.
 */
export function baselineStatus(
  rule: NodeLoadRule,
  written: WrittenStatus | undefined,
  now: number,
): RuleStatus | undefined {
  if (!written) return rule.status;
  if (written.resourceVersion === rule.resourceVersion) return rule.status;
  if (now - written.at > WRITTEN_STATUS_TTL_MS) return rule.status;
  return written.status;
}

/** Whether our last write is now visible in the cache (or stale), so it can be forgotten. */
export function writtenSettled(rule: NodeLoadRule, written: WrittenStatus, now: number): boolean {
  return written.resourceVersion === rule.resourceVersion || now - written.at > WRITTEN_STATUS_TTL_MS;
}

export interface RulePlan {
  status: RuleStatus;
  /** False when only lastEvaluationTime would change: no write, no Events. */
  write: boolean;
  transitions: EligibilityTransitions;
  /** To emit once the write succeeded (emitting before would repeat them on every retry). */
  events: RuleEventSpec[];
}

export function planRule(
  rule: NodeLoadRule,
  evaluation: RuleEvaluation,
  baseline: RuleStatus | undefined,
  loads: ReadonlyMap<string, NodeLoad>,
  now: number,
  /** When a node was created (ms), for telling a node that joined from one that became eligible again. */
  createdAt?: (node: string) => number | undefined,
): RulePlan {
  const status = statusFor(rule, evaluation, baseline, now);
  const write = statusChanged(baseline, status);
  const transitions = write
    ? eligibilityTransitions(baseline, status, createdAt)
    : { becameIneligible: [], becameEligible: [] };
  const events = eventsFor(rule, transitions, loads);
  if (write) events.push(...metricsEvents(baseline, status));
  return { status, write, transitions, events };
}

/**
 * MetricsAvailable turning False because samples went missing (nodes now judged by requests, or refused
 * under fail-closed) is a Warning; turning True again, a Normal Event. Like the eligibility Events they
 * need a baseline that had the condition: a new rule, or metrics.k8s.io not served at all (a setting, not
 * an incident), only show in the condition.
 */
export function metricsEvents(baseline: RuleStatus | undefined, status: RuleStatus): RuleEventSpec[] {
  const before = baseline?.conditions.find((c) => c.type === METRICS_CONDITION);
  const now = status.conditions.find((c) => c.type === METRICS_CONDITION);
  if (!before || !now || now.status === before.status) return [];
  if (now.reason === 'MetricsMissing') {
    return [{ type: 'Warning', reason: 'MetricsUnavailable', note: truncate(now.message) }];
  }
  if (now.status === 'True' && before.reason === 'MetricsMissing') {
    return [{ type: 'Normal', reason: 'MetricsAvailable', note: truncate(now.message) }];
  }
  return [];
}

function truncate(note: string): string {
  return note.length <= MAX_NOTE_LENGTH ? note : `${note.slice(0, MAX_NOTE_LENGTH - 1)}…`;
}

function loadFigures(rule: NodeLoadRule, load: NodeLoad | undefined): string {
  if (!load) return '';
  const { maxCPU, maxMemory } = rule.spec;
  return `: cpu ${formatPercent(load.cpuPercent)}% ≤ maxCPU ${maxCPU}%, memory ${formatPercent(load.memoryPercent)}% ≤ maxMemory ${maxMemory}%`;
}

export function eventsFor(
  rule: NodeLoadRule,
  transitions: EligibilityTransitions,
  loads: ReadonlyMap<string, NodeLoad>,
): RuleEventSpec[] {
  const events: RuleEventSpec[] = [];
  const left = transitions.becameIneligible;
  if (left.length > MAX_NODE_EVENTS_PER_PASS) {
    events.push({
      type: 'Warning',
      reason: 'NodeIneligible',
      note: truncate(
        `${left.length} nodes are no longer eligible for rule ${rule.name}: ${left.map(({ node, reasons }) => `${node} (${reasons.join(', ')})`).join(', ')}`,
      ),
    });
  } else {
    for (const { node, reasons } of left) {
      events.push({
        type: 'Warning',
        reason: 'NodeIneligible',
        node,
        note: truncate(`node ${node} is no longer eligible for rule ${rule.name}: ${reasons.join(', ')}`),
      });
    }
  }
  const back = transitions.becameEligible;
  if (back.length > MAX_NODE_EVENTS_PER_PASS) {
    events.push({
      type: 'Normal',
      reason: 'NodeEligible',
      note: truncate(`${back.length} nodes are eligible again for rule ${rule.name}: ${back.join(', ')}`),
    });
  } else {
    for (const node of back) {
      events.push({
        type: 'Normal',
        reason: 'NodeEligible',
        node,
        note: truncate(
          `node ${node} is eligible again for rule ${rule.name}${loadFigures(rule, loads.get(node))}`,
        ),
      });
    }
  }
  return events;
}

export interface EligibleSetChanges {
  becameEligible: string[];
  becameIneligible: string[];
}

/** How the eligible set moved between two evaluations of a rule (for logs; Events use the written status). */
export function eligibleSetChanges(
  prev: RuleEvaluation | undefined,
  next: RuleEvaluation,
): EligibleSetChanges {
  if (!prev) return { becameEligible: [], becameIneligible: [] };
  const before = new Set(prev.eligible.map((v) => v.node));
  const after = new Set(next.eligible.map((v) => v.node));
  return {
    becameEligible: [...after].filter((n) => !before.has(n)).sort(),
    becameIneligible: [...before].filter((n) => !after.has(n)).sort(),
  };
}

/** metav1.MicroTime: exactly 6 fractional digits, or the API server rejects the object. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * client-go's naming, `<object>.<hex time>`, plus a sequence number: two Events about one rule may
 * share a millisecond. (The API server validates an Event's generateName as a whole name, so a
 * "rule." prefix is refused.)
 */
export function eventName(ruleName: string, now: number, seq: number): string {
  return `${ruleName.slice(0, 230)}.${now.toString(16)}${(seq % 0x10000).toString(16).padStart(4, '0')}`;
}

/** An events.k8s.io/v1 Event about the rule, naming the node as the related object. */
export function eventBody(rule: NodeLoadRule, spec: RuleEventSpec, identity: string, now: number, seq = 0) {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: eventName(rule.name, now, seq), namespace: rule.namespace },
    eventTime: microTime(now),
    reportingController: REPORTING_CONTROLLER,
    // The API server caps reportingInstance at 128 characters.
    reportingInstance: identity.slice(0, 128),
    action: EVENT_ACTION,
    reason: spec.reason,
    type: spec.type,
    note: spec.note,
    regarding: {
      apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
      kind: RULE_KIND,
      namespace: rule.namespace,
      name: rule.name,
      uid: rule.uid,
      resourceVersion: rule.resourceVersion,
    },
    ...(spec.node ? { related: { apiVersion: 'v1', kind: 'Node', name: spec.node } } : {}),
  };
}

/** One row of GET /operator/suggestions: the original's {node, rule}, with the figures behind it. */
export interface Suggestion {
  node: string;
  rule: string;
  namespace: string;
  /** Percentage points left below the tighter of the rule's two limits. */
  headroom: number;
  cpuPercent: number;
  memoryPercent: number;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * For each rule (by namespace, then name) each eligible node, most headroom first — the original
 * operator's list, which had every node satisfying each rule.
 */
export function suggestionsFrom(
  evaluations: Iterable<RuleEvaluation>,
  loads: ReadonlyMap<string, NodeLoad>,
): Suggestion[] {
  const sorted = [...evaluations].sort(
    (a, b) => a.namespace.localeCompare(b.namespace) || a.rule.localeCompare(b.rule),
  );
  const out: Suggestion[] = [];
  for (const evaluation of sorted) {
    for (const verdict of evaluation.eligible) {
      const load = loads.get(verdict.node);
      out.push({
        node: verdict.node,
        rule: evaluation.rule,
        namespace: evaluation.namespace,
        headroom: round1(verdict.headroom),
        cpuPercent: round1(load?.cpuPercent ?? 0),
        memoryPercent: round1(load?.memoryPercent ?? 0),
      });
    }
  }
  return out;
}

/**
 * Rules look at a node's name and labels (allowedNodes, nodeSelector); its resources reach them
 * through the load tracker. Kubelet/KWOK heartbeats update nodes every few seconds without touching
 * either, and must not keep re-evaluating every rule.
 */
export function nodeChangeAffectsRules(change: {
  type: 'add' | 'update' | 'delete';
  old?: { labels: Record<string, string> };
  new?: { labels: Record<string, string> };
}): boolean {
  if (change.type !== 'update' || !change.old || !change.new) return true;
  const before = change.old.labels;
  const after = change.new.labels;
  const keys = Object.keys(after);
  return keys.length !== Object.keys(before).length || keys.some((k) => before[k] !== after[k]);
}

export interface DebounceOptions {
  /** Quiet time after the last change before reconciling. */
  waitMs: number;
  /** Upper bound on how long a change may wait under a constant stream of changes. */
  maxWaitMs: number;
}

export const DEFAULT_DEBOUNCE: DebounceOptions = { waitMs: 250, maxWaitMs: 2000 };

/** When the pending work should run: after the quiet period, but never later than maxWait after the first change. */
export function debounceDeadline(
  firstPendingAt: number,
  lastChangeAt: number,
  opts: DebounceOptions,
): number {
  return Math.min(lastChangeAt + opts.waitMs, firstPendingAt + opts.maxWaitMs);
}

/** Exponential backoff for failed status writes: 0.5 s, 1 s, 2 s ... capped at 30 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, attempt - 1));
}

/** The rules waiting for a reconcile: some by key, or all of them. */
export class PendingRules {
  private everything = false;
  private readonly keys = new Set<string>();
  private first: number | undefined;
  private last: number | undefined;

  markAll(now: number): void {
    this.everything = true;
    this.touch(now);
  }

  mark(key: string, now: number): void {
    if (!this.everything) this.keys.add(key);
    this.touch(now);
  }

  get empty(): boolean {
    return !this.everything && this.keys.size === 0;
  }

  /** When to run, or undefined when nothing is pending. */
  dueAt(opts: DebounceOptions): number | undefined {
    if (this.empty || this.first === undefined || this.last === undefined) return undefined;
    return debounceDeadline(this.first, this.last, opts);
  }

  /** Hands out the pending work and starts over. */
  take(): { all: boolean; keys: Set<string> } {
    const work = { all: this.everything, keys: new Set(this.keys) };
    this.everything = false;
    this.keys.clear();
    this.first = undefined;
    this.last = undefined;
    return work;
  }

  private touch(now: number): void {
    this.first ??= now;
    this.last = now;
  }
}

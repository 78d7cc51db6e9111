/**
 * The NodeLoadRule operator: event-driven, debounced reconciliation of every rule against the shared
 * cache and load tracker. Every instance evaluates (the views read evaluations on followers too);
 * only the leader writes status and emits Events. Level-triggered: each pass compares what should be
 * with what the API server has, so a missed event, a restart or a new leader converges on its own.
 */
import { Registry } from 'prom-client';
import type { PodInfo } from '../cluster/model.js';
import type { ClusterView } from '../cluster/view.js';
import { EventBus } from '../events/bus.js';
import type { Leadership } from '../leader/lease.js';
import type { LoadView } from '../load/tracker.js';
import type { NodeLoad } from '../load/types.js';
import { evaluateRule, rebalanceHints } from '../rules/evaluate.js';
import { ruleKey, THRESHOLD_REASON_CODES } from '../rules/rule.js';
import type { NodeLoadRule, RebalanceHint, RuleEvaluation } from '../rules/types.js';
import type { Logger } from '../server/log.js';
import { errorText, httpCode, type RuleWriter } from './kube.js';
import { type OperatorMetrics, operatorMetrics } from './metrics.js';
import {
  baselineStatus,
  DEFAULT_DEBOUNCE,
  type DebounceOptions,
  type EligibleSetChanges,
  eligibleSetChanges,
  nodeChangeAffectsRules,
  PendingRules,
  planRule,
  retryDelayMs,
  type Suggestion,
  suggestionsFrom,
  type WrittenStatus,
  writtenSettled,
} from './plan.js';
import { RuleEventRecorder } from './rule-events.js';

export interface OperatorOptions {
  cache: ClusterView<NodeLoadRule>;
  loads: LoadView;
  leader: Leadership;
  writer: RuleWriter;
  /** reportingInstance of the Events. */
  identity: string;
  log: Logger;
  registry?: Registry;
  now?: () => number;
  debounce?: DebounceOptions;
  /** Status writes in flight at once during a pass. */
  writeConcurrency?: number;
}

/** A rebalancing hint with the rule it comes from. */
export type OperatorRebalanceHint = RebalanceHint & { rule: string };

export interface OperatorChange {
  /** Keys (namespace/name) of the rules evaluated in the pass, including deleted ones. */
  rules: string[];
}

type OperatorTopics = { change: OperatorChange };

/** What became of a rule's status in a pass. */
type WriteOutcome = 'written' | 'unchanged' | 'failed' | 'not-leader';

interface Evaluated {
  rule: NodeLoadRule;
  evaluation: RuleEvaluation;
  /** The first evaluation of the rule by this instance. */
  first: boolean;
  changes: EligibleSetChanges;
}

export class Operator {
  private readonly now: () => number;
  private readonly debounce: DebounceOptions;
  private readonly log: Logger;
  private readonly pending = new PendingRules();
  private readonly evaluationMap = new Map<string, RuleEvaluation>();
  private readonly written = new Map<string, WrittenStatus>();
  private readonly failures = new Map<string, number>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private readonly changes: EventBus<OperatorTopics>;
  private readonly metrics: OperatorMetrics;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private synced = false;
  private started = false;
  private readonly recorder: RuleEventRecorder;
  private unsubscribe: (() => void)[] = [];

  constructor(private readonly opts: OperatorOptions) {
    this.now = opts.now ?? Date.now;
    this.debounce = opts.debounce ?? DEFAULT_DEBOUNCE;
    this.log = opts.log;
    this.changes = new EventBus<OperatorTopics>({
      onListenerError: (err) => this.log.error({ err }, 'operator change listener failed'),
    });
    const registry = opts.registry ?? new Registry();
    this.metrics = operatorMetrics(registry);
    this.recorder = new RuleEventRecorder({
      writer: opts.writer,
      identity: opts.identity,
      log: this.log,
      registry,
    });
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    const { cache, loads, leader } = this.opts;
    this.unsubscribe = [
      cache.bus.on('rule', (c) => {
        const entry = c.new ?? c.old;
        if (entry) this.markRule(ruleKey(entry.rule));
      }),
      // A node's labels or existence change every rule's verdicts; its load arrives through the tracker.
      cache.bus.on('node', (c) => {
        if (nodeChangeAffectsRules(c)) this.markAll();
      }),
      loads.bus.on('load', () => this.markAll()),
      leader.on('started-leading', () => {
        this.log.info('leading: reconciling every rule');
        this.markAll(true);
      }),
      leader.on('stopped-leading', () => {
        this.log.info('no longer leading: status writes stop');
        for (const t of this.retryTimers.values()) clearTimeout(t);
        this.retryTimers.clear();
        this.failures.clear();
        this.written.clear();
      }),
    ];
    // Before the first full sync a partial node list would make every rule look different.
    void cache.ready().then(() => {
      if (!this.started) return;
      this.synced = true;
      this.markAll(true);
    });
  }

  async stop(): Promise<void> {
    this.started = false;
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const t of this.retryTimers.values()) clearTimeout(t);
    this.retryTimers.clear();
    await this.running;
  }

  /** Every rule's latest evaluation, by namespace/name. */
  evaluations(): ReadonlyMap<string, RuleEvaluation> {
    return this.evaluationMap;
  }

  evaluation(namespace: string, name: string): RuleEvaluation | undefined {
    return this.evaluationMap.get(`${namespace}/${name}`);
  }

  suggestions(): Suggestion[] {
    return suggestionsFrom(this.evaluationMap.values(), this.opts.loads.all());
  }

  /** Covered pods on nodes over their rule's thresholds, with where they could go. Hints only. */
  rebalanceHints(): OperatorRebalanceHint[] {
    const hints: OperatorRebalanceHint[] = [];
    for (const [key, evaluation] of this.evaluationMap) {
      const entry = this.opts.cache.rules.get(key);
      if (!entry) continue;
      // Only nodes over a threshold can hold pods worth moving; skip copying the others' pods.
      const podsByNode = new Map<string, PodInfo[]>();
      for (const v of evaluation.ineligible) {
        if (v.reasons.some((r) => THRESHOLD_REASON_CODES.has(r.code))) {
          podsByNode.set(v.node, [...this.opts.cache.podsOnNode(v.node).values()]);
        }
      }
      for (const hint of rebalanceHints(entry.rule, evaluation, podsByNode))
        hints.push({ ...hint, rule: evaluation.rule });
    }
    return hints;
  }

  /** Called after each pass with the rules it evaluated; returns the unsubscribe function. */
  onChange(fn: (change: OperatorChange) => void): () => void {
    return this.changes.on('change', fn);
  }

  /** Runs pending work now instead of after the debounce, for callers that need the current state. */
  async flush(): Promise<void> {
    await this.running;
    if (this.pending.empty || !this.synced) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.runPass();
  }

  private markRule(key: string): void {
    this.pending.mark(key, this.now());
    this.schedule();
  }

  private markAll(immediately = false): void {
    this.pending.markAll(this.now());
    this.schedule(immediately);
  }

  private schedule(immediately = false): void {
    if (!this.started || !this.synced || this.running) return;
    const due = immediately ? this.now() : this.pending.dueAt(this.debounce);
    if (due === undefined) return;
    // Each change moves the deadline (never past maxWait after the first one, which dueAt accounts for).
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.runPass();
      },
      Math.max(0, due - this.now()),
    );
  }

  private runPass(): Promise<void> {
    if (this.running) return this.running;
    const pass = this.reconcile()
      .catch((err: unknown) => {
        this.metrics.reconciles.inc({ result: 'error' });
        this.log.error({ err }, 'reconcile pass failed');
      })
      .finally(() => {
        this.running = undefined;
        // Changes that arrived during the pass.
        if (!this.pending.empty) this.schedule();
      });
    this.running = pass;
    return pass;
  }

  private async reconcile(): Promise<void> {
    const endTimer = this.metrics.duration.startTimer();
    const work = this.pending.take();
    const { cache } = this.opts;
    const loads = this.opts.loads.all();
    const nodes = [...cache.nodes.values()];
    const now = this.now();

    const keys = work.all ? new Set([...cache.rules.keys(), ...this.evaluationMap.keys()]) : work.keys;
    const evaluated: Evaluated[] = [];
    for (const key of keys) {
      const entry = cache.rules.get(key);
      if (!entry) {
        this.forget(key);
        continue;
      }
      const evaluation = evaluateRule(entry.rule, nodes, loads, now);
      const previous = this.evaluationMap.get(key);
      this.evaluationMap.set(key, evaluation);
      this.metrics.eligible.set(
        { namespace: entry.rule.namespace, rule: entry.rule.name },
        evaluation.eligible.length,
      );
      evaluated.push({
        rule: entry.rule,
        evaluation,
        first: !previous,
        changes: eligibleSetChanges(previous, evaluation),
      });
    }

    let failed = 0;
    const outcomes = this.opts.leader.isLeader()
      ? await this.inPool(evaluated, (e) => this.writeRule(e.rule, e.evaluation, loads))
      : evaluated.map((): WriteOutcome => 'not-leader');
    evaluated.forEach((e, i) => {
      const outcome = outcomes[i] ?? 'not-leader';
      if (outcome === 'failed') failed++;
      this.logEvaluation(e, outcome);
    });
    this.metrics.reconciles.inc({ result: failed > 0 ? 'error' : 'success' });
    endTimer();
    this.changes.emit('change', { rules: [...keys] });
  }

  /** Writes the status when it changed, then the Events; a failed write is retried later. */
  private async writeRule(
    rule: NodeLoadRule,
    evaluation: RuleEvaluation,
    loads: ReadonlyMap<string, NodeLoad>,
  ): Promise<WriteOutcome> {
    const key = ruleKey(rule);
    const now = this.now();
    const written = this.written.get(key);
    if (written && writtenSettled(rule, written, now)) this.written.delete(key);
    const plan = planRule(
      rule,
      evaluation,
      baselineStatus(rule, this.written.get(key), now),
      loads,
      now,
      (node) => {
        const created = this.opts.cache.nodes.get(node)?.creationTimestamp;
        return created ? Date.parse(created) : undefined;
      },
    );
    if (!plan.write) {
      this.clearFailure(key);
      return 'unchanged';
    }
    try {
      const resourceVersion = await this.opts.writer.patchStatus(rule.namespace, rule.name, plan.status);
      this.written.set(key, { status: plan.status, resourceVersion, at: now });
      this.clearFailure(key);
    } catch (err) {
      if (httpCode(err) === 404) {
        // Deleted meanwhile: the informer's delete event will drop it.
        this.log.debug({ rule: key }, 'rule vanished before its status write');
        return 'unchanged';
      }
      this.retryLater(key, err);
      return 'failed';
    }
    for (const spec of plan.events) await this.recorder.record(rule, spec, now);
    return 'written';
  }

  /** One line per rule: info when something changed (or the rule is new to us), debug otherwise. */
  private logEvaluation(e: Evaluated, outcome: WriteOutcome): void {
    const key = ruleKey(e.rule);
    const summary = {
      rule: key,
      eligible: e.evaluation.eligible.length,
      ineligible: e.evaluation.ineligible.length,
      becameEligible: e.changes.becameEligible,
      becameIneligible: e.changes.becameIneligible,
      status: outcome,
    };
    const moved = e.changes.becameEligible.length + e.changes.becameIneligible.length > 0;
    if (e.first || moved || outcome === 'written') this.log.info(summary, 'rule evaluated');
    else this.log.debug(summary, 'rule evaluated');
    if (this.log.isLevelEnabled('debug')) {
      this.log.debug(
        {
          rule: key,
          eligible: e.evaluation.eligible.map((v) => ({ node: v.node, headroom: v.headroom })),
          ineligible: e.evaluation.ineligible.map((v) => ({
            node: v.node,
            reasons: v.reasons.map((r) => r.message),
          })),
        },
        'rule evaluation details',
      );
    }
  }

  private retryLater(key: string, err: unknown): void {
    const attempt = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, attempt);
    const delay = retryDelayMs(attempt);
    this.log.warn({ err: errorText(err), rule: key, attempt, retryInMs: delay }, 'rule status write failed');
    clearTimeout(this.retryTimers.get(key));
    this.retryTimers.set(
      key,
      setTimeout(() => {
        this.retryTimers.delete(key);
        this.markRule(key);
      }, delay),
    );
  }

  private clearFailure(key: string): void {
    this.failures.delete(key);
    clearTimeout(this.retryTimers.get(key));
    this.retryTimers.delete(key);
  }

  private forget(key: string): void {
    const evaluation = this.evaluationMap.get(key);
    if (evaluation) this.metrics.eligible.remove({ namespace: evaluation.namespace, rule: evaluation.rule });
    this.evaluationMap.delete(key);
    this.written.delete(key);
    this.clearFailure(key);
  }

  private async inPool<T, R>(items: T[], fn: (item: T) => Promise<R>): Promise<R[]> {
    const results: R[] = new Array(items.length);
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i] as T);
      }
    };
    const width = Math.min(this.opts.writeConcurrency ?? 8, items.length);
    await Promise.all(Array.from({ length: width }, worker));
    return results;
  }
}

/**
 * The scheduling loop. Only the leader schedules. Each cycle pops one pod, filters and scores every node
 * against the tracker's loads — read synchronously, so nothing can change them mid-cycle: one immutable
 * snapshot per cycle — assumes the pod onto the best node at once (the next cycle already counts it) and
 * binds asynchronously, with many binds in flight under the gateway's own rate limiter. A failed bind
 * takes the assumption back and requeues; a 409 "already assigned" means another scheduler instance
 * bound it first, which is final.
 */
import { randomUUID } from 'node:crypto';
import type { RuleClusterTopics as ClusterTopics } from '../rules/kind.js';
import { type PodInfo, podKey } from '../cluster/model.js';
import { EventBus } from '../events/bus.js';
import type { Logger } from '../log.js';
import { ruleKey, rulesForPod } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import { PlacementLog } from './burst-guard.js';
import {
  buildCandidates,
  type Decision,
  type DecisionResult,
  decisionRules,
  scheduledMessage,
  unschedulableMessage,
} from './explain.js';
import { type FilterContext, filterNodes } from './filter.js';
import { DecisionHistory } from './history.js';
import { createSchedulerMetrics, type SchedulerMetrics } from './metrics.js';
import { type PendingPod, type QueuedPod, SchedulingQueue } from './queue.js';
import { acquireToken, TokenBucket } from './ratelimit.js';
import { loadDropped, nodeChangeMatters, ruleChangeMatters } from './requeue.js';
import { DEFAULT_SCORE_WEIGHTS, rankNodes } from './score.js';
import { type SimulationResult, simulateRule } from './simulate.js';
import type { SchedulerDeps, SchedulerOptions, SchedulerStatus } from './types.js';

export type {
  LeaderView,
  SchedulerCacheView,
  SchedulerDeps,
  SchedulerLoadView,
  SchedulerOptions,
  SchedulerStatus,
} from './types.js';

type DecisionBase = Omit<Decision, 'result' | 'message' | 'latencyMs' | 'e2eLatencyMs'>;

const DEFAULT_MAX_BINDS_IN_FLIGHT = 512;
const DEFAULT_FAILED_EVENT_INTERVAL_MS = 30_000;
const DEFAULT_LEADER_SETTLE_MS = 2000;
const STOP_GRACE_MS = 10_000;

const NOOP_METRICS: SchedulerMetrics = { attempt() {}, scheduled() {} };

export class Scheduler {
  readonly history: DecisionHistory;
  private readonly queue: SchedulingQueue;
  private readonly placements: PlacementLog;
  private readonly bindBucket: TokenBucket;
  private readonly decisions: EventBus<{ decision: Decision }>;
  private readonly metrics: SchedulerMetrics;
  private readonly now: () => number;
  private readonly opts: SchedulerOptions;
  private readonly log: Logger;
  private readonly subscriptions: (() => void)[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly lastFailedEvent = new Map<string, { message: string; at: number }>();
  private ruleList: NodeLoadRule[] | undefined;
  private running = false;
  private leading = false;
  private cacheSynced = false;
  private generation = 0;
  private abort: AbortController | undefined;
  private waiter: (() => void) | undefined;
  private startedAt: number | undefined;
  private lastDecisionAt: number | undefined;
  private counters = { bound: 0, failed: 0, unschedulable: 0, conflicts: 0 };

  constructor(private readonly deps: SchedulerDeps) {
    this.opts = deps.options;
    this.log = deps.log;
    this.now = deps.now ?? Date.now;
    this.history = new DecisionHistory(deps.options.history);
    this.queue = new SchedulingQueue({
      now: this.now,
      initialBackoffMs: this.opts.initialBackoffMs,
      maxBackoffMs: this.opts.maxBackoffMs,
      unschedulableRetryMs: this.opts.unschedulableRetryMs,
    });
    this.placements = new PlacementLog({ now: this.now });
    this.bindBucket = new TokenBucket({ qps: this.opts.bindQps, burst: this.opts.bindBurst, now: this.now });
    this.decisions = new EventBus({
      onListenerError: (err) => this.log.error({ err }, 'decision subscriber failed'),
    });
    this.metrics = deps.registry
      ? createSchedulerMetrics(deps.registry, {
          queueLengths: () => this.queue.lengths(),
          bindsInFlight: () => this.inFlight.size,
        })
      : NOOP_METRICS;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.startedAt = this.now();
    const { cache, loads, leader } = this.deps;
    this.subscriptions.push(
      cache.bus.on('pod', (c) => this.onPod(c)),
      cache.bus.on('node', (c) => {
        if (nodeChangeMatters(c.old, c.new)) this.moveAll();
      }),
      cache.bus.on('rule', (c) => {
        this.ruleList = undefined;
        if (ruleChangeMatters(c.old?.rule, c.new?.rule)) this.moveAll();
      }),
      loads.bus.on('load', (c) => {
        if (loadDropped(c.previous, c.load)) this.moveAll();
      }),
      leader.on('started-leading', () => this.becomeLeader()),
      leader.on('stopped-leading', () => this.stepDown('lost leadership')),
    );
    void cache.ready().then(() => {
      this.cacheSynced = true;
    });
    if (leader.isLeader()) this.becomeLeader();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    for (const off of this.subscriptions.splice(0)) off();
    this.stepDown('stopping');
    const grace = AbortSignal.timeout(STOP_GRACE_MS);
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((resolve) => grace.addEventListener('abort', resolve, { once: true })),
    ]);
    await this.deps.api.drain(grace);
  }

  /** Rebuilds the history from the Events written by this scheduler (any instance) before a restart. */
  async rebuildHistory(): Promise<number> {
    const decisions = await this.deps.api.listDecisions(this.history.maxDecisions);
    this.history.restore(decisions);
    return decisions.length;
  }

  /** Subscribes to every decision as it is made; the decision object is shared, do not mutate it. */
  onDecision(fn: (d: Decision) => void): () => void {
    return this.decisions.on('decision', fn);
  }

  decision(id: string): Decision | undefined {
    return this.history.get(id);
  }

  pendingPods(): PendingPod[] {
    return this.queue.pending();
  }

  status(): SchedulerStatus {
    const q = this.queue.lengths();
    const status: SchedulerStatus = {
      schedulerName: this.opts.schedulerName,
      identity: this.opts.identity,
      running: this.running,
      leader: this.leading,
      cacheSynced: this.cacheSynced,
      queues: { active: q.active, backoff: q.backoff, unschedulable: q.unschedulable, inFlight: q.inFlight },
      bindsInFlight: this.inFlight.size,
      ...this.counters,
      historySize: this.history.size,
    };
    if (this.startedAt !== undefined) status.startedAt = new Date(this.startedAt).toISOString();
    if (this.lastDecisionAt !== undefined)
      status.lastDecisionTime = new Date(this.lastDecisionAt).toISOString();
    return status;
  }

  /**
   * What-if for a new or changed rule against the current state, with the same filter the loop uses.
   * Pending pods are the ones this scheduler would place.
   */
  simulate(rule: NodeLoadRule): SimulationResult {
    const { cache, loads } = this.deps;
    const pending = [...cache.unscheduledPods()].filter((p) => this.isPendingOurs(p));
    return simulateRule({
      rule,
      nodes: [...cache.nodes.values()],
      loads: loads.all(),
      pendingPods: pending,
      podsByNode: (node) => cache.podsOnNode(node).values(),
      rules: this.rules(),
      loadOptions: loads.options,
    });
  }

  // ---- leadership ----

  private becomeLeader(): void {
    if (this.leading || !this.running) return;
    this.leading = true;
    const generation = ++this.generation;
    this.abort = new AbortController();
    this.log.info({ identity: this.opts.identity }, 'leading: scheduling starts');
    void this.run(generation, this.abort.signal).catch((err: unknown) => {
      this.log.error({ err }, 'scheduling loop crashed');
    });
  }

  private stepDown(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.generation++;
    this.abort?.abort();
    this.abort = undefined;
    this.queue.clear();
    this.lastFailedEvent.clear();
    this.wake();
    this.log.info({ reason: why }, 'not leading: scheduling stopped');
  }

  // ---- the loop ----

  private async run(generation: number, signal: AbortSignal): Promise<void> {
    const aborted = new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    await Promise.race([this.deps.cache.ready(), aborted]);
    const settleMs = this.opts.leaderSettleMs ?? DEFAULT_LEADER_SETTLE_MS;
    if (settleMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, settleMs))), aborted]);
      clearTimeout(timer);
    }
    if (generation !== this.generation) return;
    // A new leader learns the pending pods from the cache: nothing depends on what the old one queued.
    for (const pod of this.deps.cache.unscheduledPods()) if (this.isPendingOurs(pod)) this.queue.add(pod);
    const maxInFlight = this.opts.maxBindsInFlight ?? DEFAULT_MAX_BINDS_IN_FLIGHT;
    while (generation === this.generation) {
      this.queue.flush();
      const entry = this.inFlight.size < maxInFlight ? this.queue.pop() : undefined;
      if (!entry) {
        await this.waitForWork();
        continue;
      }
      try {
        this.scheduleOne(entry, generation, signal);
      } catch (err) {
        this.log.error({ err, pod: entry.key }, 'scheduling attempt failed');
        this.queue.requeueAfterError(
          entry.key,
          `internal error: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      // Let watch events and bind responses in between cycles.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private waitForWork(): Promise<void> {
    return new Promise((resolve) => {
      const at = this.queue.nextFlushAt();
      const done = () => {
        clearTimeout(timer);
        if (this.waiter === done) this.waiter = undefined;
        resolve();
      };
      const timer = at === undefined ? undefined : setTimeout(done, Math.max(0, at - this.now()) + 1);
      this.waiter = done;
    });
  }

  private wake(): void {
    this.waiter?.();
  }

  private isPendingOurs(pod: PodInfo): boolean {
    return (
      pod.schedulerName === this.opts.schedulerName &&
      !pod.nodeName &&
      !pod.terminal &&
      !pod.deleting &&
      !pod.schedulingGated
    );
  }

  private rules(): NodeLoadRule[] {
    this.ruleList ??= [...this.deps.cache.rules.values()].map((e) => e.rule);
    return this.ruleList;
  }

  private scheduleOne(entry: QueuedPod, generation: number, signal: AbortSignal): void {
    const started = this.now();
    const { cache, loads } = this.deps;
    const key = entry.key;
    const pod = cache.pods.get(key);
    // Never place a pod the cache shows bound (or gone, or someone else's), nor one already being bound.
    if (!pod || !this.isPendingOurs(pod) || loads.isAssumed(key)) {
      this.queue.delete(key);
      return;
    }
    const rules = rulesForPod(this.rules(), pod);
    const ctx: FilterContext = { pod, rules, loadOptions: loads.options, placements: this.placements };
    if (this.opts.burst) ctx.burst = this.opts.burst;
    const verdicts = filterNodes(ctx, cache.nodes.values(), loads.all());
    const ranked = rankNodes(verdicts, this.opts.weights ?? DEFAULT_SCORE_WEIGHTS);
    const algorithmMs = this.now() - started;
    const base: DecisionBase = {
      id: randomUUID(),
      namespace: pod.namespace,
      pod: pod.name,
      podUid: pod.uid,
      time: new Date(started).toISOString(),
      algorithmMs,
      attempts: entry.attempts,
      rules: decisionRules(rules),
      totalNodes: cache.nodes.size,
      feasibleNodes: ranked.length,
      candidates: buildCandidates(verdicts, ranked),
      reportingInstance: this.instance(),
    };
    const best = ranked[0];
    if (!best) {
      const message = unschedulableMessage(cache.nodes.size, verdicts);
      this.queue.requeueUnschedulable(key, message);
      this.counters.unschedulable++;
      const d = this.finish(base, 'unschedulable', message, entry);
      this.deps.api.markUnschedulable(pod, message);
      if (this.failedEventDue(key, message)) this.deps.api.recordDecision(d);
      return;
    }
    loads.assume(pod, best.node);
    this.placements.record(key, best.node, rules.map(ruleKey));
    const bind = this.bind(entry, pod, { ...base, node: best.node }, generation, signal).catch(
      (err: unknown) => {
        this.log.error({ err, pod: key }, 'bind attempt failed unexpectedly; requeued');
        this.unassume(key);
        this.queue.requeueAfterError(
          key,
          `internal error: ${err instanceof Error ? err.message : String(err)}`,
        );
      },
    );
    this.inFlight.add(bind);
    void bind.finally(() => {
      this.inFlight.delete(bind);
      this.wake();
    });
  }

  private async bind(
    entry: QueuedPod,
    pod: PodInfo,
    base: DecisionBase & { node: string },
    generation: number,
    signal: AbortSignal,
  ): Promise<void> {
    const key = entry.key;
    const node = base.node;
    try {
      await acquireToken(this.bindBucket, signal);
    } catch {
      this.unassume(key);
      return;
    }
    // The world may have moved while we waited for a token.
    const current = this.deps.cache.pods.get(key);
    if (
      generation !== this.generation ||
      !current ||
      current.uid !== pod.uid ||
      !this.isPendingOurs(current)
    ) {
      this.unassume(key);
      this.queue.delete(key);
      if (current && current.uid !== pod.uid && this.isPendingOurs(current)) this.queue.add(current);
      return;
    }
    if (!this.deps.cache.nodes.has(node)) {
      this.unassume(key);
      this.counters.failed++;
      this.queue.requeueAfterError(key, `node ${node} was deleted before the bind`);
      const d = this.finish(base, 'error', `Binding rejected: node ${node} no longer exists`, entry);
      this.deps.api.recordDecision(d);
      return;
    }
    const outcome = await this.deps.api.bind(pod, node);
    switch (outcome.kind) {
      case 'bound': {
        this.queue.done(key);
        this.lastFailedEvent.delete(key);
        this.counters.bound++;
        const d = this.finish(base, 'scheduled', scheduledMessage(pod.namespace, pod.name, node), entry);
        this.metrics.scheduled(d.e2eLatencyMs / 1000, d.attempts);
        this.deps.api.recordDecision(d);
        return;
      }
      case 'already-bound':
      case 'pod-gone': {
        this.unassume(key);
        this.queue.delete(key);
        if (outcome.kind === 'already-bound') this.counters.conflicts++;
        this.finish(base, 'error', `Binding rejected: ${outcome.message}`, entry, false);
        return;
      }
      case 'failed': {
        this.unassume(key);
        this.counters.failed++;
        this.queue.requeueAfterError(key, `binding rejected: ${outcome.message}`);
        const d = this.finish(base, 'error', `Binding rejected: ${outcome.message}`, entry);
        this.deps.api.recordDecision(d);
        this.log.warn({ pod: key, node, err: outcome.message }, 'bind failed; requeued');
        return;
      }
    }
  }

  private unassume(key: string): void {
    this.deps.loads.forget(key);
    this.placements.remove(key);
  }

  /** Completes, records and publishes a decision; `count` = whether it is a scheduling attempt for metrics. */
  private finish(
    base: DecisionBase,
    result: DecisionResult,
    message: string,
    entry: QueuedPod,
    count = true,
  ): Decision {
    const end = this.now();
    this.lastDecisionAt = end;
    const started = Date.parse(base.time);
    const d: Decision = {
      ...base,
      result,
      message,
      latencyMs: Math.max(base.algorithmMs, end - started),
      e2eLatencyMs: end - entry.firstSeen,
    };
    if (count) this.metrics.attempt(result, d.latencyMs / 1000);
    this.history.add(d);
    this.decisions.emit('decision', d);
    return d;
  }

  private failedEventDue(key: string, message: string): boolean {
    const last = this.lastFailedEvent.get(key);
    const now = this.now();
    const interval = this.opts.failedEventIntervalMs ?? DEFAULT_FAILED_EVENT_INTERVAL_MS;
    if (last && last.message === message && now - last.at < interval) return false;
    this.lastFailedEvent.set(key, { message, at: now });
    return true;
  }

  private instance(): string {
    return `${this.opts.schedulerName}-${this.opts.identity}`;
  }

  // ---- cluster changes ----

  private onPod(c: ClusterTopics['pod']): void {
    const pod = c.new;
    if (pod) {
      const key = podKey(pod);
      if (this.leading && this.isPendingOurs(pod)) {
        this.queue.add(pod);
        this.wake();
      } else {
        this.queue.delete(key);
        if (pod.nodeName || pod.deleting || pod.terminal) this.lastFailedEvent.delete(key);
      }
    } else if (c.old) {
      const key = podKey(c.old);
      this.queue.delete(key);
      this.lastFailedEvent.delete(key);
      // A bound pod going away frees room.
      if (c.old.nodeName) this.moveAll();
    }
  }

  private moveAll(): void {
    if (!this.leading) return;
    this.queue.moveAllToActiveOrBackoff();
    this.wake();
  }
}

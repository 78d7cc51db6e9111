/**
 * The scheduling loop. Only the leader schedules. Each cycle pops one pod, filters and scores every node
 * against the tracker's loads — read synchronously, so nothing can change them mid-cycle: one immutable
 * snapshot per cycle — assumes the pod onto the best node at once (the next cycle already counts it) and
 * binds asynchronously, with many binds in flight under the gateway's own rate limiter. A failed bind
 * takes the assumption back and requeues; a 409 "already assigned" means another scheduler instance
 * bound it first, which is final.
 */
import { randomUUID } from 'node:crypto';
import { type PodInfo, podKey } from '../cluster/model.js';
import { EventBus } from '../events/bus.js';
import type { RuleClusterTopics as ClusterTopics } from '../rules/kind.js';
import { ruleKey, rulesForPod } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { Logger } from '../server/log.js';
import { runCycle } from './cycle.js';
import {
  buildCandidates,
  type Decision,
  type DecisionResult,
  decisionRules,
  scheduledMessage,
  unschedulableMessage,
} from './explain.js';
import { ExtenderEngine } from './extender-engine.js';
import { type Profile, runPostBind, runPreBind, runReserve, runUnreserve } from './framework/runtime.js';
import { Snapshot } from './framework/snapshot.js';
import type { CycleContext, CycleState } from './framework/types.js';
import { DecisionHistory } from './history.js';
import { createSchedulerMetrics, type SchedulerMetrics } from './metrics.js';
import { PlacementLog } from './placement-log.js';
import { Preemption } from './preemption.js';
import { buildProfile, extenderProfileConfig } from './profile/build.js';
import type { PluginDeps } from './profile/registry.js';
import { type PendingPod, type QueuedPod, SchedulingQueue } from './queue.js';
import { acquireToken, TokenBucket } from './ratelimit.js';
import { loadDropped, nodeChangeMatters, podSpecChanged, ruleChangeMatters } from './requeue.js';
import { type SimulationResult, simulateRule } from './simulate.js';
import {
  claimChangeMatters,
  csiNodeChangeMatters,
  storageClassChangeMatters,
  storageViewOf,
  volumeChangeMatters,
} from './storage-events.js';
import type { SchedulerDeps, SchedulerOptions, SchedulerStatus } from './types.js';

export type {
  Leadership,
  SchedulerDeps,
  SchedulerOptions,
  SchedulerStatus,
} from './types.js';

type DecisionBase = Omit<Decision, 'result' | 'message' | 'latencyMs' | 'e2eLatencyMs'>;

const DEFAULT_MAX_BINDS_IN_FLIGHT = 512;
const DEFAULT_FAILED_EVENT_INTERVAL_MS = 30_000;
const DEFAULT_LEADER_SETTLE_MS = 2000;
/** A bind whose outcome is unknown (timeout, 5xx) stays assumed this long, waiting for the watch. */
const UNCONFIRMED_BIND_MS = 10_000;
const STOP_GRACE_MS = 10_000;

const NOOP_METRICS: SchedulerMetrics = { attempt() {}, scheduled() {} };

interface Cycle {
  ctx: CycleContext;
  state: CycleState;
}

export class Scheduler {
  readonly history: DecisionHistory;
  readonly profile: Profile;
  /** kube-scheduler's extender calls, decided over this scheduler's state (src/extender serves them). */
  readonly extender: ExtenderEngine;
  /** Every node with its bound and assumed pods, kept from the cache's events (framework/snapshot.ts). */
  readonly snapshot = new Snapshot();
  private readonly queue: SchedulingQueue;
  private readonly placements: PlacementLog;
  /** Nominations and evictions around PostFilter (DefaultPreemption). */
  private readonly preemption: Preemption;
  private readonly bindBucket: TokenBucket;
  private readonly decisions: EventBus<{ decision: Decision }>;
  private readonly metrics: SchedulerMetrics;
  private readonly now: () => number;
  private readonly opts: SchedulerOptions;
  private readonly log: Logger;
  private readonly subscriptions: (() => void)[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly lastFailedEvent = new Map<string, { message: string; at: number }>();
  /** Pods whose bind outcome is unknown: assumed until the watch shows them bound, or this deadline. */
  private readonly unconfirmed = new Map<string, number>();
  private ruleList: NodeLoadRule[] | undefined;
  /** Where the next sampled cycle starts filtering (kube-scheduler's nextStartNodeIndex). */
  private nextStartNodeIndex = 0;
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
    this.preemption = new Preemption(deps.api, this.opts.schedulerName);
    const pluginDeps: PluginDeps = {
      placements: this.placements,
      ...(this.opts.burst ? { burst: this.opts.burst } : {}),
      ...(this.opts.weights ? { loadWeights: this.opts.weights } : {}),
      storage: storageViewOf(deps.cache),
      ...(deps.volumeBinder ? { volumeBinder: deps.volumeBinder } : {}),
      onVolumeRollbackError: (err) => this.log.warn({ err }, 'rolling back volume binding writes failed'),
      disruptionBudgets: () => deps.cache.disruptionBudgets.values(),
    };
    this.profile = deps.profile ?? buildProfile(this.opts.schedulerName, this.opts.profileConfig, pluginDeps);
    this.bindBucket = new TokenBucket({ qps: this.opts.bindQps, burst: this.opts.bindBurst, now: this.now });
    this.extender = new ExtenderEngine({
      profile: buildProfile(
        this.opts.schedulerName,
        extenderProfileConfig(this.opts.profileConfig),
        pluginDeps,
      ),
      snapshot: this.snapshot,
      cache: deps.cache,
      loads: deps.loads,
      api: deps.api,
      bindBucket: this.bindBucket,
      rules: () => this.rules(),
      assume: (pod, node, rules) => this.assume(pod, node, rules),
      unassume: (key) => this.unassume(key),
      isAssumed: (key) => this.snapshot.isAssumed(key) || deps.loads.isAssumed(key),
      publish: (d) => this.publish(d),
      instance: this.instance(),
      now: this.now,
    });
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
    // The snapshot hears every change first, so a pod event's handlers below see it applied.
    for (const node of cache.nodes.values()) this.snapshot.setNode(node);
    for (const pod of cache.pods.values()) this.snapshot.upsertPod(pod);
    for (const pod of cache.pods.values()) this.preemption.onPod({ type: 'add', new: pod });
    this.subscriptions.push(
      cache.bus.on('node', (c) => {
        if (c.new) this.snapshot.setNode(c.new);
        else if (c.old) this.snapshot.deleteNode(c.old.name);
      }),
      cache.bus.on('pod', (c) => {
        if (c.new) this.snapshot.upsertPod(c.new);
        else if (c.old) this.snapshot.deletePod(c.old);
      }),
      cache.bus.on('pod', (c) => this.preemption.onPod(c)),
      cache.bus.on('pod', (c) => this.onPod(c)),
      cache.bus.on('node', (c) => {
        if (nodeChangeMatters(c.old, c.new)) this.moveAll();
      }),
      cache.bus.on('rule', (c) => {
        this.ruleList = undefined;
        if (ruleChangeMatters(c.old?.rule, c.new?.rule)) this.moveAll();
      }),
      // Claims, PVs, StorageClasses and CSINodes the volume plugins wait for.
      cache.bus.on('claim', (c) => {
        if (claimChangeMatters(c)) this.moveAll();
      }),
      cache.bus.on('volume', (c) => {
        if (volumeChangeMatters(c)) this.moveAll();
      }),
      cache.bus.on('storageClass', (c) => {
        if (storageClassChangeMatters(c)) this.moveAll();
      }),
      cache.bus.on('csiNode', (c) => {
        if (csiNodeChangeMatters(c)) this.moveAll();
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
      profile: this.profile,
      snapshot: this.snapshot,
      loads: loads.all(),
      pendingPods: pending,
      rules: this.rules(),
      loadOptions: loads.options,
      namespaces: cache.namespaces,
      now: this.now(),
    });
  }

  // ---- leadership ----

  private becomeLeader(): void {
    // Extender mode: kube-scheduler places the pods of this schedulerName; the loop would race it.
    if (this.leading || !this.running || this.opts.native === false) return;
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
    this.unconfirmed.clear();
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

  /** Ours, unbound, alive, and let through by the PreEnqueue plugins (SchedulingGates). */
  private isPendingOurs(pod: PodInfo): boolean {
    if (pod.schedulerName !== this.opts.schedulerName || pod.nodeName || pod.terminal || pod.deleting)
      return false;
    for (const p of this.profile.preEnqueue) if (p.preEnqueue(pod)) return false;
    return true;
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
    // Never place a pod the cache shows bound (or gone, or someone else's).
    if (!pod || !this.isPendingOurs(pod)) {
      this.queue.delete(key);
      return;
    }
    if (this.snapshot.isAssumed(key) || loads.isAssumed(key)) {
      // A bind for it is still in flight (or its outcome unknown): look again after a backoff rather
      // than dropping the entry — if that bind fails, the pod must still be in the queue.
      const deadline = this.unconfirmed.get(key);
      if (deadline === undefined || started < deadline) {
        this.queue.requeueAfterError(key, 'waiting for the outcome of a previous bind');
        return;
      }
      this.log.warn({ pod: key }, 'bind outcome never confirmed by the watch; scheduling again');
      this.unassume(key);
    }
    const rules = rulesForPod(this.rules(), pod);
    // A nominated pod goes to its nominated node when that fits (upstream's evaluateNominatedNode):
    // every node is filtered for it, so the nominated one is never left out of a sample.
    const nominated = this.preemption.nominatedNode(pod);
    const { ctx, state, verdicts, ranked, examined, nextStart } = runCycle({
      profile: this.profile,
      pod,
      snapshot: this.snapshot,
      rules,
      loads: loads.all(),
      loadOptions: loads.options,
      namespaces: cache.namespaces,
      nominated: this.preemption.nominator,
      ...(nominated ? {} : { sampleFrom: this.nextStartNodeIndex }),
      now: started,
    });
    if (!nominated) this.nextStartNodeIndex = nextStart;
    const totalNodes = this.snapshot.size;
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
      totalNodes,
      examinedNodes: examined,
      feasibleNodes: ranked.length,
      candidates: buildCandidates(verdicts, ranked),
      reportingInstance: this.instance(),
      engine: 'native',
    };
    const best = (nominated && ranked.find((r) => r.node === nominated)) || ranked[0];
    if (!best) {
      const message = unschedulableMessage(totalNodes, verdicts);
      const { sentence, record } = this.preemption.run(this.profile, state, ctx, verdicts);
      const failed = record ? { ...base, preemption: record } : base;
      this.failUnschedulable(entry, pod, failed, sentence ? `${message} ${sentence}` : message);
      return;
    }
    const cycle: Cycle = { ctx, state };
    this.assume(pod, best.node, rules);
    const refused = runReserve(this.profile, state, ctx, best.node);
    if (refused) {
      this.unassume(key);
      this.failUnschedulable(entry, pod, { ...base, node: best.node }, `Reserve failed: ${refused}`);
      return;
    }
    const bind = this.bind(entry, pod, { ...base, node: best.node }, cycle, generation, signal).catch(
      (err: unknown) => {
        this.log.error({ err, pod: key }, 'bind attempt failed unexpectedly; requeued');
        this.unreserve(cycle, key, best.node);
        this.retryAfterError(key, `internal error: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
    this.inFlight.add(bind);
    void bind.finally(() => {
      this.inFlight.delete(bind);
      this.wake();
    });
  }

  private failUnschedulable(entry: QueuedPod, pod: PodInfo, base: DecisionBase, message: string): void {
    const key = entry.key;
    this.queue.requeueUnschedulable(key, message);
    this.counters.unschedulable++;
    const d = this.finish(base, 'unschedulable', message, entry);
    this.deps.api.markUnschedulable(pod, message);
    if (this.failedEventDue(key, message)) this.deps.api.recordDecision(d);
  }

  private assume(pod: PodInfo, node: string, rules: readonly NodeLoadRule[]): void {
    const key = podKey(pod);
    this.snapshot.assume(pod, node);
    this.deps.loads.assume(pod, node);
    this.placements.record(key, node, rules.map(ruleKey));
  }

  private unreserve(cycle: Cycle, key: string, node: string): void {
    runUnreserve(this.profile, cycle.state, cycle.ctx, node);
    this.unassume(key);
  }

  /** Requeues after an error; a pod whose entry went away meanwhile (a leadership flap) is re-added. */
  private retryAfterError(key: string, message: string): void {
    const pod = this.deps.cache.pods.get(key);
    if (!pod || !this.leading || !this.isPendingOurs(pod)) {
      this.queue.delete(key);
      return;
    }
    this.queue.retryAfterError(pod, message);
    this.wake();
  }

  private async bind(
    entry: QueuedPod,
    pod: PodInfo,
    base: DecisionBase & { node: string },
    cycle: Cycle,
    generation: number,
    signal: AbortSignal,
  ): Promise<void> {
    const key = entry.key;
    const node = base.node;
    try {
      await acquireToken(this.bindBucket, signal);
    } catch {
      this.unreserve(cycle, key, node);
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
      this.unreserve(cycle, key, node);
      this.queue.delete(key);
      if (current && this.leading && this.isPendingOurs(current)) this.queue.add(current);
      return;
    }
    if (!this.deps.cache.nodes.has(node)) {
      this.unreserve(cycle, key, node);
      this.counters.failed++;
      this.retryAfterError(key, `node ${node} was deleted before the bind`);
      const d = this.finish(base, 'error', `Binding rejected: node ${node} no longer exists`, entry);
      this.deps.api.recordDecision(d);
      return;
    }
    const preBindError = await runPreBind(this.profile, cycle.state, cycle.ctx, node, signal);
    if (preBindError) {
      this.unreserve(cycle, key, node);
      this.counters.failed++;
      this.retryAfterError(key, preBindError);
      this.deps.api.recordDecision(this.finish(base, 'error', `PreBind failed: ${preBindError}`, entry));
      return;
    }
    const outcome = await this.deps.api.bind(pod, node);
    switch (outcome.kind) {
      case 'bound': {
        this.unconfirmed.delete(key);
        this.queue.done(key);
        this.lastFailedEvent.delete(key);
        this.counters.bound++;
        runPostBind(this.profile, cycle.state, cycle.ctx, node);
        const d = this.finish(base, 'scheduled', scheduledMessage(pod.namespace, pod.name, node), entry);
        this.metrics.scheduled(d.e2eLatencyMs / 1000, d.attempts);
        this.deps.api.recordDecision(d);
        return;
      }
      case 'already-bound':
      case 'pod-gone': {
        this.unreserve(cycle, key, node);
        this.queue.delete(key);
        if (outcome.kind === 'already-bound') this.counters.conflicts++;
        this.finish(base, 'error', `Binding rejected: ${outcome.message}`, entry, false);
        return;
      }
      case 'failed': {
        this.counters.failed++;
        if (outcome.status === undefined || outcome.status >= 500) {
          // The bind may have committed with its response lost: the headroom stays taken until the
          // watch shows the pod (bound or not), or the deadline passes.
          this.unconfirmed.set(key, this.now() + UNCONFIRMED_BIND_MS);
        } else {
          this.unreserve(cycle, key, node);
        }
        this.retryAfterError(key, `binding rejected: ${outcome.message}`);
        const d = this.finish(base, 'error', `Binding rejected: ${outcome.message}`, entry);
        this.deps.api.recordDecision(d);
        this.log.warn({ pod: key, node, err: outcome.message }, 'bind failed; requeued');
        return;
      }
    }
  }

  private unassume(key: string): void {
    this.unconfirmed.delete(key);
    this.snapshot.forget(key);
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
    const started = Date.parse(base.time);
    const d: Decision = {
      ...base,
      result,
      message,
      latencyMs: Math.max(base.algorithmMs, end - started),
      e2eLatencyMs: end - entry.firstSeen,
    };
    if (count) this.metrics.attempt(result, d.latencyMs / 1000);
    this.publish(d);
    return d;
  }

  /** Into the history and to every subscriber, whichever engine decided. */
  private publish(d: Decision): void {
    this.lastDecisionAt = this.now();
    this.history.add(d);
    this.decisions.emit('decision', d);
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
        this.queue.add(pod, !c.old || podSpecChanged(c.old, pod));
        this.wake();
      } else {
        this.queue.delete(key);
        if (pod.nodeName) this.unconfirmed.delete(key);
        if (pod.nodeName || pod.deleting || pod.terminal) this.lastFailedEvent.delete(key);
      }
    } else if (c.old) {
      const key = podKey(c.old);
      this.queue.delete(key);
      this.lastFailedEvent.delete(key);
      // A bound pod going away frees room; so does a preemption victim (even one not bound yet).
      if (this.preemption.victimGone(c.old) || c.old.nodeName) this.moveAll();
    }
  }

  private moveAll(): void {
    if (!this.leading) return;
    this.queue.moveAllToActiveOrBackoff();
    this.wake();
  }
}

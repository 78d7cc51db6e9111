/**
 * The scheduling loop. Only the leader schedules. Each cycle pops one pod, filters and scores every node
 * against the tracker's loads — read synchronously, so nothing can change them mid-cycle: one immutable
 * snapshot per cycle — assumes the pod onto the best node at once (the next cycle already counts it) and
 * binds asynchronously, with many binds in flight under the gateway's own rate limiter. A failed bind
 * takes the assumption back and requeues; a 409 "already assigned" means another scheduler instance
 * bound it first, which is final.
 *
 * This file: the Scheduler's lifecycle, leadership and the loop. One cycle is in schedule-one.ts, the
 * bind in bind-cycle.ts, what cluster changes do to the snapshot and the queue in cluster-reactions.ts,
 * and where decisions end (history, subscribers, metrics, counters, Events' rate limit) in
 * decision-recorder.ts.
 */
import type { PodInfo } from '../cluster/model.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { Logger } from '../server/log.js';
import { BindingCycle } from './bind-cycle.js';
import { addAllEventHandlers } from './cluster-reactions.js';
import { DecisionRecorder } from './decision-recorder.js';
import type { Decision } from './explain.js';
import { ExtenderEngine } from './extender-engine.js';
import type { Profile } from './framework/runtime.js';
import { Snapshot } from './framework/snapshot.js';
import { DecisionHistory } from './history.js';
import { createSchedulerMetrics, type SchedulerMetrics } from './metrics.js';
import { PENDING_RESYNC_MS, PendingResync } from './pending-resync.js';
import { PlacementLog } from './placement-log.js';
import { Preemption } from './preemption.js';
import { buildProfile, extenderProfileConfig } from './profile/build.js';
import type { PluginDeps } from './profile/registry.js';
import { type PendingPod, SchedulingQueue } from './queue.js';
import { TokenBucket } from './ratelimit.js';
import { SchedulingCycle } from './schedule-one.js';
import { type SimulationResult, simulateRule } from './simulate.js';
import { storageViewOf } from './storage-events.js';
import type { SchedulerDeps, SchedulerOptions, SchedulerStatus } from './types.js';

export type { Leadership, SchedulerDeps, SchedulerOptions, SchedulerStatus } from './types.js';

const DEFAULT_MAX_BINDS_IN_FLIGHT = 512;
const DEFAULT_LEADER_SETTLE_MS = 2000;
const STOP_GRACE_MS = 10_000;

const NOOP_METRICS: SchedulerMetrics = { attempt() {}, algorithmCpu() {}, scheduled() {}, resynced() {} };

export class Scheduler {
  readonly history: DecisionHistory;
  readonly profile: Profile;
  /** kube-scheduler's extender calls, decided over this scheduler's state (src/extender serves them). */
  readonly extender: ExtenderEngine;
  /** Every node with its bound and assumed pods, kept from the cache's events (framework/snapshot.ts). */
  readonly snapshot = new Snapshot();
  private readonly queue: SchedulingQueue;
  /** Nominations and evictions around PostFilter (DefaultPreemption). */
  private readonly preemption: Preemption;
  /** One popped pod: filter, score, assume, Reserve (schedule-one.ts). */
  private readonly schedulingCycle: SchedulingCycle;
  /** Assumptions and binds (bind-cycle.ts). */
  private readonly binding: BindingCycle;
  /** History, subscribers, metrics and counters of the decisions (decision-recorder.ts). */
  private readonly recorder: DecisionRecorder;
  private readonly metrics: SchedulerMetrics;
  private resyncTimer: NodeJS.Timeout | undefined;
  private readonly pendingResync = new PendingResync();
  private readonly now: () => number;
  private readonly opts: SchedulerOptions;
  private readonly log: Logger;
  private readonly subscriptions: (() => void)[] = [];
  private ruleList: NodeLoadRule[] | undefined;
  private running = false;
  private leading = false;
  private cacheSynced = false;
  private generation = 0;
  private abort: AbortController | undefined;
  private waiter: (() => void) | undefined;
  private startedAt: number | undefined;

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
    const placements = new PlacementLog({ now: this.now });
    this.preemption = new Preemption(deps.api, this.opts.schedulerName);
    const pluginDeps: PluginDeps = {
      placements,
      ...(this.opts.burst ? { burst: this.opts.burst } : {}),
      ...(this.opts.weights ? { loadWeights: this.opts.weights } : {}),
      storage: storageViewOf(deps.cache),
      ...(deps.volumeBinder ? { volumeBinder: deps.volumeBinder } : {}),
      onVolumeRollbackError: (err) => this.log.warn({ err }, 'rolling back volume binding writes failed'),
      disruptionBudgets: () => deps.cache.disruptionBudgets.values(),
      workloads: deps.cache,
      deviceClasses: deps.cache.deviceClasses,
    };
    this.profile = deps.profile ?? buildProfile(this.opts.schedulerName, this.opts.profileConfig, pluginDeps);
    const bindBucket = new TokenBucket({ qps: this.opts.bindQps, burst: this.opts.bindBurst, now: this.now });
    const metrics = deps.registry
      ? createSchedulerMetrics(deps.registry, {
          queueLengths: () => this.queue.lengths(),
          bindsInFlight: () => this.binding.inFlightCount,
        })
      : NOOP_METRICS;
    this.metrics = metrics;
    this.recorder = new DecisionRecorder({
      history: this.history,
      metrics,
      log: this.log,
      now: this.now,
      failedEventIntervalMs: this.opts.failedEventIntervalMs,
    });
    // What the scheduling and the binding cycle both work on.
    const shared = {
      profile: this.profile,
      snapshot: this.snapshot,
      cache: deps.cache,
      loads: deps.loads,
      api: deps.api,
      queue: this.queue,
      recorder: this.recorder,
      isPendingOurs: (pod: PodInfo) => this.isPendingOurs(pod),
      now: this.now,
    };
    this.binding = new BindingCycle({
      ...shared,
      placements,
      bindBucket,
      metrics,
      log: this.log,
      isCurrent: (generation) => generation === this.generation,
      leading: () => this.leading,
      wake: () => this.wake(),
    });
    this.schedulingCycle = new SchedulingCycle({
      ...shared,
      preemption: this.preemption,
      binding: this.binding,
      rules: () => this.rules(),
      instance: this.instance(),
      metrics,
    });
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
      bindBucket,
      rules: () => this.rules(),
      assume: (pod, node, rules) => this.binding.assume(pod, node, rules),
      unassume: (key) => this.binding.unassume(key),
      isAssumed: (key) => this.snapshot.isAssumed(key) || deps.loads.isAssumed(key),
      publish: (d) => this.recorder.publish(d),
      instance: this.instance(),
      now: this.now,
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.startedAt = this.now();
    const { cache, loads, leader } = this.deps;
    this.subscriptions.push(
      ...addAllEventHandlers({
        cache,
        loads,
        snapshot: this.snapshot,
        preemption: this.preemption,
        queue: this.queue,
        binding: this.binding,
        recorder: this.recorder,
        leading: () => this.leading,
        isPendingOurs: (pod) => this.isPendingOurs(pod),
        wake: () => this.wake(),
        rulesChanged: () => {
          this.ruleList = undefined;
        },
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
      this.binding.settled(),
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
    return this.recorder.onDecision(fn);
  }

  decision(id: string): Decision | undefined {
    return this.history.get(id);
  }

  /** Pods to place or binds in flight: the loop's time is wanted (the user port yields to it). */
  hasWork(): boolean {
    if (!this.leading) return false;
    const q = this.queue.lengths();
    return q.active > 0 || q.inFlight > 0 || this.binding.inFlightCount > 0;
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
      bindsInFlight: this.binding.inFlightCount,
      ...this.recorder.counters,
      historySize: this.history.size,
    };
    if (this.startedAt !== undefined) status.startedAt = new Date(this.startedAt).toISOString();
    const lastDecisionAt = this.recorder.lastDecisionAt;
    if (lastDecisionAt !== undefined) status.lastDecisionTime = new Date(lastDecisionAt).toISOString();
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
    clearInterval(this.resyncTimer);
    this.resyncTimer = undefined;
    this.pendingResync.reset();
    this.queue.clear();
    this.recorder.forgetFailedEvents();
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
    clearInterval(this.resyncTimer);
    this.resyncTimer = setInterval(
      () => this.resyncPending(),
      this.opts.pendingResyncMs ?? PENDING_RESYNC_MS,
    );
    this.resyncTimer.unref();
    const maxInFlight = this.opts.maxBindsInFlight ?? DEFAULT_MAX_BINDS_IN_FLIGHT;
    while (generation === this.generation) {
      this.queue.flush();
      const entry = this.binding.inFlightCount < maxInFlight ? this.queue.pop() : undefined;
      if (!entry) {
        await this.waitForWork();
        continue;
      }
      try {
        this.schedulingCycle.scheduleOne(entry, generation, signal);
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

  /**
   * Queues the pending pods of ours that neither the queue nor the binding cycle held at this check and
   * the one before (pending-resync.ts).
   */
  resyncPending(): number {
    if (!this.leading) return 0;
    const lost = this.pendingResync.check(this.deps.cache.unscheduledPods(), {
      isPendingOurs: (pod) => this.isPendingOurs(pod),
      isTracked: (key) =>
        this.queue.has(key) || this.snapshot.isAssumed(key) || this.deps.loads.isAssumed(key),
    });
    if (lost.length === 0) return 0;
    this.log.warn(
      { pods: lost.length, first: lost.slice(0, 10).map((p) => `${p.namespace}/${p.name}`) },
      'pending pods found neither queued nor binding (a missed pod event); queued',
    );
    for (const pod of lost) this.queue.add(pod);
    this.metrics.resynced(lost.length);
    this.wake();
    return lost.length;
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

  private instance(): string {
    return `${this.opts.schedulerName}-${this.opts.identity}`;
  }
}

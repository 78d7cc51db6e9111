/**
 * The binding cycle (kube-scheduler's bindingCycle), run asynchronously once the scheduling cycle has
 * assumed a pod onto its node and Reserve passed: a token of the gateway's bind rate limiter, PreBind,
 * the bind, PostBind — with many binds in flight at once. A failed bind takes the assumption back
 * (Unreserve) and requeues; a 409 "already assigned" means another scheduler instance bound it first,
 * which is final.
 *
 * It also owns the assumptions themselves (kube-scheduler's AssumePod and ForgetPod): a placed pod
 * counts in the snapshot, the load tracker and the burst log at once, for the loop and the extender
 * alike, until the cache shows it bound or the assumption is taken back.
 */
import { type PodInfo, podKey } from '../cluster/model.js';
import { ruleKey } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { Logger } from '../server/log.js';
import type { SchedulerApi } from './binder.js';
import type { DecisionBase, DecisionRecorder } from './decision-recorder.js';
import { scheduledMessage } from './explain.js';
import type { Profile } from './framework/runtime.js';
import { preBindHasWork, runPostBind, runPreBind, runUnreserve } from './framework/runtime-bind.js';
import type { Snapshot } from './framework/snapshot.js';
import type { CycleContext, CycleState } from './framework/types.js';
import type { SchedulerMetrics } from './metrics.js';
import type { PlacementLog } from './placement-log.js';
import type { QueuedPod, SchedulingQueue } from './queue.js';
import { acquireToken, type TokenBucket } from './ratelimit.js';
import type { SchedulerDeps } from './types.js';

/** A bind whose outcome is unknown (timeout, 5xx) stays assumed this long, waiting for the watch. */
const UNCONFIRMED_BIND_MS = 10_000;

/** The scheduling cycle's context and state, for the plugins' Unreserve, PreBind and PostBind. */
interface Cycle {
  ctx: CycleContext;
  state: CycleState;
}

/** What the scheduling cycle hands over: the pod it assumed onto `base.node` and reserved. */
interface AssumedPod {
  entry: QueuedPod;
  pod: PodInfo;
  /** The decision so far. */
  base: DecisionBase & { node: string };
  cycle: Cycle;
}

export interface BindingCycleDeps {
  profile: Profile;
  snapshot: Snapshot;
  cache: Pick<SchedulerDeps['cache'], 'pods' | 'nodes'>;
  loads: Pick<SchedulerDeps['loads'], 'assume' | 'forget' | 'isAssumed'>;
  api: Pick<SchedulerApi, 'bind' | 'recordDecision' | 'expectNode' | 'clearNomination'>;
  queue: SchedulingQueue;
  placements: PlacementLog;
  /** The gateway's API rate limiter for binds (the extender's binds take from it too). */
  bindBucket: TokenBucket;
  recorder: Pick<DecisionRecorder, 'counters' | 'finish' | 'forgetFailedEvent'>;
  metrics: SchedulerMetrics;
  log: Logger;
  now(): number;
  /** Whether the loop that placed a pod (its leadership term) is still the current one. */
  isCurrent(generation: number): boolean;
  leading(): boolean;
  /** Ours, unbound, alive, and let through by the PreEnqueue plugins. */
  isPendingOurs(pod: PodInfo): boolean;
  /** Wakes the loop if it waits for work. */
  wake(): void;
}

export class BindingCycle {
  private readonly inFlight = new Set<Promise<void>>();
  /** Pods whose bind outcome is unknown: assumed until the watch shows them bound, or this deadline. */
  private readonly unconfirmed = new Map<string, number>();

  constructor(private readonly deps: BindingCycleDeps) {}

  /** Binds issued or waiting for a token. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Settles once every bind in flight now has. */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.inFlight]);
  }

  /** Binds the pod in the background, for the loop of this `generation`; the loop is woken when it ends. */
  run(assumed: AssumedPod, generation: number, signal: AbortSignal): void {
    const { entry, base, cycle } = assumed;
    const key = entry.key;
    const bind = this.bind(assumed, generation, signal).catch((err: unknown) => {
      this.deps.log.error({ err, pod: key }, 'bind attempt failed unexpectedly; requeued');
      this.unreserve(cycle, key, base.node);
      this.retryAfterError(key, `internal error: ${err instanceof Error ? err.message : String(err)}`);
    });
    this.inFlight.add(bind);
    void bind.finally(() => {
      this.inFlight.delete(bind);
      this.deps.wake();
    });
  }

  assume(pod: PodInfo, node: string, rules: readonly NodeLoadRule[]): void {
    const key = podKey(pod);
    this.deps.snapshot.assume(pod, node);
    this.deps.loads.assume(pod, node);
    this.deps.placements.record(key, node, rules.map(ruleKey));
  }

  unassume(key: string): void {
    this.unconfirmed.delete(key);
    this.deps.snapshot.forget(key);
    this.deps.loads.forget(key);
    this.deps.placements.remove(key);
  }

  /**
   * Whether the pod is assumed with a bind still in flight, or one of unknown outcome before its
   * deadline. One whose outcome the watch never confirmed by then is given up on: unassumed.
   */
  awaitingBind(key: string, now: number): boolean {
    if (!this.deps.snapshot.isAssumed(key) && !this.deps.loads.isAssumed(key)) return false;
    const deadline = this.unconfirmed.get(key);
    if (deadline === undefined || now < deadline) return true;
    this.deps.log.warn({ pod: key }, 'bind outcome never confirmed by the watch; scheduling again');
    this.unassume(key);
    return false;
  }

  /** The watch shows the pod bound: its bind's outcome is known. */
  confirmed(key: string): void {
    this.unconfirmed.delete(key);
  }

  private unreserve(cycle: Cycle, key: string, node: string): void {
    runUnreserve(this.deps.profile, cycle.state, cycle.ctx, node);
    this.unassume(key);
  }

  /** Requeues after an error; a pod whose entry went away meanwhile (a leadership flap) is re-added. */
  private retryAfterError(key: string, message: string): void {
    const { cache, queue } = this.deps;
    const pod = cache.pods.get(key);
    if (!pod || !this.deps.leading() || !this.deps.isPendingOurs(pod)) {
      queue.delete(key);
      return;
    }
    queue.retryAfterError(pod, message);
    this.deps.wake();
  }

  private async bind(
    { entry, pod, base, cycle }: AssumedPod,
    generation: number,
    signal: AbortSignal,
  ): Promise<void> {
    const { profile, cache, api, queue, recorder } = this.deps;
    const key = entry.key;
    const node = base.node;
    try {
      await acquireToken(this.deps.bindBucket, signal);
    } catch {
      this.unreserve(cycle, key, node);
      return;
    }
    // The world may have moved while we waited for a token.
    const current = cache.pods.get(key);
    if (
      !this.deps.isCurrent(generation) ||
      !current ||
      current.uid !== pod.uid ||
      !this.deps.isPendingOurs(current)
    ) {
      this.unreserve(cycle, key, node);
      queue.delete(key);
      if (current && this.deps.leading() && this.deps.isPendingOurs(current)) queue.add(current);
      return;
    }
    if (!cache.nodes.has(node)) {
      this.unreserve(cycle, key, node);
      recorder.counters.failed++;
      this.retryAfterError(key, `node ${node} was deleted before the bind`);
      const d = recorder.finish(base, 'error', `Binding rejected: node ${node} no longer exists`, entry);
      api.recordDecision(d);
      return;
    }
    // NominatedNodeNameForExpectation (beta, on since v1.35): a pod whose PreBind will take a while (its
    // volumes bound or provisioned first) is nominated to its node meanwhile; a failure clears that.
    const expecting = preBindHasWork(profile, cycle.state, cycle.ctx, node);
    if (expecting) await api.expectNode(pod, node);
    const preBindError = await runPreBind(profile, cycle.state, cycle.ctx, node, signal);
    if (preBindError) {
      if (expecting) api.clearNomination(pod);
      this.unreserve(cycle, key, node);
      recorder.counters.failed++;
      this.retryAfterError(key, preBindError);
      api.recordDecision(recorder.finish(base, 'error', `PreBind failed: ${preBindError}`, entry));
      // As a failed bind: a refused write (VolumeBinding's, without its permission) must show in the log.
      this.deps.log.warn({ pod: key, node, err: preBindError }, 'PreBind failed; requeued');
      return;
    }
    const outcome = await api.bind(pod, node);
    switch (outcome.kind) {
      case 'bound': {
        this.unconfirmed.delete(key);
        queue.done(key);
        recorder.forgetFailedEvent(key);
        recorder.counters.bound++;
        runPostBind(profile, cycle.state, cycle.ctx, node);
        const d = recorder.finish(base, 'scheduled', scheduledMessage(pod.namespace, pod.name, node), entry);
        this.deps.metrics.scheduled(d.e2eLatencyMs / 1000, d.attempts);
        api.recordDecision(d);
        return;
      }
      case 'already-bound':
      case 'pod-gone': {
        this.unreserve(cycle, key, node);
        queue.delete(key);
        if (outcome.kind === 'already-bound') recorder.counters.conflicts++;
        recorder.finish(base, 'error', `Binding rejected: ${outcome.message}`, entry, false);
        return;
      }
      case 'failed': {
        recorder.counters.failed++;
        if (expecting) api.clearNomination(pod);
        if (outcome.status === undefined || outcome.status >= 500) {
          // The bind may have committed with its response lost: the headroom stays taken until the
          // watch shows the pod (bound or not), or the deadline passes.
          this.unconfirmed.set(key, this.deps.now() + UNCONFIRMED_BIND_MS);
        } else {
          this.unreserve(cycle, key, node);
        }
        this.retryAfterError(key, `binding rejected: ${outcome.message}`);
        const d = recorder.finish(base, 'error', `Binding rejected: ${outcome.message}`, entry);
        api.recordDecision(d);
        this.deps.log.warn({ pod: key, node, err: outcome.message }, 'bind failed; requeued');
        return;
      }
    }
  }
}

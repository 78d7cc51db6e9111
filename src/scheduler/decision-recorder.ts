/**
 * Where every decision ends, whichever engine made it (the loop, or the extender's bind): completed
 * with its latencies, counted for the attempt metrics, kept in the history and handed to every
 * subscriber. Also the scheduler's status counters, and the rate limit of FailedScheduling Events: a
 * pod that keeps failing for the same reason writes one Event per interval, not one per attempt.
 */
import { EventBus } from '../events/bus.js';
import type { Logger } from '../server/log.js';
import type { Decision, DecisionResult } from './explain.js';
import type { DecisionHistory } from './history.js';
import type { SchedulerMetrics } from './metrics.js';
import type { QueuedPod } from './queue.js';

/** A decision as the scheduling cycle leaves it: all but its outcome and latencies. */
export type DecisionBase = Omit<Decision, 'result' | 'message' | 'latencyMs' | 'e2eLatencyMs'>;

const DEFAULT_FAILED_EVENT_INTERVAL_MS = 30_000;

export interface DecisionRecorderDeps {
  history: DecisionHistory;
  metrics: SchedulerMetrics;
  log: Logger;
  now(): number;
  /** A repeated FailedScheduling Event with an unchanged message is written at most this often (default 30 s). */
  failedEventIntervalMs?: number;
}

export class DecisionRecorder {
  /** Since start: the attempts' outcomes in the scheduler's status. */
  readonly counters = { bound: 0, failed: 0, unschedulable: 0, conflicts: 0 };
  private readonly decisions: EventBus<{ decision: Decision }>;
  private readonly lastFailedEvent = new Map<string, { message: string; at: number }>();
  private readonly failedEventIntervalMs: number;
  private lastAt: number | undefined;

  constructor(private readonly deps: DecisionRecorderDeps) {
    this.failedEventIntervalMs = deps.failedEventIntervalMs ?? DEFAULT_FAILED_EVENT_INTERVAL_MS;
    this.decisions = new EventBus({
      onListenerError: (err) => deps.log.error({ err }, 'decision subscriber failed'),
    });
  }

  /** When the last decision (any result, either engine) was published. */
  get lastDecisionAt(): number | undefined {
    return this.lastAt;
  }

  /** Subscribes to every decision as it is made; the decision object is shared, do not mutate it. */
  onDecision(fn: (d: Decision) => void): () => void {
    return this.decisions.on('decision', fn);
  }

  /** Completes, records and publishes a decision; `count` = whether it is a scheduling attempt for metrics. */
  finish(
    base: DecisionBase,
    result: DecisionResult,
    message: string,
    entry: QueuedPod,
    count = true,
  ): Decision {
    const end = this.deps.now();
    const started = Date.parse(base.time);
    const d: Decision = {
      ...base,
      result,
      message,
      latencyMs: Math.max(base.algorithmMs, end - started),
      e2eLatencyMs: end - entry.firstSeen,
    };
    if (count) this.deps.metrics.attempt(result, d.latencyMs / 1000, base.algorithmMs / 1000);
    this.publish(d);
    return d;
  }

  /** Into the history and to every subscriber, whichever engine decided. */
  publish(d: Decision): void {
    this.lastAt = this.deps.now();
    this.deps.history.add(d);
    this.decisions.emit('decision', d);
  }

  /** Whether the pod's FailedScheduling Event with this message is due; if so, it counts as written now. */
  failedEventDue(key: string, message: string): boolean {
    const last = this.lastFailedEvent.get(key);
    const now = this.deps.now();
    if (last && last.message === message && now - last.at < this.failedEventIntervalMs) return false;
    this.lastFailedEvent.set(key, { message, at: now });
    return true;
  }

  /** The pod was bound, or is gone or done: its next failure, if any, is news. */
  forgetFailedEvent(key: string): void {
    this.lastFailedEvent.delete(key);
  }

  /** Forgets every pod's last FailedScheduling Event (on stepping down). */
  forgetFailedEvents(): void {
    this.lastFailedEvent.clear();
  }
}

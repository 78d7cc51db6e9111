/**
 * The scheduling queue, as kube-scheduler's: activeQ (priority, then arrival), backoffQ (failed pods wait
 * 1 s doubling to 10 s) and the unschedulable set (pods waiting for a relevant cluster change, flushed at
 * least every 30 s). Pure: time comes from the injected clock, and the caller decides when to flush.
 *
 * A popped pod is "in flight" until the caller reports the outcome (done / unschedulable / error).
 * A cluster change that arrives while a pod is in flight sends that pod to backoff rather than to the
 * unschedulable set, so a change that could have helped it is never missed (kube-scheduler's
 * moveRequestCycle).
 */
import type { PodInfo } from '../cluster/model.js';
import { podKey } from '../cluster/model.js';
import { Heap } from './heap.js';

export type QueueName = 'active' | 'backoff' | 'unschedulable';
type Where = QueueName | 'inFlight';

export interface QueueOptions {
  now: () => number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** An unschedulable pod is retried at least this often even without a relevant change. */
  unschedulableRetryMs?: number;
}

export interface QueueFailure {
  kind: 'unschedulable' | 'error';
  message: string;
  at: number;
}

/** A pending pod as the queue knows it; read-only for callers. */
export interface QueuedPod {
  readonly key: string;
  pod: PodInfo;
  /** When the queue first saw the pod (start of the end-to-end scheduling latency). */
  readonly firstSeen: number;
  /** When the pod last entered activeQ: orders pods of equal priority. */
  enqueuedAt: number;
  attempts: number;
  backoffUntil: number;
  lastFailure?: QueueFailure;
  where: Where;
  /** Internal bookkeeping: invalidates stale heap items, and detects moves during a pod's attempt. */
  version: number;
  popCycle: number;
  seq: number;
}

interface HeapItem {
  entry: QueuedPod;
  version: number;
}

export interface PendingPod {
  pod: string;
  namespace: string;
  queue: Where;
  /** Why it is pending: the last failure's message, or empty before the first attempt. */
  reason: string;
  /** ISO time the pod started pending (first seen by the queue). */
  since: string;
  attempts: number;
}

export const DEFAULT_INITIAL_BACKOFF_MS = 1000;
export const DEFAULT_MAX_BACKOFF_MS = 10_000;
export const DEFAULT_UNSCHEDULABLE_RETRY_MS = 30_000;

/** kube-scheduler's backoff: initial × 2^(attempts−1), capped. */
export function backoffDuration(attempts: number, initialMs: number, maxMs: number): number {
  if (attempts <= 0) return 0;
  const exp = Math.min(attempts - 1, 30);
  return Math.min(initialMs * 2 ** exp, maxMs);
}

export class SchedulingQueue {
  private readonly entries = new Map<string, QueuedPod>();
  /** Insertion order = time of entering the set, so the periodic flush stops at the first young entry. */
  private readonly unschedulable = new Map<string, QueuedPod>();
  private readonly active = new Heap<HeapItem>((a, b) => {
    const x = a.entry;
    const y = b.entry;
    if (x.pod.priority !== y.pod.priority) return x.pod.priority > y.pod.priority;
    if (x.enqueuedAt !== y.enqueuedAt) return x.enqueuedAt < y.enqueuedAt;
    return x.seq < y.seq;
  });
  private readonly backoff = new Heap<HeapItem>((a, b) =>
    a.entry.backoffUntil !== b.entry.backoffUntil
      ? a.entry.backoffUntil < b.entry.backoffUntil
      : a.entry.seq < b.entry.seq,
  );
  private readonly counts: Record<Where, number> = { active: 0, backoff: 0, unschedulable: 0, inFlight: 0 };
  private readonly now: () => number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly unschedulableRetryMs: number;
  private seq = 0;
  private schedulingCycle = 0;
  private moveRequestCycle = -1;

  constructor(opts: QueueOptions) {
    this.now = opts.now;
    this.initialBackoffMs = opts.initialBackoffMs ?? DEFAULT_INITIAL_BACKOFF_MS;
    this.maxBackoffMs = opts.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
    this.unschedulableRetryMs = opts.unschedulableRetryMs ?? DEFAULT_UNSCHEDULABLE_RETRY_MS;
  }

  /**
   * A pending pod was added or updated. New pods go to activeQ; an update of an unschedulable pod may be
   * what it waited for, so it is retried (after its backoff) — unless `relevant` is false (a status-only
   * update, such as our own PodScheduled patch); otherwise only the stored pod is refreshed.
   */
  add(pod: PodInfo, relevant = true): void {
    const key = podKey(pod);
    const existing = this.entries.get(key);
    if (existing) {
      existing.pod = pod;
      if (relevant && existing.where === 'unschedulable') this.moveToActiveOrBackoff(existing);
      return;
    }
    const now = this.now();
    const entry: QueuedPod = {
      key,
      pod,
      firstSeen: now,
      enqueuedAt: now,
      attempts: 0,
      backoffUntil: 0,
      where: 'active',
      version: 0,
      popCycle: -1,
      seq: this.seq++,
    };
    this.entries.set(key, entry);
    this.enter(entry, 'active');
  }

  /** The pod is gone, bound elsewhere, or no longer ours. */
  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.leave(entry);
    this.entries.delete(key);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get(key: string): QueuedPod | undefined {
    return this.entries.get(key);
  }

  /** The next pod to schedule, now in flight; undefined when activeQ is empty. */
  pop(): QueuedPod | undefined {
    for (;;) {
      const item = this.active.pop();
      if (!item) return undefined;
      const entry = item.entry;
      if (entry.version !== item.version || entry.where !== 'active') continue;
      this.counts.active--;
      entry.where = 'inFlight';
      entry.version++;
      entry.attempts++;
      entry.popCycle = ++this.schedulingCycle;
      this.counts.inFlight++;
      return entry;
    }
  }

  /** The attempt succeeded (the pod is bound): forget it. */
  done(key: string): void {
    this.delete(key);
  }

  /** No node fits: wait for a relevant change (or the periodic retry). */
  requeueUnschedulable(key: string, message: string): void {
    const entry = this.entries.get(key);
    if (entry?.where !== 'inFlight') return;
    const now = this.now();
    entry.lastFailure = { kind: 'unschedulable', message, at: now };
    entry.backoffUntil = now + backoffDuration(entry.attempts, this.initialBackoffMs, this.maxBackoffMs);
    if (this.moveRequestCycle >= entry.popCycle) this.place(entry, 'backoff');
    else this.place(entry, 'unschedulable');
  }

  /** The attempt failed for another reason (a bind error): retry after the backoff. */
  requeueAfterError(key: string, message: string): void {
    const entry = this.entries.get(key);
    if (entry?.where !== 'inFlight') return;
    const now = this.now();
    entry.lastFailure = { kind: 'error', message, at: now };
    entry.backoffUntil = now + backoffDuration(entry.attempts, this.initialBackoffMs, this.maxBackoffMs);
    this.place(entry, 'backoff');
  }

  /**
   * Retry after an error whether or not the pod still has an entry: a leadership flap clears the queue
   * while binds are in flight, and a pod whose old bind then fails must not be left without one.
   */
  retryAfterError(pod: PodInfo, message: string): void {
    const key = podKey(pod);
    const entry = this.entries.get(key);
    if (entry?.where === 'inFlight') {
      this.requeueAfterError(key, message);
      return;
    }
    if (entry) return;
    this.add(pod);
    const added = this.entries.get(key);
    if (!added) return;
    const now = this.now();
    added.attempts = 1;
    added.lastFailure = { kind: 'error', message, at: now };
    added.backoffUntil = now + backoffDuration(1, this.initialBackoffMs, this.maxBackoffMs);
    this.place(added, 'backoff');
  }

  /** Something that may make unschedulable pods fit happened: retry them all (after their backoff). */
  moveAllToActiveOrBackoff(): void {
    for (const entry of [...this.unschedulable.values()]) this.moveToActiveOrBackoff(entry);
    this.moveRequestCycle = this.schedulingCycle;
  }

  /** Backoff expired → activeQ; unschedulable for longer than the retry period → activeQ or backoffQ. */
  flush(): void {
    const now = this.now();
    for (;;) {
      const item = this.backoff.peek();
      if (!item) break;
      const entry = item.entry;
      if (entry.version !== item.version || entry.where !== 'backoff') {
        this.backoff.pop();
        continue;
      }
      if (entry.backoffUntil > now) break;
      this.backoff.pop();
      this.place(entry, 'active');
    }
    for (const entry of [...this.unschedulable.values()]) {
      if (now - (entry.lastFailure?.at ?? 0) < this.unschedulableRetryMs) break;
      this.moveToActiveOrBackoff(entry);
    }
  }

  /** When flush() next has something to do (for the caller's timer); undefined when nothing waits. */
  nextFlushAt(): number | undefined {
    let next: number | undefined;
    for (;;) {
      const item = this.backoff.peek();
      if (!item) break;
      if (item.entry.version !== item.version || item.entry.where !== 'backoff') {
        this.backoff.pop();
        continue;
      }
      next = item.entry.backoffUntil;
      break;
    }
    const oldest = this.unschedulable.values().next().value;
    if (oldest) {
      const at = (oldest.lastFailure?.at ?? 0) + this.unschedulableRetryMs;
      next = next === undefined ? at : Math.min(next, at);
    }
    return next;
  }

  lengths(): Record<Where, number> {
    return { ...this.counts };
  }

  /** Every pod the queue holds, in flight included, oldest first. */
  pending(): PendingPod[] {
    return [...this.entries.values()]
      .sort((a, b) => a.firstSeen - b.firstSeen || a.seq - b.seq)
      .map((e) => ({
        pod: e.pod.name,
        namespace: e.pod.namespace,
        queue: e.where,
        reason: e.lastFailure?.message ?? '',
        since: new Date(e.firstSeen).toISOString(),
        attempts: e.attempts,
      }));
  }

  /** Drops everything (on losing leadership: the next leader resyncs from the cache). */
  clear(): void {
    this.entries.clear();
    this.unschedulable.clear();
    this.active.clear();
    this.backoff.clear();
    for (const k of Object.keys(this.counts) as Where[]) this.counts[k] = 0;
  }

  private moveToActiveOrBackoff(entry: QueuedPod): void {
    this.place(entry, entry.backoffUntil > this.now() ? 'backoff' : 'active');
  }

  private leave(entry: QueuedPod): void {
    this.counts[entry.where]--;
    if (entry.where === 'unschedulable') this.unschedulable.delete(entry.key);
    entry.version++;
  }

  private place(entry: QueuedPod, to: QueueName): void {
    if (this.entries.get(entry.key) !== entry) return;
    this.leave(entry);
    this.enter(entry, to);
  }

  private enter(entry: QueuedPod, to: QueueName): void {
    entry.where = to;
    this.counts[to]++;
    if (to === 'active') {
      entry.enqueuedAt = this.now();
      this.active.push({ entry, version: entry.version });
    } else if (to === 'backoff') {
      this.backoff.push({ entry, version: entry.version });
    } else {
      this.unschedulable.set(entry.key, entry);
    }
    this.compact();
  }

  /** Lazy deletion leaves stale items behind; rebuild a heap when they outnumber the live ones. */
  private compact(): void {
    for (const [heap, where] of [
      [this.active, 'active'],
      [this.backoff, 'backoff'],
    ] as const) {
      if (heap.size <= 2 * this.counts[where] + 64) continue;
      const live: HeapItem[] = [];
      for (let item = heap.pop(); item; item = heap.pop()) {
        if (item.entry.version === item.version && item.entry.where === where) live.push(item);
      }
      for (const item of live) heap.push(item);
    }
  }
}

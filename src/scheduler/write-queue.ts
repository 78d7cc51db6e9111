/**
 * The scheduler's fire-and-forget writes (status patches, evictions, Events): rate-limited, a few in
 * flight, one slot per key (a newer write for the same key replaces the queued one), and writes of one
 * key in order: a key's next write waits until its running one is done, or the two could land the other
 * way round (an Event series' count 2 after its count 3).
 *
 * Two classes, as kube-scheduler keeps them apart: a pod's status patch (PodScheduled=False, the
 * nomination) and a preemption's eviction run on goroutines of their own there and are never dropped;
 * Events go through client-go's broadcaster, which drops them when its buffer is full. Here pod writes
 * are never dropped (one slot per pod, so they are bounded by the pods the cache holds) and run before
 * any queued Event; Events are dropped past `maxPendingEvents`, counted, and logged once per hundred.
 * Under a 20,000-pod burst the Scheduled Events alone fill the buffer: a dropped Event must not cost a
 * victim its eviction or a pod its condition.
 *
 * A backlog of Events recruits writers: one more per `eventsPerExtraWriter` queued, up to
 * `maxConcurrency`. Each of our Events carries its decision (then ~3.7 KB, now ~2.2 KB, against
 * kube-scheduler's ~1 KB), and at 5,000 nodes 4 writers at a time kept up with neither a 114 pods/s burst
 * nor a 173 pods/s drain: 20,901 of 40,000 Scheduled Events were dropped. The bucket still bounds the rate.
 *
 * Warnings (FailedScheduling and its series) go before Normal Events, and a Warning that finds the queue
 * full takes the place of the oldest queued Normal one: in a 5,000-node drain the API server stores fewer
 * Events than pods are bound, and the one Event a user reads to learn why a pod is still Pending must not
 * be lost behind thousands of "Successfully assigned".
 */
import type { Logger } from '../server/log.js';
import { acquireToken, type TokenBucket } from './ratelimit.js';

export type WriteKind = 'pod' | 'event';

export interface Write {
  key: string;
  /** `pod`: a status patch or an eviction, never dropped; `event`: best effort. */
  kind: WriteKind;
  /** An Event of type Warning: written before Normal ones, and displaces one when the queue is full. */
  warning?: boolean;
  run: () => Promise<void>;
}

export interface WriteQueueOptions {
  bucket: TokenBucket;
  /** Writes in flight at most while few Events are queued. */
  concurrency: number;
  /** Writes in flight at most however many Events are queued (default: `concurrency`). */
  maxConcurrency?: number;
  /** One more write in flight per this many queued Events, up to `maxConcurrency` (default 250). */
  eventsPerExtraWriter?: number;
  /** Queued Events beyond which a new one is dropped. */
  maxPendingEvents: number;
  log: Logger;
  /** How loud a failed write is logged. */
  failureLevel: (err: unknown) => 'warn' | 'debug';
  describeError: (err: unknown) => string;
  /** Told for each dropped Event (a metric). */
  onDrop?: () => void;
}

/** Queues in the order they are written: pod writes, then Warning Events, then Normal ones. */
type WriteClass = 'pod' | 'warning' | 'normal';
const classOf = (w: Write): WriteClass => (w.kind === 'pod' ? 'pod' : w.warning ? 'warning' : 'normal');

export class WriteQueue {
  private readonly pending: Record<WriteClass, Map<string, Write>> = {
    pod: new Map(),
    warning: new Map(),
    normal: new Map(),
  };
  private running = 0;
  /** Keys of the writes in flight: a queued write of one of them waits its turn. */
  private readonly runningKeys = new Set<string>();
  private idle: (() => void)[] = [];
  /** Events dropped since start. */
  dropped = 0;

  constructor(private readonly opts: WriteQueueOptions) {}

  /** False when the write was an Event and the queue already held `maxPendingEvents` of them. */
  push(w: Write): boolean {
    const queue = this.pending[classOf(w)];
    if (w.kind === 'event' && !queue.has(w.key) && this.queued('event') >= this.opts.maxPendingEvents) {
      this.countDrop();
      // A Warning takes the oldest Normal Event's place; with none queued, it is the one dropped.
      const oldestNormal = w.warning ? this.pending.normal.keys().next() : undefined;
      if (!oldestNormal || oldestNormal.done) return false;
      this.pending.normal.delete(oldestNormal.value);
    }
    queue.delete(w.key);
    queue.set(w.key, w);
    this.pump();
    return true;
  }

  private countDrop(): void {
    this.dropped++;
    this.opts.onDrop?.();
    if (this.dropped % 100 === 1)
      this.opts.log.warn(
        { dropped: this.dropped },
        'scheduler Event queue full: dropping Events (pod status writes and evictions still go)',
      );
  }

  /** Writes queued or running. */
  get size(): number {
    return this.pending.pod.size + this.queued('event') + this.running;
  }

  /** Writes queued, by kind (running ones not counted). */
  queued(kind: WriteKind): number {
    return kind === 'pod' ? this.pending.pod.size : this.pending.warning.size + this.pending.normal.size;
  }

  whenIdle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  clear(): void {
    this.pending.pod.clear();
    this.pending.warning.clear();
    this.pending.normal.clear();
    if (this.running === 0) this.notifyIdle();
  }

  /**
   * The oldest queued write whose key is not in flight (pod writes first, then Warnings); it skips at
   * most `concurrency`.
   */
  private next(): Write | undefined {
    for (const queue of [this.pending.pod, this.pending.warning, this.pending.normal]) {
      for (const [key, w] of queue) {
        if (this.runningKeys.has(key)) continue;
        queue.delete(key);
        return w;
      }
    }
    return undefined;
  }

  /** Writes allowed in flight now: more while Events pile up. */
  private limit(): number {
    const extra = Math.floor(this.queued('event') / (this.opts.eventsPerExtraWriter ?? 250));
    const { concurrency, maxConcurrency = concurrency } = this.opts;
    return Math.max(concurrency, Math.min(maxConcurrency, concurrency + extra));
  }

  private pump(): void {
    while (this.running < this.limit()) {
      const w = this.next();
      if (!w) return;
      this.running++;
      this.runningKeys.add(w.key);
      void acquireToken(this.opts.bucket)
        .then(() => w.run())
        .catch((err: unknown) =>
          this.opts.log[this.opts.failureLevel(err)](
            { err: this.opts.describeError(err), key: w.key },
            'scheduler write failed',
          ),
        )
        .finally(() => {
          this.running--;
          this.runningKeys.delete(w.key);
          this.pump();
          if (this.size === 0) this.notifyIdle();
        });
    }
  }

  private notifyIdle(): void {
    const waiters = this.idle;
    this.idle = [];
    for (const w of waiters) w();
  }
}

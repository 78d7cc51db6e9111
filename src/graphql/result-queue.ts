/**
 * One subscriber's queue of a shared subscription's results (shared-subscriptions.ts): the hub pushes,
 * the transport (event-stream.ts, graphql-ws) pulls with next() or attaches a sink. A plain array and at most one waiting
 * reader, where a Repeater per subscriber cost ~16 µs per result and subscriber in the fan-out bench's
 * profile (its push chains promises and builds a thenable per call): with 1,000 subscribers that alone
 * was a sixth of a core at 90 decisions per second.
 *
 * Bounded: a push beyond `capacity` unread results (or one its sink refuses) fails this queue (the
 * reader gets what was queued, then the error) and tells the hub, so a stalled subscriber never grows
 * the heap without end.
 */
import type { ExecutionResult } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';

type Waiter = {
  resolve: (r: IteratorResult<ExecutionResult>) => void;
  reject: (err: unknown) => void;
};

const DONE: IteratorResult<ExecutionResult> = Object.freeze({ value: undefined, done: true });

export class ResultQueue implements AsyncIterableIterator<ExecutionResult> {
  private items: ExecutionResult[] = [];
  private head = 0;
  private waiter: Waiter | undefined;
  private closed = false;
  private failure: { error: unknown } | undefined;
  private left = false;
  private sink: ((value: ExecutionResult) => boolean) | undefined;
  private sinkRetired = false;

  /** @param onReturn called once, when the reader leaves (return() or throw()), whatever ended the queue. */
  constructor(
    private readonly capacity: number,
    private readonly onReturn: () => void,
  ) {}

  private get size(): number {
    return this.items.length - this.head;
  }

  /**
   * From now on, error-free results go straight to `sink`, synchronously, not through next(): the
   * transport writes them itself (event-stream.ts, websocket.ts), skipping the per-result async hops of
   * the iterator chain between this queue and it, which cost more than the write at 1,000 subscribers.
   * Skipping is safe because what sits in that chain leaves error-free results untouched (yoga's
   * masking maps errors only; untilRevoked only ends streams); the first result with errors, and all
   * after it, take the iterator again, so order holds and masking applies. next() still reports the
   * end, a failure and a revocation. `sink` returns false when its subscriber is too far behind.
   */
  attach(sink: (value: ExecutionResult) => boolean): void {
    if (this.closed || this.sink || this.sinkRetired) return;
    while (this.head < this.items.length) {
      const value = this.items[this.head] as ExecutionResult;
      if (value.errors) {
        this.sinkRetired = true;
        return;
      }
      this.items[this.head++] = undefined as never;
      if (!sink(value)) {
        this.tooSlow();
        return;
      }
    }
    this.items = [];
    this.head = 0;
    this.sink = sink;
  }

  /** False when the queue is closed or full (then it has failed: the caller drops it). */
  push(value: ExecutionResult): boolean {
    if (this.closed) return false;
    const sink = this.sink;
    if (sink) {
      if (!value.errors) {
        if (sink(value)) return true;
        this.tooSlow();
        return false;
      }
      this.sink = undefined;
      this.sinkRetired = true;
    }
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter.resolve({ value, done: false });
      return true;
    }
    if (this.size >= this.capacity) {
      this.tooSlow();
      return false;
    }
    this.items.push(value);
    return true;
  }

  private tooSlow(): void {
    this.fail(
      createGraphQLError('subscriber fell too far behind the shared subscription: resubscribe and refetch', {
        extensions: { code: 'SUBSCRIBER_TOO_SLOW' },
      }),
    );
  }

  /** No more results: the reader gets what is queued, then done. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.sink = undefined;
    this.settleWaiter();
  }

  /** The reader gets what is queued, then `error`. */
  fail(error: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.sink = undefined;
    this.failure = { error };
    this.settleWaiter();
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.head < this.items.length) {
      const value = this.items[this.head] as ExecutionResult;
      this.items[this.head++] = undefined as never;
      // Compact once the read part dominates: amortised O(1), no shift() over 10,000 entries.
      if (this.head >= 1024 && this.head * 2 >= this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.closed) return this.drained();
    if (this.waiter) return Promise.reject(new Error('next() called while another next() is pending'));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<ExecutionResult>> {
    this.leave();
    return Promise.resolve(DONE);
  }

  throw(): Promise<IteratorResult<ExecutionResult>> {
    this.leave();
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private leave(): void {
    if (this.left) return;
    this.left = true;
    this.closed = true;
    this.sink = undefined;
    this.failure = undefined;
    this.items = [];
    this.head = 0;
    this.settleWaiter();
    this.onReturn();
  }

  private settleWaiter(): void {
    const waiter = this.waiter;
    if (!waiter || this.head < this.items.length) return;
    this.waiter = undefined;
    this.drained().then(waiter.resolve, waiter.reject);
  }

  /** The end of a closed, empty queue: its error once, then done. */
  private drained(): Promise<IteratorResult<ExecutionResult>> {
    const failure = this.failure;
    if (!failure) return Promise.resolve(DONE);
    this.failure = undefined;
    return Promise.reject(failure.error);
  }
}

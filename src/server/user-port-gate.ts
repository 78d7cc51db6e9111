/**
 * The user port must not starve the kube port. The webhook, the aggregated API, the scheduler's cycles and
 * the GraphQL/compatibility routes share one event loop; an operation on the user port (a `nodes` query at
 * 1,000 nodes is ~18 ms of synchronous work) runs to its end once started. Fifty clients asking at once used
 * to queue fifty of them between two webhook reviews: the webhook's p99 went from 13 ms to ~3 s, past the API
 * server's webhook timeout, which then fails open and the rules are bypassed.
 *
 * The gate admits at most `concurrency` user-port requests at a time and lets the next one in only from a
 * `setImmediate` callback, i.e. after the event loop has polled its sockets. So between two user-port
 * operations every pending kube-port request (and the scheduler's next cycle, which also yields with
 * setImmediate) gets its turn: a webhook review waits for at most `concurrency` user-port operations, however
 * many users are queued. The user port's own requests wait in a bounded FIFO instead; past `maxQueued`, or
 * after `maxWaitMs` in it, they are answered 503 with Retry-After, as an overloaded API server answers 429.
 *
 * A slot is given back once the code that wrote the response's headers has run (an answer computed and
 * written; for SSE, the stream opened), when the connection closes, or after `holdMs` — a request that long
 * in flight is waiting on I/O, not the CPU.
 *
 * Turns are also rationed in time (loop-share.ts): while the kube side is busy the user port gets at most
 * `loopShare` of the loop, so a flood of views slows the views, not admission and scheduling.
 */
import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import onHeaders from 'on-headers';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LOOP_SHARE_DEFAULTS, LoopShare } from './loop-share.js';

export interface UserPortGateOptions {
  /** Requests admitted at once; 0 turns the gate off. */
  concurrency: number;
  /** Requests that may wait; beyond, 503 at once. */
  maxQueued: number;
  /** A request that waited this long is answered 503 instead of being admitted. */
  maxWaitMs: number;
  /** Give the slot back after this long even without an answer (the request is waiting on I/O). */
  holdMs?: number;
  /** The user port's share of the loop while the kube side is busy (loop-share.ts); 1 = no limit. */
  loopShare?: number;
  registry?: Registry;
  /** Test seams: the clock, how the next admission is deferred (setImmediate), and timers. */
  now?: () => number;
  defer?: (fn: () => void) => void;
  after?: (fn: () => void, ms: number) => void;
}

export const USER_PORT_GATE_DEFAULTS = {
  concurrency: 1,
  maxQueued: 1024,
  maxWaitMs: 10_000,
  holdMs: 100,
  loopShare: LOOP_SHARE_DEFAULTS.share,
} as const;

interface Waiter {
  enqueuedAt: number;
  admit: () => void;
  refuse: (reason: RefusalReason, waitedMs: number) => void;
  gone: boolean;
}

type RefusalReason = 'queue_full' | 'wait_timeout';

/** acquire()'s refusal: the gate is full or the turn came too late. */
export class GateBusyError extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'GateBusyError';
  }
}

interface GateMetrics {
  inFlight: Gauge;
  queued: Gauge;
  wait: Histogram;
  rejected: Counter<'reason'>;
  yielded: Counter;
}

function gateMetrics(registry: Registry): GateMetrics {
  const registers = [registry];
  return {
    inFlight: new Gauge({
      name: 'nodeload_user_port_inflight_requests',
      help: 'User-port requests admitted by the gate and not yet answered.',
      registers,
    }),
    queued: new Gauge({
      name: 'nodeload_user_port_queued_requests',
      help: 'User-port requests waiting for the gate.',
      registers,
    }),
    wait: new Histogram({
      name: 'nodeload_user_port_queue_wait_seconds',
      help: 'How long user-port requests waited for the gate before being admitted.',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    rejected: new Counter({
      name: 'nodeload_user_port_rejected_requests_total',
      help: 'User-port requests answered 503 by the gate, by reason (queue_full, wait_timeout).',
      labelNames: ['reason'],
      registers,
    }),
    yielded: new Counter({
      name: 'nodeload_user_port_yielded_seconds_total',
      help: 'Time the user port held its next request back so the HTTPS port and the scheduler had the event loop (--user-port-loop-share).',
      registers,
    }),
  };
}

export class UserPortGate {
  private running = 0;
  private readonly queue: Waiter[] = [];
  private head = 0;
  private pumpScheduled = false;
  private shareTimer = false;
  private readonly now: () => number;
  private readonly defer: (fn: () => void) => void;
  private readonly after: (fn: () => void, ms: number) => void;
  private readonly holdMs: number;
  private readonly metrics: GateMetrics | undefined;
  /** Time-sharing with the kube side: how long the next admission waits. */
  readonly share: LoopShare;

  constructor(private readonly opts: UserPortGateOptions) {
    this.now = opts.now ?? (() => performance.now());
    this.defer = opts.defer ?? ((fn) => setImmediate(fn));
    this.after = opts.after ?? ((fn, ms) => setTimeout(fn, ms));
    this.holdMs = opts.holdMs ?? USER_PORT_GATE_DEFAULTS.holdMs;
    this.metrics = opts.registry ? gateMetrics(opts.registry) : undefined;
    this.share = new LoopShare({
      share: opts.loopShare ?? USER_PORT_GATE_DEFAULTS.loopShare,
      burstMs: LOOP_SHARE_DEFAULTS.burstMs,
      maxChargeMs: this.holdMs,
      contentionWindowMs: LOOP_SHARE_DEFAULTS.contentionWindowMs,
      now: this.now,
    });
  }

  /** Express middleware for the kube port: each request there marks the loop as wanted by the kube side. */
  kubeActivity(): RequestHandler {
    return (_req, _res, next) => {
      this.share.kubeActivity();
      next();
    };
  }

  get inFlight(): number {
    return this.running;
  }

  get waiting(): number {
    return this.queue.length - this.head;
  }

  /** Express middleware: admits the request now, queues it, or answers 503. */
  middleware(): RequestHandler {
    return (_req, res, next) => {
      if (this.opts.concurrency <= 0) {
        next();
        return;
      }
      this.enterRequest(res, next);
    };
  }

  /**
   * For work that is not an HTTP request (a query over graphql-ws): resolves with the function that gives
   * the slot back once admitted; rejects with GateBusyError when the gate would answer 503. With the gate
   * off, resolves at once.
   */
  acquire(): Promise<() => void> {
    if (this.opts.concurrency <= 0) return Promise.resolve(() => {});
    return new Promise((resolve, reject) => {
      this.enter(
        () => resolve(this.hold()),
        (reason, waitedMs) => {
          this.metrics?.rejected.inc({ reason });
          reject(new GateBusyError(reason, this.busyMessage(reason, waitedMs)));
        },
      );
    });
  }

  private enter(
    admit: () => void,
    refuse: (reason: RefusalReason, waitedMs: number) => void,
    onGone?: (markGone: () => void) => void,
  ): void {
    if (this.running < this.opts.concurrency && this.waiting === 0 && this.share.waitMs() === 0) {
      this.metrics?.wait.observe(0);
      admit();
      return;
    }
    if (this.waiting >= this.opts.maxQueued) {
      refuse('queue_full', 0);
      return;
    }
    const waiter: Waiter = { enqueuedAt: this.now(), admit, refuse, gone: false };
    onGone?.(() => {
      waiter.gone = true;
    });
    this.queue.push(waiter);
    this.metrics?.queued.set(this.waiting);
    if (this.running < this.opts.concurrency) this.schedulePump();
  }

  private enterRequest(res: ServerResponse, next: () => void): void {
    this.enter(
      () => {
        const release = this.hold();
        // At the end of the code that wrote the headers, not in it: an answer written in one go (a
        // replayed GraphQL answer, 110 KB at 1,000 nodes) writes its body right after, and that write is
        // the turn's cost. Charged at the headers, each such answer counted ~0 ms, the share never held
        // the port back, and a flood of them took 3/4 of the loop from admission.
        onHeaders(res, () => process.nextTick(release));
        res.once('close', release);
        next();
      },
      (reason, waitedMs) => this.refuse(res, reason, waitedMs),
      // A client that hangs up while queued is skipped, not run. The response's 'close' says so: the
      // request's own 'close' fires as soon as its body has been read, which the body parser already did.
      (markGone) =>
        res.once('close', () => {
          if (!res.headersSent) markGone();
        }),
    );
  }

  /** Takes a slot; the returned function gives it back (once; or by itself after holdMs). */
  private hold(): () => void {
    this.running++;
    this.metrics?.inFlight.set(this.running);
    const admittedAt = this.now();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      this.share.charge(this.now() - admittedAt);
      this.running--;
      this.metrics?.inFlight.set(this.running);
      this.schedulePump();
    };
    const timer = setTimeout(release, this.holdMs);
    timer.unref();
    return release;
  }

  private busyMessage(reason: RefusalReason, waitedMs: number): string {
    return reason === 'queue_full'
      ? `the gateway is busy: ${this.waiting} requests are already waiting on this port; retry shortly`
      : `the gateway is busy: this request waited ${Math.round(waitedMs)} ms without a turn; retry shortly`;
  }

  private refuse(res: ServerResponse, reason: RefusalReason, waitedMs: number): void {
    this.metrics?.rejected.inc({ reason });
    const message = this.busyMessage(reason, waitedMs);
    res.statusCode = 503;
    res.setHeader('Retry-After', '1');
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(
      JSON.stringify({
        error: 'ServiceUnavailable',
        message,
        errors: [{ message, extensions: { code: 'SERVICE_UNAVAILABLE', reason } }],
      }),
    );
  }

  /** The next admissions happen after the event loop has polled I/O once more. */
  private schedulePump(): void {
    if (this.pumpScheduled || this.waiting === 0) return;
    this.pumpScheduled = true;
    this.defer(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.opts.concurrency && this.waiting > 0) {
      const wait = this.share.waitMs();
      if (wait > 0) {
        this.pumpAfter(wait);
        break;
      }
      const w = this.queue[this.head] as Waiter;
      this.queue[this.head++] = undefined as unknown as Waiter;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      if (w.gone) continue;
      const waitedMs = this.now() - w.enqueuedAt;
      if (waitedMs > this.opts.maxWaitMs) {
        w.refuse('wait_timeout', waitedMs);
        continue;
      }
      this.metrics?.wait.observe(waitedMs / 1000);
      w.admit();
    }
    this.metrics?.queued.set(this.waiting);
  }

  /** The user port has had its share for now: the next admission once the bucket is out of debt. */
  private pumpAfter(ms: number): void {
    if (this.shareTimer) return;
    this.shareTimer = true;
    this.metrics?.yielded.inc(ms / 1000);
    this.after(() => {
      this.shareTimer = false;
      this.pump();
    }, ms);
  }
}

/**
 * The user port's share of the event loop while the kube side wants it. The user-port gate
 * (user-port-gate.ts) already lets a webhook review wait for at most one user-port operation; but under a
 * flood those operations still ran back to back between kube-port requests and scheduling cycles, so the
 * views took most of the loop (the scheduler bound 0.30× its rate alone) and their garbage made the
 * webhook's tail (GC pauses) 2.35× its p99 alone.
 *
 * This is a token bucket in milliseconds of the loop: it fills at `share` ms per ms of wall time, up to
 * `burstMs`, and each user-port request is charged the time it held its turn (admission to answer, at most
 * `maxChargeMs`). While the kube side is busy — a kube-port request in the last `contentionWindowMs`, or a
 * component saying it has work (the scheduler with pods to place or binds in flight) — the next user-port
 * request waits until the bucket is no longer in debt; so the user port gets at most `share` of the loop
 * and the rest goes to admission, the aggregated API and scheduling. With nothing else wanting the loop the
 * user port is not held back at all: the share is work-conserving.
 *
 * The charge is wall time, which over-counts a request that waited on I/O (a TokenReview) while others ran:
 * the error is on the side of the kube port.
 */
export interface LoopShareOptions {
  /** Fraction of the loop the user port may take while the kube side is busy; 1 = no limit. */
  share: number;
  /** Turn time the user port may take at once before the share applies. */
  burstMs: number;
  /** One request is charged at most this (the gate gives its turn back after it anyway). */
  maxChargeMs: number;
  /** A kube-port request keeps the loop contended this long. */
  contentionWindowMs: number;
  now: () => number;
}

export const LOOP_SHARE_DEFAULTS = {
  // A tenth: once cached GraphQL answers were replayed as bytes (src/graphql/answer-replay.ts), a quarter of
  // the loop wrote ~1,600 of them a second at 1,000 nodes under the views bench's flood, and reading those
  // on the same cores took the webhook's p99 to 2.6x its p99 alone (target 2x); a tenth still wrote ~550
  // (88 at a quarter before the replay), at 2.07x.
  share: 0.1,
  burstMs: 50,
  contentionWindowMs: 250,
} as const;

export class LoopShare {
  private budget: number;
  private filledAt: number;
  private kubeAt = Number.NEGATIVE_INFINITY;
  private readonly probes: (() => boolean)[] = [];

  constructor(private readonly opts: LoopShareOptions) {
    this.budget = opts.burstMs;
    this.filledAt = opts.now();
  }

  /** The kube port served a request: the loop is contended for the next contentionWindowMs. */
  kubeActivity(): void {
    this.kubeAt = this.opts.now();
  }

  /** A component that may have work waiting (asked only while a user-port request waits). */
  contendedWhile(probe: () => boolean): void {
    this.probes.push(probe);
  }

  get contended(): boolean {
    if (this.opts.now() - this.kubeAt < this.opts.contentionWindowMs) return true;
    return this.probes.some((p) => p());
  }

  /** A user-port request held its turn for `ms`. */
  charge(ms: number): void {
    if (this.opts.share >= 1) return;
    this.fill();
    const cost = Math.min(Math.max(0, ms), this.opts.maxChargeMs);
    // Debt is bounded by one request: time the user port took while nothing else wanted the loop is not
    // paid back later.
    this.budget = Math.max(-this.opts.maxChargeMs, this.budget - cost);
  }

  /** How long the next user-port request must wait for its turn; 0: now. */
  waitMs(): number {
    if (this.opts.share >= 1) return 0;
    this.fill();
    if (this.budget >= 0 || !this.contended) return 0;
    return Math.ceil(-this.budget / this.opts.share);
  }

  private fill(): void {
    const now = this.opts.now();
    this.budget = Math.min(this.opts.burstMs, this.budget + (now - this.filledAt) * this.opts.share);
    this.filledAt = now;
  }
}

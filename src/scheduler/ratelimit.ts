/**
 * The gateway's own client-side rate limiter (client-node has none): a token bucket refilled at `qps`
 * holding at most `burst` tokens. Reservations may drive the balance negative, as Go's rate.Limiter
 * does, so callers are served in order and each learns exactly how long to wait.
 */

export interface TokenBucketOptions {
  qps: number;
  burst: number;
  now?: () => number;
}

export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private last: number;

  constructor(opts: TokenBucketOptions) {
    if (!(opts.qps > 0)) throw new Error(`qps must be positive, got ${opts.qps}`);
    if (!(opts.burst >= 1)) throw new Error(`burst must be at least 1, got ${opts.burst}`);
    this.qps = opts.qps;
    this.burst = opts.burst;
    this.now = opts.now ?? Date.now;
    this.tokens = opts.burst;
    this.last = this.now();
  }

  private refill(): void {
    const now = this.now();
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
    }
  }

  /** Takes a token now if one is available. */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Reserves the next token; returns how many ms to wait before using it (0 = at once). */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  /** Gives back a reserved token that was never used (Go's Reservation.Cancel), capped at burst. */
  cancel(): void {
    this.refill();
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  /** Tokens available now (negative while reservations are outstanding). */
  available(): number {
    this.refill();
    return this.tokens;
  }
}

export class RateLimitAbortedError extends Error {
  constructor() {
    super('rate limiter wait aborted');
  }
}

/** Waits for a token of the bucket; rejects with RateLimitAbortedError if the signal fires first. */
export function acquireToken(bucket: TokenBucket, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new RateLimitAbortedError());
  const wait = bucket.reserve();
  if (wait === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      // The reservation was never used: refund it, or the next leadership term starts in deficit.
      bucket.cancel();
      reject(new RateLimitAbortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, wait);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

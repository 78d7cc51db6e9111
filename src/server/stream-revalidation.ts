/**
 * Long-lived connections of the user port — a graphql-ws socket, an SSE subscription — are authenticated
 * once, when they open. A token revoked afterwards (its ServiceAccount deleted, a bound token's pod gone)
 * must not keep them open: every period, each distinct token among the open streams is authenticated
 * again, and the streams of a token that no longer authenticates are told so (they close).
 *
 * The check goes through the user port's own authentication (user-auth.ts), whose TokenReviews are cached
 * by the token's hash for 10 s: with the default period equal to that TTL, each pass finds the last
 * verdict just expired and asks the API server once per distinct token however many streams carry it
 * (and not at all when an HTTP request with the same token was just reviewed). A revoked token's streams
 * close within period + TTL. A review that cannot be made (the API server unreachable) is no verdict:
 * the streams stay open and the next pass asks again.
 *
 * While its streams are open the token itself is held (a review needs it); entries are keyed by its hash.
 */
import { tokenCacheKey } from './authn.js';
import type { Logger } from './log.js';
import type { AuthResult } from './user-auth.js';

/** How a stream learns its token stopped authenticating: `reason` says why, for a close frame or an error. */
export type OnRevoked = (reason: string) => void;

export interface StreamTokenRevalidatorOptions {
  /** The user port's authentication of an Authorization value ("Bearer <token>"), cached. */
  authenticate: (authorization: string) => Promise<AuthResult>;
  periodMs: number;
  log: Pick<Logger, 'debug' | 'info' | 'warn'>;
}

interface WatchedToken {
  authorization: string;
  streams: Set<OnRevoked>;
}

export class StreamTokenRevalidator {
  private readonly tokens = new Map<string, WatchedToken>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private pass: Promise<void> | undefined;

  constructor(private readonly opts: StreamTokenRevalidatorOptions) {}

  /**
   * Watches a stream opened with `authorization` until the returned function is called (the stream
   * closed); `onRevoked` runs at most once. A stream without a token (the loopback anonymous user) has
   * nothing to re-review.
   */
  watch(authorization: string | undefined, onRevoked: OnRevoked): () => void {
    if (!authorization?.trim()) return () => {};
    const key = tokenCacheKey(authorization);
    let entry = this.tokens.get(key);
    if (!entry) {
      entry = { authorization, streams: new Set() };
      this.tokens.set(key, entry);
    }
    // A wrapper per watch: the same callback watched twice is two streams.
    const stream: OnRevoked = (reason) => onRevoked(reason);
    entry.streams.add(stream);
    this.timer ??= setInterval(() => void this.revalidate(), this.opts.periodMs).unref();
    return () => {
      const current = this.tokens.get(key);
      if (!current?.streams.delete(stream) || current.streams.size > 0) return;
      this.tokens.delete(key);
      this.idle();
    };
  }

  /** Distinct tokens of the open streams. */
  get watchedTokens(): number {
    return this.tokens.size;
  }

  /** One pass: each distinct token authenticated once; the streams of the refused ones told. */
  revalidate(): Promise<void> {
    // A pass still waiting on the API server when the next is due: the next one is that one.
    this.pass ??= this.revalidateAll().finally(() => {
      this.pass = undefined;
    });
    return this.pass;
  }

  private async revalidateAll(): Promise<void> {
    await Promise.all(
      [...this.tokens].map(async ([key, entry]) => {
        const result = await this.opts.authenticate(entry.authorization);
        if (result.ok || result.status !== 401) return; // 503: no verdict, ask again next pass
        if (this.tokens.get(key) !== entry) return;
        this.tokens.delete(key);
        this.opts.log.info(
          { streams: entry.streams.size, reason: result.message },
          'closing the streams of a token that no longer authenticates',
        );
        for (const revoked of entry.streams) revoked(result.message);
      }),
    );
    this.idle();
  }

  /** Stops the timer while nothing is watched (a gateway without streams runs no timer). */
  private idle(): void {
    if (this.tokens.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Forgets every stream and stops the timer (the gateway is stopping). */
  stop(): void {
    this.tokens.clear();
    this.idle();
  }
}

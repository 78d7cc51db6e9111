import { describe, expect, it } from 'vitest';
import { acquireToken, RateLimitAbortedError, TokenBucket } from './ratelimit.js';

function clock(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('TokenBucket', () => {
  it('allows a burst at once, then refills at qps', () => {
    const c = clock();
    const b = new TokenBucket({ qps: 10, burst: 5, now: c.now });
    const burst = Array.from({ length: 5 }, () => b.tryTake());
    expect(burst).toEqual([true, true, true, true, true]);
    expect(b.tryTake()).toBe(false);
    c.advance(99);
    expect(b.tryTake()).toBe(false);
    c.advance(1);
    expect(b.tryTake()).toBe(true);
  });

  it('never holds more than burst tokens', () => {
    const c = clock();
    const b = new TokenBucket({ qps: 100, burst: 3, now: c.now });
    c.advance(60_000);
    expect(b.available()).toBe(3);
  });

  it('reserves in order: each caller learns its own wait', () => {
    const c = clock();
    const b = new TokenBucket({ qps: 4, burst: 2, now: c.now });
    expect([b.reserve(), b.reserve(), b.reserve(), b.reserve(), b.reserve()]).toEqual([0, 0, 250, 500, 750]);
    c.advance(500);
    // Two of the three outstanding reservations are now covered; the next one waits behind the third.
    expect(b.reserve()).toBe(500);
  });

  it('sustains exactly qps over a long run', () => {
    const c = clock();
    const b = new TokenBucket({ qps: 50, burst: 100, now: c.now });
    let granted = 0;
    for (let ms = 0; ms < 10_000; ms++) {
      while (b.tryTake()) granted++;
      c.advance(1);
    }
    expect(granted).toBe(100 + 50 * 10 - 1);
  });

  it('rejects nonsense settings', () => {
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow();
    expect(() => new TokenBucket({ qps: 1, burst: 0 })).toThrow();
  });
});

describe('acquireToken', () => {
  it('resolves at once while tokens last', async () => {
    const b = new TokenBucket({ qps: 1, burst: 2 });
    await acquireToken(b);
    await acquireToken(b);
    expect(b.available()).toBeLessThan(1);
  });

  it('rejects when aborted while waiting', async () => {
    const b = new TokenBucket({ qps: 0.001, burst: 1 });
    await acquireToken(b);
    const ac = new AbortController();
    const waiting = acquireToken(b, ac.signal);
    ac.abort();
    await expect(waiting).rejects.toBeInstanceOf(RateLimitAbortedError);
  });
});

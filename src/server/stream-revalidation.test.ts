import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CachedTokenAuthenticator } from './authn.js';
import { CachedAccessReviewer } from './authz.js';
import { StreamTokenRevalidator } from './stream-revalidation.js';
import { UserPortAuth } from './user-auth.js';

const PERIOD = 10_000;
const log = pino({ level: 'silent' });

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A revalidator over the user port's real (cached) authentication, with a fake TokenReview. */
function setup() {
  const valid = new Set(['tok-a', 'tok-b']);
  const reviews: string[] = [];
  const api = { down: false };
  const auth = new UserPortAuth({
    anonymous: false,
    authenticator: new CachedTokenAuthenticator(
      async (token) => {
        reviews.push(token);
        if (api.down) throw new Error('connect ECONNREFUSED');
        return valid.has(token)
          ? { authenticated: true, user: { name: token, groups: [], extra: {} } }
          : { authenticated: false, reason: 'token has been invalidated' };
      },
      { now: () => Date.now() },
    ),
    reviewer: new CachedAccessReviewer(async () => ({ allowed: true, reason: '' })),
    log,
  });
  const revalidator = new StreamTokenRevalidator({
    authenticate: (authorization) => auth.authenticate(authorization),
    periodMs: PERIOD,
    log,
  });
  const closed: { stream: string; reason: string }[] = [];
  /** Opens a stream as the gateway does: authenticated, then watched. */
  const open = async (stream: string, token: string) => {
    expect((await auth.authenticate(`Bearer ${token}`)).ok).toBe(true);
    return revalidator.watch(`Bearer ${token}`, (reason) => closed.push({ stream, reason }));
  };
  return { valid, reviews, api, revalidator, closed, open };
}

describe('StreamTokenRevalidator', () => {
  it("closes every stream of a revoked token at the first pass past the cache's TTL, and no other", async () => {
    const { valid, reviews, closed, open } = setup();
    await open('ws-1', 'tok-a');
    await open('sse-1', 'tok-a');
    await open('ws-2', 'tok-b');
    expect(reviews).toEqual(['tok-a', 'tok-b']); // at open; the second tok-a stream came from the cache

    valid.delete('tok-a'); // the ServiceAccount is deleted
    await vi.advanceTimersByTimeAsync(PERIOD - 1);
    expect(closed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(closed).toEqual([
      { stream: 'ws-1', reason: 'invalid bearer token: token has been invalidated' },
      { stream: 'sse-1', reason: 'invalid bearer token: token has been invalidated' },
    ]);
    // One review per distinct token per pass, however many streams carry it.
    expect(reviews).toEqual(['tok-a', 'tok-b', 'tok-a', 'tok-b']);

    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(closed).toHaveLength(2); // told once; the revoked token is no longer reviewed
    expect(reviews).toEqual(['tok-a', 'tok-b', 'tok-a', 'tok-b', 'tok-b']);
  });

  it('keeps streams open while the review cannot be made, and closes them once it says no', async () => {
    const { valid, api, closed, open } = setup();
    await open('ws', 'tok-a');
    valid.delete('tok-a');
    api.down = true;
    await vi.advanceTimersByTimeAsync(PERIOD * 3);
    expect(closed).toEqual([]);
    api.down = false;
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(closed).toEqual([{ stream: 'ws', reason: expect.stringContaining('invalidated') }]);
  });

  it('stops reviewing a token once its streams closed, and runs no timer without streams', async () => {
    const { reviews, revalidator, closed, open } = setup();
    expect(revalidator.watch(undefined, () => {})).toBeTypeOf('function'); // the anonymous user
    expect(vi.getTimerCount()).toBe(0);
    const closeFirst = await open('ws-1', 'tok-a');
    const closeSecond = await open('ws-2', 'tok-a');
    expect(vi.getTimerCount()).toBe(1);
    closeFirst();
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(reviews).toEqual(['tok-a', 'tok-a']);
    closeSecond();
    expect(revalidator.watchedTokens).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(PERIOD * 3);
    expect(reviews).toEqual(['tok-a', 'tok-a']);
    expect(closed).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  checkElectionTimings,
  decideLease,
  electionTimings,
  type LeaseObservation,
  type LeaseRecord,
  observeLease,
  releasedRecord,
} from './election.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const S = 1000;

/** A record renewed at `renewTime` (the holder's clock), seen changing `observedSecondsAgo` by ours. */
const seen = (
  holder: string,
  observedSecondsAgo: number,
  o: { duration?: number; renewTime?: number } = {},
): LeaseObservation => ({
  record: {
    holderIdentity: holder,
    leaseDurationSeconds: o.duration ?? 15,
    acquireTime: NOW - 3600 * S,
    renewTime: o.renewTime ?? NOW - observedSecondsAgo * S,
    leaseTransitions: 4,
  },
  observedAt: NOW - observedSecondsAgo * S,
});

describe('decideLease', () => {
  it.each([
    { name: 'absent → create', observed: undefined, action: 'create' },
    { name: 'ours and live → renew', observed: seen('me', 3), action: 'renew' },
    { name: 'ours but unchanged for long → renew (still ours)', observed: seen('me', 60), action: 'renew' },
    { name: "another's, changed 14 s ago → wait", observed: seen('other', 14), action: 'wait' },
    {
      name: "another's, exactly at expiry → acquire (client-go: valid strictly before)",
      observed: seen('other', 15),
      action: 'acquire',
    },
    { name: "another's, unchanged for 16 s → acquire", observed: seen('other', 16), action: 'acquire' },
    {
      name: "another's, renewTime an hour old but just seen changing → wait",
      observed: seen('other', 0, { renewTime: NOW - 3600 * S }),
      action: 'wait',
    },
    {
      name: "another's, renewTime an hour ahead but unchanged for 16 s → acquire",
      observed: seen('other', 16, { renewTime: NOW + 3600 * S }),
      action: 'acquire',
    },
    { name: 'released (no holder), just seen → acquire', observed: seen('', 0), action: 'acquire' },
    {
      name: 'held, no times written, just seen → wait (times are never read)',
      observed: {
        record: { holderIdentity: 'other', leaseDurationSeconds: 15, leaseTransitions: 0 },
        observedAt: NOW,
      },
      action: 'wait',
    },
    {
      name: "another's with a 60 s lease, unchanged for 50 s → wait",
      observed: seen('other', 50, { duration: 60 }),
      action: 'wait',
    },
  ] as const)('$name', ({ observed, action }) => {
    expect(decideLease(observed, 'me', 15, NOW).action).toBe(action);
  });

  it('creates a lease held by us, renewed now, with no transitions', () => {
    expect(decideLease(undefined, 'me', 15, NOW)).toEqual({
      action: 'create',
      record: {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: NOW,
        renewTime: NOW,
        leaseTransitions: 0,
      },
    });
  });

  it('renewal keeps acquireTime and transitions and moves renewTime', () => {
    const observed = seen('me', 5);
    expect(decideLease(observed, 'me', 15, NOW)).toEqual({
      action: 'renew',
      record: { ...observed.record, renewTime: NOW },
    });
  });

  it('takeover counts a transition and records the previous holder', () => {
    expect(decideLease(seen('other', 20), 'me', 15, NOW)).toEqual({
      action: 'acquire',
      previousHolder: 'other',
      record: {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: NOW,
        renewTime: NOW,
        leaseTransitions: 5,
      },
    });
  });

  it('a wait says until when on our clock: last change seen + the holder’s lease duration', () => {
    expect(decideLease(seen('other', 5, { duration: 20, renewTime: NOW + 30 * S }), 'me', 15, NOW)).toEqual({
      action: 'wait',
      holder: 'other',
      expiresAt: NOW + 15 * S,
    });
  });
});

describe('observeLease', () => {
  const base: LeaseRecord = {
    holderIdentity: 'other',
    leaseDurationSeconds: 15,
    acquireTime: NOW - 60 * S,
    renewTime: NOW - 10 * S,
    leaseTransitions: 2,
  };
  const before: LeaseObservation = { record: base, observedAt: NOW - 10 * S };
  it.each([
    { name: 'first sight', previous: undefined, record: base, observedAt: NOW },
    {
      name: 'unchanged record keeps the earlier time',
      previous: before,
      record: { ...base },
      observedAt: NOW - 10 * S,
    },
    {
      name: 'renewTime moved forward',
      previous: before,
      record: { ...base, renewTime: NOW },
      observedAt: NOW,
    },
    {
      name: 'renewTime moved backwards (holder clock stepped)',
      previous: before,
      record: { ...base, renewTime: NOW - 99 * S },
      observedAt: NOW,
    },
    {
      name: 'another holder',
      previous: before,
      record: { ...base, holderIdentity: 'third' },
      observedAt: NOW,
    },
    {
      name: 'only the transitions changed',
      previous: before,
      record: { ...base, leaseTransitions: 3 },
      observedAt: NOW,
    },
    {
      name: 'only the lease duration changed',
      previous: before,
      record: { ...base, leaseDurationSeconds: 30 },
      observedAt: NOW,
    },
  ])('$name', ({ previous, record, observedAt }) => {
    expect(observeLease(previous, record, NOW)).toEqual({ record, observedAt });
  });
});

describe('clock skew between holder and candidate', () => {
  /**
   * The holder writes every 2 s while alive, stamping renewTime with its own clock (true time + skew);
   * the candidate reads every 5 s (from t = 1 s) with the true clock. Returns when it took over, if it did.
   */
  function takeover(skewSeconds: number, holderDiesAt: number | undefined, until = 120): number | undefined {
    let record: LeaseRecord | undefined;
    let observed: LeaseObservation | undefined;
    for (let ms = 0; ms <= until * S; ms += 500) {
      const alive = holderDiesAt === undefined || ms <= holderDiesAt * S;
      if (alive && ms % (2 * S) === 0) {
        const holderNow = NOW + ms + skewSeconds * S;
        record = {
          holderIdentity: 'holder',
          leaseDurationSeconds: 15,
          acquireTime: NOW + skewSeconds * S,
          renewTime: holderNow,
          leaseTransitions: 1,
        };
      }
      if (record && ms % (5 * S) === S) {
        observed = observeLease(observed, record, NOW + ms);
        if (decideLease(observed, 'candidate', 15, NOW + ms).action === 'acquire') return ms / S;
      }
    }
    return undefined;
  }

  it.each([
    { skew: +30, state: 'live', diesAt: undefined, takenAt: undefined },
    { skew: -30, state: 'live', diesAt: undefined, takenAt: undefined },
    { skew: 0, state: 'live', diesAt: undefined, takenAt: undefined },
    { skew: +3600, state: 'live', diesAt: undefined, takenAt: undefined },
    // Last write at 20 s, first seen at 21 s: expired once 15 s pass on our clock, i.e. at the 36 s read.
    { skew: +30, state: 'dead', diesAt: 20, takenAt: 36 },
    { skew: -30, state: 'dead', diesAt: 20, takenAt: 36 },
    { skew: 0, state: 'dead', diesAt: 20, takenAt: 36 },
  ])('holder clock $skew s, lease $state → taken over at $takenAt', ({ skew, diesAt, takenAt }) => {
    expect(takeover(skew, diesAt)).toBe(takenAt);
  });
});

describe('releasedRecord', () => {
  it('clears the holder so that any candidate acquires at once', () => {
    const released = releasedRecord(seen('me', 2).record, NOW);
    expect(released.holderIdentity).toBe('');
    expect(decideLease({ record: released, observedAt: NOW }, 'successor', 15, NOW).action).toBe('acquire');
  });
});

describe('electionTimings', () => {
  it.each([
    { name: 'defaults: ⅔ and ⅓ of the lease', lease: 15, given: {}, want: [15, 10, 5] },
    {
      name: 'client-go defaults given',
      lease: 15,
      given: { renewDeadlineSeconds: 10, retryPeriodSeconds: 2 },
      want: [15, 10, 2],
    },
    { name: 'fractions of a second', lease: 4, given: { retryPeriodSeconds: 0.5 }, want: [4, 2.666, 0.5] },
  ])('$name', ({ lease, given, want }) => {
    const t = electionTimings(lease, given);
    expect([t.leaseDurationMs, t.renewDeadlineMs, t.retryPeriodMs]).toEqual(want.map((s) => s * S));
    expect(checkElectionTimings(t)).toBeUndefined();
  });
});

describe('checkElectionTimings', () => {
  const t = (lease: number, renew: number, retry: number) => ({
    leaseDurationMs: lease * S,
    renewDeadlineMs: renew * S,
    retryPeriodMs: retry * S,
  });
  it.each([
    {
      timings: t(0, 10, 2),
      field: 'leaseDurationMs',
      message: 'leaseDuration must be greater than zero, got 0',
    },
    {
      timings: t(15, -1, 2),
      field: 'renewDeadlineMs',
      message: 'renewDeadline must be greater than zero, got -1000',
    },
    {
      timings: t(15, 10, 0),
      field: 'retryPeriodMs',
      message: 'retryPeriod must be greater than zero, got 0',
    },
    {
      timings: t(15, Number.NaN, 2),
      field: 'renewDeadlineMs',
      message: 'renewDeadline must be greater than zero, got NaN',
    },
    {
      timings: t(15, 15, 2),
      field: 'renewDeadlineMs',
      message: 'renewDeadline (15 s) must be less than leaseDuration (15 s)',
    },
    {
      timings: t(15, 20, 2),
      field: 'renewDeadlineMs',
      message: 'renewDeadline (20 s) must be less than leaseDuration (15 s)',
    },
    {
      timings: t(15, 6, 5),
      field: 'retryPeriodMs',
      message: 'retryPeriod (5 s) × 1.2 must be less than renewDeadline (6 s)',
    },
    {
      timings: t(15, 10, 9),
      field: 'retryPeriodMs',
      message: 'retryPeriod (9 s) × 1.2 must be less than renewDeadline (10 s)',
    },
  ])('$message', ({ timings, field, message }) => {
    expect(checkElectionTimings(timings)).toEqual({ field, message });
  });

  it('names the timings as the caller calls them', () => {
    const names = { leaseDurationMs: '--a', renewDeadlineMs: '--b', retryPeriodMs: '--c' };
    expect(checkElectionTimings(t(15, 16, 2), names)?.message).toBe(
      '--b (16 s) must be less than --a (15 s)',
    );
  });
});

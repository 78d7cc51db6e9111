import { describe, expect, it } from 'vitest';
import {
  decideLease,
  electionTimings,
  type LeaseRecord,
  leaseExpiresAt,
  releasedRecord,
  toLeaseRecord,
} from './lease.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const held = (holder: string, renewedSecondsAgo: number, duration = 15): LeaseRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: duration,
  acquireTime: NOW - 3600_000,
  renewTime: NOW - renewedSecondsAgo * 1000,
  leaseTransitions: 4,
});

describe('decideLease', () => {
  it.each([
    { name: 'absent → create', current: undefined, action: 'create' },
    { name: 'ours and live → renew', current: held('me', 3), action: 'renew' },
    { name: 'ours but expired → renew (still ours)', current: held('me', 60), action: 'renew' },
    { name: "another's, live → wait", current: held('other', 14), action: 'wait' },
    { name: "another's, exactly at expiry → wait", current: held('other', 15), action: 'wait' },
    { name: "another's, expired → acquire", current: held('other', 16), action: 'acquire' },
    { name: 'released (no holder), fresh → acquire', current: held('', 0), action: 'acquire' },
    {
      name: 'held but never renewed → acquire',
      current: { holderIdentity: 'other', leaseDurationSeconds: 15, leaseTransitions: 0 },
      action: 'acquire',
    },
    { name: "another's with a long lease, live → wait", current: held('other', 50, 60), action: 'wait' },
  ] as const)('$name', ({ current, action }) => {
    expect(decideLease(current, 'me', 15, NOW).action).toBe(action);
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
    const d = decideLease(held('me', 5), 'me', 15, NOW);
    expect(d).toEqual({
      action: 'renew',
      record: { ...held('me', 5), renewTime: NOW },
    });
  });

  it('takeover counts a transition and records the previous holder', () => {
    const d = decideLease(held('other', 20), 'me', 15, NOW);
    expect(d).toEqual({
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

  it('a wait says until when the lease is held', () => {
    expect(decideLease(held('other', 5), 'me', 15, NOW)).toEqual({
      action: 'wait',
      holder: 'other',
      expiresAt: NOW + 10_000,
    });
  });
});

describe('releasedRecord', () => {
  it('clears the holder so that any candidate acquires at once', () => {
    const released = releasedRecord(held('me', 2), NOW);
    expect(released.holderIdentity).toBe('');
    expect(decideLease(released, 'successor', 15, NOW).action).toBe('acquire');
  });
});

describe('leaseExpiresAt', () => {
  it('falls back to acquireTime, then to "already expired"', () => {
    expect(
      leaseExpiresAt({
        holderIdentity: 'x',
        leaseDurationSeconds: 10,
        acquireTime: NOW,
        leaseTransitions: 0,
      }),
    ).toBe(NOW + 10_000);
    expect(leaseExpiresAt({ holderIdentity: 'x', leaseDurationSeconds: 10, leaseTransitions: 0 })).toBe(0);
  });
});

describe('electionTimings', () => {
  it('keeps the renew deadline inside the lease and renews several times per deadline', () => {
    const t = electionTimings(15);
    expect(t).toEqual({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 5_000 });
    expect(t.renewDeadlineMs).toBeLessThan(t.leaseDurationMs);
    expect(t.retryPeriodMs * 2).toBeLessThanOrEqual(t.renewDeadlineMs);
  });
});

describe('toLeaseRecord', () => {
  it('reads MicroTime strings (6 digits) and Dates alike', () => {
    const fromString = toLeaseRecord(
      {
        spec: {
          holderIdentity: 'a',
          renewTime: '2026-11-29T12:00:00.123456Z' as unknown as Date,
          leaseDurationSeconds: 7,
        },
      },
      15,
    );
    expect(fromString).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 7,
      renewTime: Date.parse('2026-11-29T12:00:00.123Z'),
      leaseTransitions: 0,
    });
    const fromDate = toLeaseRecord({ spec: { acquireTime: new Date(NOW) } }, 15);
    expect(fromDate).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 15,
      acquireTime: NOW,
      leaseTransitions: 0,
    });
  });
});

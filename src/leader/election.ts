/**
 * The pure core of leader election (the I/O is in lease.ts): what a candidate does with the Lease
 * it just read, following client-go's tools/leaderelection.
 *
 * Expiry is judged on the local clock only, as client-go does: the times written in the record come
 * from the holder's clock, which may be skewed from ours by any amount, so they only serve to notice
 * that the record changed. A candidate remembers when it last saw the record change (observedAt) and
 * considers the lease expired once leaseDurationSeconds have passed since then without a change. So
 * skew between nodes cannot cause a takeover of a live lease; only a difference in clock *rate* can
 * (tolerated up to the ratio leaseDuration / renewDeadline). A consequence: a candidate that starts
 * while a dead holder's record is still there waits one full lease duration before taking over.
 */

/** The Lease fields the election reads, as plain data (times in ms since the epoch). */
export interface LeaseRecord {
  /** Empty when nobody holds the lease (never acquired, or released). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: number;
  renewTime?: number;
  leaseTransitions: number;
}

/** A record as this candidate saw it, and when (local clock) it last saw it change. */
export interface LeaseObservation {
  record: LeaseRecord;
  observedAt: number;
}

export type LeaseDecision =
  /** No Lease object yet: create it holding it. */
  | { action: 'create'; record: LeaseRecord }
  /** We hold it: renew. */
  | { action: 'renew'; record: LeaseRecord }
  /** Released or expired: take it over (a new transition). */
  | { action: 'acquire'; record: LeaseRecord; previousHolder: string }
  /** Someone else holds a live lease, until expiresAt on our clock unless the record changes again. */
  | { action: 'wait'; holder: string; expiresAt: number };

export interface ElectionTimings {
  leaseDurationMs: number;
  /** A leader that could not renew for this long steps down (client-go: renewDeadline). */
  renewDeadlineMs: number;
  /** Leader renewals and follower attempts happen this often. */
  retryPeriodMs: number;
}

/** client-go's JitterFactor: its followers wait up to retryPeriod × (1 + 1.2) between attempts. */
export const JITTER_FACTOR = 1.2;

/**
 * Defaults in client-go's proportions (15 s / 10 s / 2 s there): renew deadline ⅔, retry period ⅓ of
 * the lease; either can be given instead.
 */
export function electionTimings(
  leaseDurationSeconds: number,
  given: { renewDeadlineSeconds?: number; retryPeriodSeconds?: number } = {},
): ElectionTimings {
  const leaseDurationMs = leaseDurationSeconds * 1000;
  return {
    leaseDurationMs,
    renewDeadlineMs:
      given.renewDeadlineSeconds === undefined
        ? Math.floor((leaseDurationMs * 2) / 3)
        : given.renewDeadlineSeconds * 1000,
    retryPeriodMs:
      given.retryPeriodSeconds === undefined
        ? Math.max(100, Math.floor(leaseDurationMs / 3))
        : given.retryPeriodSeconds * 1000,
  };
}

/** What the caller calls each timing (a flag, a field), for the message. */
export type TimingNames = Record<keyof ElectionTimings, string>;

const FIELD_NAMES: TimingNames = {
  leaseDurationMs: 'leaseDuration',
  renewDeadlineMs: 'renewDeadline',
  retryPeriodMs: 'retryPeriod',
};

/**
 * client-go's NewLeaderElector checks: all > 0, leaseDuration > renewDeadline (a leader gives up
 * before any follower may take over) and renewDeadline > retryPeriod × JITTER_FACTOR (a leader gets
 * more than one attempt before it gives up). The first problem, naming the timing at fault.
 */
export function checkElectionTimings(
  t: ElectionTimings,
  names: TimingNames = FIELD_NAMES,
): { field: keyof ElectionTimings; message: string } | undefined {
  const s = (ms: number) => `${ms / 1000} s`;
  for (const field of ['leaseDurationMs', 'renewDeadlineMs', 'retryPeriodMs'] as const) {
    if (!(t[field] > 0))
      return { field, message: `${names[field]} must be greater than zero, got ${t[field]}` };
  }
  if (t.leaseDurationMs <= t.renewDeadlineMs) {
    return {
      field: 'renewDeadlineMs',
      message: `${names.renewDeadlineMs} (${s(t.renewDeadlineMs)}) must be less than ${names.leaseDurationMs} (${s(t.leaseDurationMs)})`,
    };
  }
  if (t.renewDeadlineMs <= t.retryPeriodMs * JITTER_FACTOR) {
    return {
      field: 'retryPeriodMs',
      message: `${names.retryPeriodMs} (${s(t.retryPeriodMs)}) × ${JITTER_FACTOR} must be less than ${names.renewDeadlineMs} (${s(t.renewDeadlineMs)})`,
    };
  }
  return undefined;
}

function sameRecord(a: LeaseRecord, b: LeaseRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}

/**
 * client-go's observedRecord/observedTime: the previous observation stands while the record is
 * unchanged; any change (a renewal moves renewTime, whatever the holder's clock says) restarts the
 * clock at our `now`.
 */
export function observeLease(
  previous: LeaseObservation | undefined,
  record: LeaseRecord,
  now: number,
): LeaseObservation {
  return previous && sameRecord(previous.record, record) ? previous : { record, observedAt: now };
}

/**
 * `observed` is the Lease as just read (undefined: there is none) with the local time at which that
 * record was first seen; the record's own times are never compared with `now`.
 */
export function decideLease(
  observed: LeaseObservation | undefined,
  identity: string,
  leaseDurationSeconds: number,
  now: number,
): LeaseDecision {
  if (!observed) {
    return {
      action: 'create',
      record: {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      },
    };
  }
  const current = observed.record;
  if (current.holderIdentity === identity) {
    return {
      action: 'renew',
      record: { ...current, leaseDurationSeconds, acquireTime: current.acquireTime ?? now, renewTime: now },
    };
  }
  // The holder's own lease duration, as client-go's isLeaseValid reads it; strictly after, as there.
  const expiresAt = observed.observedAt + current.leaseDurationSeconds * 1000;
  if (current.holderIdentity !== '' && now < expiresAt) {
    return { action: 'wait', holder: current.holderIdentity, expiresAt };
  }
  return {
    action: 'acquire',
    previousHolder: current.holderIdentity,
    record: {
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: now,
      renewTime: now,
      // Taking over a released lease is a transition too: the holder changes.
      leaseTransitions: current.leaseTransitions + 1,
    },
  };
}

/** The record a leader writes on release: nobody holds it, and it expires at once for anyone reading it. */
export function releasedRecord(current: LeaseRecord, now: number): LeaseRecord {
  return { ...current, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now };
}

import {
  ApiException,
  CoordinationV1Api,
  type KubeConfig,
  type V1Lease,
  V1MicroTime,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../server/log.js';
import { LeaderElector, toLeaseRecord } from './lease.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const S = 1000;

/**
 * The Lease endpoints as the API server answers them: JSON round trip (times come back as strings),
 * resourceVersion preconditions (409 on a stale one), 404 when absent.
 */
class FakeLeases {
  lease: V1Lease | undefined;
  private version = 0;

  /** Another candidate's write, stamped with its own (possibly skewed) clock. */
  writeAs(holder: string, holderNow: number): void {
    this.store({
      metadata: { name: 'l', namespace: 'ns' },
      spec: {
        holderIdentity: holder,
        leaseDurationSeconds: 15,
        acquireTime: new V1MicroTime(holderNow),
        renewTime: new V1MicroTime(holderNow),
        leaseTransitions: 1,
      },
    });
  }

  holder(): string | undefined {
    return this.lease?.spec?.holderIdentity;
  }

  private store(body: V1Lease): V1Lease {
    this.version += 1;
    this.lease = JSON.parse(
      JSON.stringify({ ...body, metadata: { ...body.metadata, resourceVersion: String(this.version) } }),
    );
    return this.read();
  }

  private read(): V1Lease {
    if (!this.lease) throw new ApiException(404, 'not found', '{"message":"not found"}', {});
    return JSON.parse(JSON.stringify(this.lease));
  }

  readNamespacedLease = async () => this.read();
  createNamespacedLease = async ({ body }: { body: V1Lease }) => {
    if (this.lease) throw new ApiException(409, 'conflict', '{}', {});
    return this.store(body);
  };
  replaceNamespacedLease = async ({ body }: { body: V1Lease }) => {
    if (body.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) {
      throw new ApiException(409, 'conflict', '{}', {});
    }
    return this.store(body);
  };
}

function elector(leases: FakeLeases, o: { renewDeadlineSeconds?: number } = {}): LeaderElector {
  const core = { readNamespace: async () => ({}) };
  const kubeConfig = {
    makeApiClient: (api: unknown) => (api === CoordinationV1Api ? leases : core),
  } as unknown as KubeConfig;
  return new LeaderElector({
    kubeConfig,
    namespace: 'ns',
    name: 'l',
    identity: 'candidate',
    leaseDurationSeconds: 15,
    enabled: true,
    log: createLogger('silent'),
    now: () => Date.now(),
    ...o,
  });
}

describe('LeaderElector against a holder with a skewed clock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: NOW });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([{ skew: +30 }, { skew: -30 }])(
    'holder clock $skew s: never takes over while the holder renews, takes over 15 s after it stops',
    async ({ skew }) => {
      const leases = new FakeLeases();
      const renew = () => leases.writeAs('holder', Date.now() + skew * S);
      renew();
      const holderTimer = setInterval(renew, 2 * S);
      const candidate = elector(leases);
      await candidate.start();
      for (let i = 0; i < 60; i++) {
        await vi.advanceTimersByTimeAsync(S);
        expect({ at: i + 1, leading: candidate.isLeader(), holder: leases.holder() }).toEqual({
          at: i + 1,
          leading: false,
          holder: 'holder',
        });
      }
      // The holder dies: its last write is at 60 s. The candidate (reading every 5 s from 0 s) first
      // sees it at 60 s and may take over from 75 s on its own clock, whatever renewTime says.
      clearInterval(holderTimer);
      await vi.advanceTimersByTimeAsync(14 * S);
      expect(candidate.isLeader()).toBe(false);
      await vi.advanceTimersByTimeAsync(1 * S);
      expect(candidate.isLeader()).toBe(true);
      expect(leases.holder()).toBe('candidate');
      await candidate.stop();
      expect(leases.holder()).toBeUndefined();
    },
  );

  it('a candidate starting beside a dead holder’s record waits a full lease duration from first sight', async () => {
    const leases = new FakeLeases();
    // Written an hour ago by the holder's clock: the old rule took this over at once.
    leases.writeAs('holder', NOW - 3600 * S);
    const candidate = elector(leases);
    await candidate.start();
    expect(candidate.isLeader()).toBe(false);
    await vi.advanceTimersByTimeAsync(14 * S);
    expect(candidate.isLeader()).toBe(false);
    await vi.advanceTimersByTimeAsync(1 * S);
    expect(candidate.isLeader()).toBe(true);
    await candidate.stop();
  });

  it('refuses timings under which two leaders could overlap, naming the field', () => {
    expect(() => elector(new FakeLeases(), { renewDeadlineSeconds: 20 })).toThrow(
      'leader election: renewDeadline (20 s) must be less than leaseDuration (15 s)',
    );
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

/**
 * Lease-based leader election on coordination.k8s.io/v1, following client-go's leaderelection:
 * read the Lease; create it when absent; take it over when it is ours, released or expired,
 * always replacing with the resourceVersion we read so that two candidates cannot both win (the
 * loser gets 409). Expiry is judged by when this candidate last saw the record change, on its own
 * clock, never by the holder's written renewTime (see election.ts). The leader renews every retry
 * period and steps down once the renew deadline passes without a successful renewal — before any
 * follower may consider the lease expired. On stop the leader releases the lease so a successor
 * takes over at once instead of waiting a whole lease duration.
 *
 * The decisions are pure (election.ts); this file's class is only the timer and the I/O.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Lease,
  V1MicroTime,
} from '@kubernetes/client-node';
import { Gauge, type Registry } from 'prom-client';
import { EventBus } from '../events/bus.js';
import type { Logger } from '../server/log.js';
import {
  checkElectionTimings,
  decideLease,
  type ElectionTimings,
  electionTimings,
  type LeaseObservation,
  type LeaseRecord,
  observeLease,
  releasedRecord,
} from './election.js';

function timeOf(v: unknown): number | undefined {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string' && v !== '') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

export function toLeaseRecord(lease: V1Lease, defaultDurationSeconds: number): LeaseRecord {
  const spec = lease.spec ?? {};
  const record: LeaseRecord = {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? defaultDurationSeconds,
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
  const acquireTime = timeOf(spec.acquireTime);
  const renewTime = timeOf(spec.renewTime);
  if (acquireTime !== undefined) record.acquireTime = acquireTime;
  if (renewTime !== undefined) record.renewTime = renewTime;
  return record;
}

/** MicroTime fields need 6 fractional digits: a plain Date is rejected by the API server. */
function leaseSpec(record: LeaseRecord): NonNullable<V1Lease['spec']> {
  return {
    holderIdentity: record.holderIdentity || undefined,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
    acquireTime: record.acquireTime === undefined ? undefined : new V1MicroTime(record.acquireTime),
    renewTime: record.renewTime === undefined ? undefined : new V1MicroTime(record.renewTime),
  };
}

/** hostname_<random>, as client-go does: unique even for two gateways in one process (tests). */
export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID().slice(0, 8)}`;
}

/** The election as its readers see it (LeaderElector satisfies it): the operator and the scheduler act only while leading. */
export interface Leadership {
  isLeader(): boolean;
  on(event: 'started-leading' | 'stopped-leading', fn: () => void): () => void;
}

export type LeaderEvents = { 'started-leading': undefined; 'stopped-leading': undefined };

export interface LeaderElectorOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  /** Default ⅔ of the lease duration. */
  renewDeadlineSeconds?: number;
  /** Default ⅓ of the lease duration. */
  retryPeriodSeconds?: number;
  /** false: no election, this process is always the leader. */
  enabled: boolean;
  log: Logger;
  registry?: Registry;
  now?: () => number;
}

function isApiError(err: unknown, code: number): boolean {
  return err instanceof ApiException && err.code === code;
}

function describe(err: unknown): string {
  if (err instanceof ApiException) {
    try {
      const body = JSON.parse(String(err.body)) as { message?: string };
      if (body.message) return `HTTP ${err.code}: ${body.message}`;
    } catch {
      // not JSON
    }
    return `HTTP ${err.code}`;
  }
  if (err instanceof Error) {
    // undici reports network failures as "fetch failed" with the reason in `cause`.
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}

export class LeaderElector {
  readonly identity: string;
  private readonly coordination: CoordinationV1Api;
  private readonly core: CoreV1Api;
  private readonly timings: ElectionTimings;
  private readonly bus: EventBus<LeaderEvents>;
  private readonly now: () => number;
  private readonly leaderGauge: Gauge | undefined;
  private leading = false;
  private holder: string | undefined;
  /** The record as last read or written, and when it last changed by our clock: expiry is judged from this. */
  private observed: LeaseObservation | undefined;
  private lastRenewal = 0;
  private timer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private running = false;
  private namespaceEnsured = false;

  constructor(private readonly opts: LeaderElectorOptions) {
    this.identity = opts.identity;
    this.coordination = opts.kubeConfig.makeApiClient(CoordinationV1Api);
    this.core = opts.kubeConfig.makeApiClient(CoreV1Api);
    this.timings = electionTimings(opts.leaseDurationSeconds, opts);
    // As client-go's NewLeaderElector: refuse timings under which two leaders could overlap.
    const problem = checkElectionTimings(this.timings);
    if (problem) throw new Error(`leader election: ${problem.message}`);
    this.now = opts.now ?? Date.now;
    this.bus = new EventBus<LeaderEvents>({
      onListenerError: (err, topic) => opts.log.error({ err, topic }, 'leader-election listener failed'),
    });
    if (opts.registry) {
      this.leaderGauge = new Gauge({
        name: 'nodeload_leader',
        help: 'Whether this gateway instance is the leader (1) or a follower (0).',
        registers: [opts.registry],
      });
      this.leaderGauge.set(0);
    }
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder as last observed (ourselves when leading); undefined when nobody holds the lease. */
  leaderIdentity(): string | undefined {
    return this.leading ? this.identity : this.holder;
  }

  /** Subscribes to 'started-leading' / 'stopped-leading'; returns the unsubscribe function. */
  on<K extends keyof LeaderEvents>(event: K, fn: () => void | Promise<void>): () => void {
    return this.bus.on(event, fn);
  }

  /** Makes the first attempt before returning, so components started after us see the outcome. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    if (!this.opts.enabled) {
      this.opts.log.info({ identity: this.identity }, 'leader election disabled: this instance always leads');
      this.setLeading(true);
      return;
    }
    this.opts.log.info(
      { identity: this.identity, lease: `${this.opts.namespace}/${this.opts.name}`, ...this.timings },
      'leader election started',
    );
    await this.tick();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    clearTimeout(this.deadlineTimer);
    await this.inFlight;
    if (!this.opts.enabled) {
      this.setLeading(false);
      return;
    }
    if (this.leading) {
      this.setLeading(false);
      await this.release();
    }
  }

  private tick(): Promise<void> {
    const run = (async () => {
      let next = this.timings.retryPeriodMs;
      try {
        await this.tryAcquireOrRenew();
      } catch (err) {
        this.opts.log.warn({ err: describe(err), leading: this.leading }, 'lease update failed');
        // A leader retries quickly until its renew deadline; a follower simply waits for the next period.
        if (this.leading) next = Math.min(1000, this.timings.retryPeriodMs);
      }
      if (this.running) this.timer = setTimeout(() => void this.tick(), next);
    })();
    this.inFlight = run;
    return run;
  }

  private async tryAcquireOrRenew(): Promise<void> {
    await this.ensureNamespace();
    const { namespace, name, leaseDurationSeconds } = this.opts;
    let existing: V1Lease | undefined;
    try {
      existing = await this.coordination.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
    }
    if (!this.running) return;
    const now = this.now();
    // Expiry counts from when we saw the record change (client-go's observedTime), not from its renewTime.
    this.observed = existing
      ? observeLease(this.observed, toLeaseRecord(existing, leaseDurationSeconds), now)
      : undefined;
    const decision = decideLease(this.observed, this.identity, leaseDurationSeconds, now);
    if (decision.action === 'wait') {
      if (this.holder !== decision.holder) {
        this.opts.log.info({ holder: decision.holder }, 'lease held by another instance');
      }
      this.holder = decision.holder;
      // We thought we led but someone else holds a live lease: we lost it (e.g. our renewals were too late).
      if (this.leading) this.stepDown('lease taken over by another instance');
      return;
    }
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: existing
        ? { ...existing.metadata, name, namespace, resourceVersion: existing.metadata?.resourceVersion }
        : { name, namespace },
      spec: leaseSpec(decision.record),
    };
    try {
      if (decision.action === 'create') await this.coordination.createNamespacedLease({ namespace, body });
      else await this.coordination.replaceNamespacedLease({ name, namespace, body });
    } catch (err) {
      if (isApiError(err, 409)) {
        // Another candidate wrote first; the next read tells us who.
        this.opts.log.debug({ action: decision.action }, 'lost the lease race (409)');
        if (this.leading) this.checkRenewDeadline();
        return;
      }
      // The namespace was deleted under us: recreate it on the next attempt.
      if (isApiError(err, 404)) this.namespaceEnsured = false;
      if (this.leading) this.checkRenewDeadline();
      throw err;
    }
    if (!this.running) return;
    this.lastRenewal = this.now();
    // What we wrote is what we will read next: unchanged from then on unless someone else writes.
    this.observed = { record: decision.record, observedAt: this.lastRenewal };
    this.holder = this.identity;
    this.armRenewDeadline();
    if (!this.leading) {
      this.opts.log.info(
        {
          identity: this.identity,
          previousHolder: decision.action === 'acquire' ? decision.previousHolder || undefined : undefined,
        },
        'acquired the lease: leading',
      );
      this.setLeading(true);
    } else {
      this.opts.log.trace('lease renewed');
    }
  }

  /** A request hanging past the deadline must still end our leadership, hence a timer, not only a check after each call. */
  private armRenewDeadline(): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => this.checkRenewDeadline(), this.timings.renewDeadlineMs + 1);
    this.deadlineTimer.unref?.();
  }

  private checkRenewDeadline(): void {
    if (this.leading && this.now() - this.lastRenewal > this.timings.renewDeadlineMs) {
      this.stepDown(`could not renew the lease within ${this.timings.renewDeadlineMs} ms`);
    }
  }

  private stepDown(why: string): void {
    clearTimeout(this.deadlineTimer);
    this.opts.log.warn({ identity: this.identity, reason: why }, 'stepping down: no longer leading');
    this.setLeading(false);
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.leaderGauge?.set(leading ? 1 : 0);
    this.bus.emit(leading ? 'started-leading' : 'stopped-leading');
  }

  private async release(): Promise<void> {
    const { namespace, name, leaseDurationSeconds } = this.opts;
    try {
      const lease = await this.coordination.readNamespacedLease({ name, namespace });
      const current = toLeaseRecord(lease, leaseDurationSeconds);
      if (current.holderIdentity !== this.identity) return;
      const released = releasedRecord(current, this.now());
      await this.coordination.replaceNamespacedLease({
        name,
        namespace,
        body: { ...lease, spec: leaseSpec(released) },
      });
      this.observed = { record: released, observedAt: this.now() };
      this.holder = undefined;
      this.opts.log.info({ identity: this.identity }, 'lease released');
    } catch (err) {
      // The lease simply expires on its own; a successor waits one lease duration.
      this.opts.log.warn({ err: describe(err) }, 'could not release the lease');
    }
  }

  private async ensureNamespace(): Promise<void> {
    if (this.namespaceEnsured) return;
    const namespace = this.opts.namespace;
    try {
      await this.core.readNamespace({ name: namespace });
    } catch (err) {
      if (!isApiError(err, 404)) {
        // 403 and friends: we may lack the right to read namespaces; the lease calls will tell.
        this.namespaceEnsured = true;
        return;
      }
      try {
        await this.core.createNamespace({
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
        });
        this.opts.log.info({ namespace }, 'created the namespace for the leader lease');
      } catch (createErr) {
        if (!isApiError(createErr, 409)) throw createErr;
      }
    }
    this.namespaceEnsured = true;
  }
}

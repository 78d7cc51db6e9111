/**
 * The NotSteered Events: a pod the capability gate kept from nodeload's scheduler gets an Event
 * saying why (`kubectl describe pod` shows it).
 *
 * At admission the pod does not exist yet — no UID, and with generateName not even a name — and the
 * admission answer must not wait on an API write. So the admission only *expects* the pod (a bounded,
 * expiring list keyed by namespace/name or namespace/generateName), and the Event is written once the
 * gateway's pod informer shows a pod that matches an expectation and carries the not-steered
 * annotation, with `regarding` naming it by name and UID. Writes are best effort: rate-limited,
 * bounded, never retried.
 *
 * Duplicates: an expectation is consumed by one pod, a UID gets at most one Event from this process,
 * and the Event's name is derived from the pod's UID, so a second replica (or a reinvocation served by
 * one) writing the same Event gets 409 AlreadyExists. A pod that already existed under that name when
 * the request came (creation then fails with AlreadyExists) never consumes the expectation.
 */
import {
  ApiException,
  EventsV1Api,
  type EventsV1Event,
  type KubeConfig,
  V1MicroTime,
} from '@kubernetes/client-node';
import { acquireToken, TokenBucket } from '../scheduler/ratelimit.js';
import type { Logger } from '../server/log.js';
import type { NotSteered } from './admit.js';
import { NOT_STEERED_ANNOTATION } from './gate.js';

export const NOT_STEERED_REASON = 'NotSteered';
export const NOT_STEERED_ACTION = 'Admit';
export const WEBHOOK_CONTROLLER = 'nodeload-webhook';
/** events.k8s.io/v1 rejects a longer note. */
const NOTE_LIMIT = 1024;

/** What the recorder reads of a pod from the cache (PodInfo has it). */
export interface PodView {
  namespace: string;
  name: string;
  uid: string;
  schedulerName: string;
  annotations: Readonly<Record<string, string>>;
}

export interface NotSteeredEventsOptions {
  /** Subscribes to the pods the informer adds or updates; returns the unsubscribe function. */
  watchPods(fn: (pod: PodView) => void): () => void;
  /** The cached pod of that name, if any. */
  lookupPod(namespace: string, name: string): PodView | undefined;
  /** Creates the Event (tests substitute a fake). */
  createEvent(event: EventsV1Event): Promise<void>;
  /** The scheduler the gate keeps pods from, for the note. */
  schedulerName: string;
  /** reportingInstance. */
  instance: string;
  log: Logger;
  /** Expectations older than this are dropped (the pod never came: refused later, or a name clash). */
  ttlMs?: number;
  maxExpected?: number;
  maxPendingWrites?: number;
  qps?: number;
  burst?: number;
  concurrency?: number;
  now?: () => number;
}

interface Expected extends NotSteered {
  at: number;
  /** UID of a pod that already had this name when the request came: not the pod being created. */
  staleUid?: string;
}

function eventName(pod: PodView): string {
  // A DNS subdomain of at most 253 characters: <pod name, cut to 200>.<uid>.
  const base = pod.name.slice(0, 200).replace(/[-.]+$/, '');
  return `${base}.${pod.uid}`;
}

export function notSteeredEvent(
  pod: PodView,
  reasons: string[],
  schedulerName: string,
  instance: string,
): EventsV1Event {
  const kept = pod.schedulerName ? `; scheduler "${pod.schedulerName}" kept` : '';
  let note = `not steered to ${schedulerName}, which does not handle this yet: ${reasons.join('; ')}${kept}`;
  if (note.length > NOTE_LIMIT) note = `${note.slice(0, NOTE_LIMIT - 1)}…`;
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: eventName(pod), namespace: pod.namespace },
    eventTime: new V1MicroTime(),
    reportingController: WEBHOOK_CONTROLLER,
    // The API server caps reportingInstance at 128 characters.
    reportingInstance: instance.slice(0, 128),
    action: NOT_STEERED_ACTION,
    reason: NOT_STEERED_REASON,
    type: 'Normal',
    note,
    regarding: { apiVersion: 'v1', kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid },
  };
}

export class NotSteeredEvents {
  private readonly byName = new Map<string, Expected>();
  /** Per namespace, the generateName expectations, oldest first. */
  private readonly byPrefix = new Map<string, Expected[]>();
  private expectedCount = 0;
  /** UIDs evented (or being evented) by this process, oldest first. */
  private readonly evented = new Set<string>();
  private readonly writes: EventsV1Event[] = [];
  private running = 0;
  private unsubscribe: (() => void) | undefined;
  private readonly bucket: TokenBucket;
  private readonly ttlMs: number;
  private readonly maxExpected: number;
  private readonly maxPendingWrites: number;
  private readonly concurrency: number;
  private readonly now: () => number;
  private idle: (() => void)[] = [];
  /** Expectations or writes dropped because a bound was reached. */
  dropped = 0;
  written = 0;
  failed = 0;

  constructor(private readonly opts: NotSteeredEventsOptions) {
    this.bucket = new TokenBucket({ qps: opts.qps ?? 5, burst: opts.burst ?? 25, now: opts.now });
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.maxExpected = opts.maxExpected ?? 1000;
    this.maxPendingWrites = opts.maxPendingWrites ?? 500;
    this.concurrency = opts.concurrency ?? 2;
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    this.unsubscribe ??= this.opts.watchPods((pod) => this.onPod(pod));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.byName.clear();
    this.byPrefix.clear();
    this.expectedCount = 0;
    this.writes.length = 0;
  }

  get pending(): number {
    return this.expectedCount;
  }

  /** Called by the admission (synchronous, never throws): the pod will get its Event once it exists. */
  expect(n: NotSteered): void {
    const now = this.now();
    this.prune(now);
    if (!n.name && !n.generateName) return;
    const key = `${n.namespace}/${n.name}`;
    const replacing = n.name !== '' && this.byName.has(key);
    if (!replacing && this.expectedCount >= this.maxExpected) {
      this.drop('expectations');
      return;
    }
    const e: Expected = { ...n, at: now };
    if (n.name) {
      const existing = this.opts.lookupPod(n.namespace, n.name);
      if (existing) e.staleUid = existing.uid;
      if (!replacing) this.expectedCount++;
      this.byName.delete(key);
      this.byName.set(key, e);
    } else {
      const list = this.byPrefix.get(n.namespace) ?? [];
      list.push(e);
      this.byPrefix.set(n.namespace, list);
      this.expectedCount++;
    }
  }

  /** Resolves when no write is queued or running (tests). */
  whenIdle(): Promise<void> {
    if (this.writes.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private drop(what: string): void {
    this.dropped++;
    if (this.dropped % 100 === 1)
      this.opts.log.warn({ dropped: this.dropped, what }, 'NotSteered Events: bound reached, dropping');
  }

  private prune(now: number): void {
    const cutoff = now - this.ttlMs;
    for (const [key, e] of this.byName) {
      if (e.at > cutoff) break;
      this.byName.delete(key);
      this.expectedCount--;
    }
    for (const [ns, list] of this.byPrefix) {
      let i = 0;
      while (i < list.length && (list[i] as Expected).at <= cutoff) i++;
      if (i === 0) continue;
      this.expectedCount -= i;
      if (i === list.length) this.byPrefix.delete(ns);
      else list.splice(0, i);
    }
  }

  private take(pod: PodView): Expected | undefined {
    const key = `${pod.namespace}/${pod.name}`;
    const exact = this.byName.get(key);
    if (exact && exact.staleUid !== pod.uid) {
      this.byName.delete(key);
      this.expectedCount--;
      return exact;
    }
    const list = this.byPrefix.get(pod.namespace);
    if (!list) return undefined;
    const i = list.findIndex((e) => pod.name.startsWith(e.generateName));
    if (i < 0) return undefined;
    const [e] = list.splice(i, 1);
    if (list.length === 0) this.byPrefix.delete(pod.namespace);
    this.expectedCount--;
    return e;
  }

  private onPod(pod: PodView): void {
    if (this.expectedCount === 0 || !pod.uid || this.evented.has(pod.uid)) return;
    // The annotation is what the webhook wrote: a pod without it is not one the gate kept.
    if (!pod.annotations[NOT_STEERED_ANNOTATION]) return;
    this.prune(this.now());
    const e = this.take(pod);
    if (!e) return;
    this.evented.add(pod.uid);
    if (this.evented.size > 10 * this.maxExpected) {
      const oldest = this.evented.values().next().value as string;
      this.evented.delete(oldest);
    }
    if (this.writes.length >= this.maxPendingWrites) {
      this.drop('writes');
      return;
    }
    this.writes.push(notSteeredEvent(pod, e.reasons, this.opts.schedulerName, this.opts.instance));
    this.pump();
  }

  private pump(): void {
    while (this.running < this.concurrency && this.writes.length > 0) {
      const event = this.writes.shift() as EventsV1Event;
      this.running++;
      void acquireToken(this.bucket)
        .then(() => this.opts.createEvent(event))
        .then(
          () => {
            this.written++;
          },
          (err: unknown) => {
            // 409: another replica (or a reinvocation) already wrote this pod's Event.
            if (err instanceof ApiException && err.code === 409) return;
            this.failed++;
            this.opts.log.debug(
              { err: err instanceof Error ? err.message : String(err), pod: event.regarding?.name },
              'NotSteered Event write failed',
            );
          },
        )
        .finally(() => {
          this.running--;
          this.pump();
          if (this.writes.length === 0 && this.running === 0) {
            const waiters = this.idle;
            this.idle = [];
            for (const w of waiters) w();
          }
        });
    }
  }
}

/** The real Event writer. */
export function kubeEventWriter(kubeConfig: KubeConfig): (event: EventsV1Event) => Promise<void> {
  const api = kubeConfig.makeApiClient(EventsV1Api);
  return async (event) => {
    await api.createNamespacedEvent({ namespace: event.metadata?.namespace ?? '', body: event });
  };
}

/**
 * The scheduler's writes to the API server: pods/binding, the PodScheduled condition and the nomination
 * through the pod status subresource, preemption's evictions, and events.k8s.io Events; plus reading
 * those Events back to rebuild the history.
 * Binds are awaited by the caller (it rate-limits them); condition patches and Events are fire-and-forget
 * through their own rate-limited, per-pod-coalescing write queue (write-queue.ts), so they never delay a
 * bind; only Events are ever dropped from it.
 */
import {
  ApiException,
  CoreV1Api,
  EventsV1Api,
  type EventsV1Event,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
} from '@kubernetes/client-node';
import { Counter, Gauge, type Registry } from 'prom-client';
import { EventSeries } from '../cluster/event-series.js';
import type { PodInfo } from '../cluster/model.js';
import { httpsRequestFn, type KubeRequestFn } from '../cluster/request-https.js';
import type { Logger } from '../server/log.js';
import { decisionEvent, decisionFromEvent } from './event-codec.js';
import type { Decision } from './explain.js';
import { evictVictim, preemptedEvent, type StatusIntent } from './preemption-writes.js';
import type { TokenBucket } from './ratelimit.js';
import { WriteQueue } from './write-queue.js';

export type BindOutcome =
  | { kind: 'bound' }
  /** 409 "already assigned": someone else (a previous leader) bound it. Never retried. */
  | { kind: 'already-bound'; message: string }
  /** 404: the pod is gone. */
  | { kind: 'pod-gone'; message: string }
  | { kind: 'failed'; message: string; status?: number };

/** What the scheduler needs from the API server (tests substitute a fake). */
export interface SchedulerApi {
  /** pods/binding with the pod's UID as precondition (an extender's bind names the pod by these only). */
  bind(pod: Pick<PodInfo, 'namespace' | 'name' | 'uid'>, node: string): Promise<BindOutcome>;
  /** Sets PodScheduled=False/Unschedulable with the message (asynchronously, best effort). */
  markUnschedulable(pod: PodInfo, message: string): void;
  /** Sets status.nominatedNodeName (preemption made room there; asynchronously, best effort). */
  nominate(pod: PodInfo, node: string): void;
  /** Clears status.nominatedNodeName (asynchronously, best effort). */
  clearNomination(pod: PodInfo): void;
  /**
   * Sets status.nominatedNodeName before the binding cycle's PreBind (NominatedNodeNameForExpectation),
   * as kube-scheduler does, synchronously: it must land before the bind. Resolves also when the write
   * fails (logged): binding goes on without it.
   */
  expectNode(pod: PodInfo, node: string): Promise<void>;
  /**
   * Evicts a preemption victim as kube-scheduler does (asynchronously, best effort): the
   * DisruptionTarget=True/PreemptionByScheduler condition, a graceful DELETE (the pod's own grace
   * period), and a `Preempted` Event naming the preemptor.
   */
  preempt(victim: PodInfo, preemptor: PodInfo, node: string): void;
  /** Writes the decision's Event (asynchronously, best effort). */
  recordDecision(decision: Decision): void;
  /** The decisions recorded in Events by this scheduler (reportingController), newest last. */
  listDecisions(max: number): Promise<Decision[]>;
  /** Waits for queued writes (bounded by the signal), then drops the rest. */
  drain(signal?: AbortSignal): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: error bodies are untyped JSON.
type Json = any;

export function apiErrorMessage(err: unknown): string {
  if (err instanceof ApiException) {
    try {
      const body = JSON.parse(String(err.body)) as Json;
      if (typeof body?.message === 'string') return body.message;
    } catch {
      // not JSON
    }
    return `HTTP ${err.code}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** A failed binding → what the scheduler does next. */
export function classifyBindError(err: unknown): BindOutcome {
  const message = apiErrorMessage(err);
  if (err instanceof ApiException) {
    if (err.code === 409 && /already (assigned|bound)/i.test(message))
      return { kind: 'already-bound', message };
    if (err.code === 404) return { kind: 'pod-gone', message };
    return { kind: 'failed', message, status: err.code };
  }
  return { kind: 'failed', message };
}

/** The strategic-merge patch for PodScheduled=False; resourceVersion makes it fail if the pod moved on (e.g. got bound). */
export function unschedulablePatch(pod: PodInfo, message: string, now: Date): Json {
  const condition: Json = {
    type: 'PodScheduled',
    status: 'False',
    reason: 'Unschedulable',
    message,
    lastProbeTime: null,
  };
  // As v1.36's (PodObservedGenerationTracking, GA): the pod generation the condition was written for.
  if (pod.generation) condition.observedGeneration = pod.generation;
  // Only a status change moves lastTransitionTime; the patch merges into the existing element otherwise.
  if (pod.scheduledCondition?.status !== 'False')
    condition.lastTransitionTime = now.toISOString().replace(/\.\d+Z$/, 'Z');
  return { metadata: { resourceVersion: pod.resourceVersion }, status: { conditions: [condition] } };
}

export function conditionUpToDate(pod: PodInfo, message: string): boolean {
  const c = pod.scheduledCondition;
  return (
    c?.status === 'False' &&
    c.reason === 'Unschedulable' &&
    c.message === message &&
    (c.observedGeneration ?? 0) === (pod.generation ?? 0)
  );
}

/**
 * How loud a failed write is: a refusal (401, 403: the ServiceAccount lacks a permission) is an admin's
 * to fix and shows at the default level; anything else (a conflict, a pod gone, a timeout) the next
 * cycle writes again.
 */
export function writeFailureLevel(err: unknown): 'warn' | 'debug' {
  return err instanceof ApiException && (err.code === 401 || err.code === 403) ? 'warn' : 'debug';
}

export interface KubeSchedulerApiOptions {
  kubeConfig: KubeConfig;
  /** reportingController of our Events: the scheduler name, as kube-scheduler does. */
  controller: string;
  /** reportingInstance: `<controller>-<identity>`. */
  instance: string;
  /** Rate limiter for condition patches and Events (binds use their own). */
  writeBucket: TokenBucket;
  log: Logger;
  writeConcurrency?: number;
  /** Queued Events beyond which new ones are dropped (pod status writes and evictions never are). */
  maxPendingEvents?: number;
  /** Where the write queue's metrics go (none without). */
  registry?: Registry;
}

export class KubeSchedulerApi implements SchedulerApi {
  private readonly core: CoreV1Api;
  private readonly events: EventsV1Api;
  /** The per-pod writes (binding, Event) on node:https; undefined behind a proxy (client-node then). */
  private readonly request: KubeRequestFn | undefined;
  private readonly writes: WriteQueue;
  private eventSeq = 0;
  /** The open FailedScheduling series per pod (keyed on its note too): repeats patch its count. */
  private readonly series = new EventSeries();
  /** Status writes queued per pod (namespace/name), merged until they run. */
  private readonly statusIntents = new Map<string, StatusIntent>();

  constructor(private readonly opts: KubeSchedulerApiOptions) {
    this.core = opts.kubeConfig.makeApiClient(CoreV1Api);
    this.events = opts.kubeConfig.makeApiClient(EventsV1Api);
    const retries = opts.registry
      ? new Counter({
          name: 'nodeload_rest_client_request_retries_total',
          help: "Requests of the scheduler's own client (bindings, Events, reading its decision history back) sent again because the API server asked for it (429, or a 5xx with Retry-After: API Priority and Fairness throttling), by status code and verb; as client-go's rest_client_request_retries_total.",
          labelNames: ['code', 'verb'],
          registers: [opts.registry],
        })
      : undefined;
    this.request = httpsRequestFn(opts.kubeConfig, {
      ...(retries
        ? { onRetry: (code: number, verb: string) => retries.inc({ code: String(code), verb }) }
        : {}),
    });
    const dropped = opts.registry
      ? new Counter({
          name: 'nodeload_scheduler_events_dropped_total',
          help: "Events the scheduler did not write because its queue already held the maximum (Events are best effort, as in client-go's broadcaster; pod status writes and evictions are never dropped).",
          registers: [opts.registry],
        })
      : undefined;
    this.writes = new WriteQueue({
      bucket: opts.writeBucket,
      concurrency: opts.writeConcurrency ?? 4,
      // An Event backlog recruits writers (one per 250 queued, up to 16): see write-queue.ts.
      maxConcurrency: Math.max(opts.writeConcurrency ?? 4, 16),
      maxPendingEvents: opts.maxPendingEvents ?? 5000,
      log: opts.log,
      failureLevel: writeFailureLevel,
      describeError: apiErrorMessage,
      ...(dropped ? { onDrop: () => dropped.inc() } : {}),
    });
    if (opts.registry) {
      const writes = this.writes;
      new Gauge({
        name: 'nodeload_scheduler_pending_writes',
        help: 'Writes queued behind the scheduler\'s write rate limit, by kind: "pod" (status patches and evictions), "event".',
        labelNames: ['kind'],
        registers: [opts.registry],
        collect() {
          this.set({ kind: 'pod' }, writes.queued('pod'));
          this.set({ kind: 'event' }, writes.queued('event'));
        },
      });
    }
  }

  async bind(pod: Pick<PodInfo, 'namespace' | 'name' | 'uid'>, node: string): Promise<BindOutcome> {
    const body = {
      apiVersion: 'v1',
      kind: 'Binding',
      // The UID precondition keeps a recreated pod of the same name from being bound by an old decision.
      metadata: { name: pod.name, namespace: pod.namespace, ...(pod.uid ? { uid: pod.uid } : {}) },
      target: { apiVersion: 'v1', kind: 'Node', name: node },
    };
    try {
      await this.post(
        `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}/binding`,
        body,
        () => this.core.createNamespacedPodBinding({ name: pod.name, namespace: pod.namespace, body }),
      );
      return { kind: 'bound' };
    } catch (err) {
      return classifyBindError(err);
    }
  }

  /** POSTs on node:https, or through client-node (`viaClient`) when the cluster is behind a proxy. */
  private async post(path: string, body: unknown, viaClient: () => Promise<unknown>): Promise<void> {
    if (this.request) await this.request({ method: 'POST', path, body });
    else await viaClient();
  }

  async expectNode(pod: PodInfo, node: string): Promise<void> {
    try {
      await this.core.patchNamespacedPodStatus(
        { name: pod.name, namespace: pod.namespace, body: { status: { nominatedNodeName: node } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
    } catch (err) {
      this.opts.log.warn(
        { pod: `${pod.namespace}/${pod.name}`, node, err: apiErrorMessage(err) },
        'could not nominate the pod to its node before binding its volumes; binding goes on',
      );
    }
  }

  markUnschedulable(pod: PodInfo, message: string): void {
    if (conditionUpToDate(pod, message)) return;
    this.writeStatus(pod, { condition: { pod, message } });
  }

  nominate(pod: PodInfo, node: string): void {
    this.writeStatus(pod, { nominated: node });
  }

  clearNomination(pod: PodInfo): void {
    this.writeStatus(pod, { nominated: null });
  }

  /**
   * The condition and the nomination of one pod travel in one status patch (as kube-scheduler's
   * updatePod), so neither write's resourceVersion races the other: later calls merge into the write
   * still queued.
   */
  private writeStatus(pod: PodInfo, change: Partial<StatusIntent>): void {
    const key = `${pod.namespace}/${pod.name}`;
    const intent: StatusIntent = { ...this.statusIntents.get(key), ...change, pod };
    this.statusIntents.set(key, intent);
    this.writes.push({ key: `status:${key}`, kind: 'pod', run: () => this.patchStatus(key) });
  }

  private async patchStatus(key: string): Promise<void> {
    const intent = this.statusIntents.get(key);
    this.statusIntents.delete(key);
    if (!intent) return;
    const { pod, condition, nominated } = intent;
    const status = nominated === undefined ? {} : { nominatedNodeName: nominated };
    // A condition carries its resourceVersion precondition; on a 409 (the pod moved on: the next attempt
    // writes a fresh condition) the nomination still goes, without it.
    const bodies: Json[] = [];
    if (condition) {
      const body = unschedulablePatch(condition.pod, condition.message, new Date());
      bodies.push({ ...body, status: { ...body.status, ...status } });
    }
    if (nominated !== undefined) bodies.push({ status });
    for (const body of bodies) {
      try {
        await this.core.patchNamespacedPodStatus(
          { name: pod.name, namespace: pod.namespace, body },
          setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
        );
        return;
      } catch (err) {
        if (!(err instanceof ApiException && (err.code === 409 || err.code === 404))) throw err;
        if (err.code === 404) return;
      }
    }
  }

  preempt(victim: PodInfo, preemptor: PodInfo, node: string): void {
    const seq = this.eventSeq++;
    const event = preemptedEvent(victim, preemptor, node, {
      name: `${victim.name.slice(0, 200)}.${(Date.now() * 1000 + (seq % 1000)).toString(16)}`,
      controller: this.opts.controller,
      instance: this.opts.instance,
    });
    this.writes.push({
      key: `preempt:${victim.namespace}/${victim.name}`,
      kind: 'pod',
      run: () => evictVictim(this.core, this.events, victim, preemptor, event),
    });
  }

  recordDecision(decision: Decision): void {
    const ev = decisionEvent(decision);
    const podKey = `${decision.namespace}/${decision.pod}`;
    const now = Date.now();
    if (ev.reason === 'FailedScheduling' && this.continueSeries(podKey, ev, now)) return;
    if (ev.reason === 'Scheduled') this.series.forget(podKey);
    const seq = this.eventSeq++;
    const body: EventsV1Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        // kube-scheduler's naming: <pod>.<hex timestamp>; the sequence keeps same-millisecond names apart.
        name: `${decision.pod.slice(0, 200)}.${(now * 1000 + (seq % 1000)).toString(16)}`,
        namespace: ev.namespace,
        annotations: ev.annotations,
      },
      eventTime: new V1MicroTime(),
      reportingController: this.opts.controller,
      reportingInstance: this.opts.instance.slice(0, 128),
      action: ev.action,
      reason: ev.reason,
      type: ev.type,
      note: ev.note,
      regarding: ev.regarding,
    };
    if (ev.reason === 'FailedScheduling')
      this.series.started(podKey, body.metadata?.name ?? '', now, ev.note);
    this.writes.push({
      key: `event:${seq}`,
      kind: 'event',
      warning: ev.type === 'Warning',
      run: () =>
        this.post(`/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(ev.namespace)}/events`, body, () =>
          this.events.createNamespacedEvent({ namespace: ev.namespace, body }),
        ),
    });
  }

  /**
   * client-go's event series: the same FailedScheduling (same pod, same message) within six minutes of
   * its last occurrence bumps series.count and lastObservedTime on the Event already written, instead
   * of a new object. Several patches of one series may be queued at once: the key keeps only the last.
   */
  private continueSeries(podKey: string, ev: ReturnType<typeof decisionEvent>, now: number): boolean {
    const repeat = this.series.repeat(podKey, now, ev.note);
    if (!repeat) return false;
    const { name, count } = repeat;
    this.writes.push({
      key: `series:${podKey}`,
      kind: 'event',
      warning: true, // a series is FailedScheduling's
      run: async () => {
        try {
          await this.events.patchNamespacedEvent(
            {
              name,
              namespace: ev.namespace,
              body: {
                series: { count, lastObservedTime: new V1MicroTime(now).toISOString() },
                metadata: { annotations: ev.annotations },
              },
            },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
        } catch (err) {
          // The Event expired (TTL) or was never written: the next failure starts a new series.
          if (err instanceof ApiException && err.code === 404) this.series.forget(podKey, name);
          else throw err;
        }
      },
    });
    return true;
  }

  async listDecisions(max: number): Promise<Decision[]> {
    const out: Decision[] = [];
    let cont: string | undefined;
    const fieldSelector = `reportingController=${this.opts.controller}`;
    do {
      // On node:https the page is one JSON.parse: client-node's serializer walks every field of every
      // Event (each ~2.2 KB with its decision), and a gateway after a busy hour reads thousands at start.
      const page: { items: unknown[]; metadata?: { _continue?: string; continue?: string } } = this.request
        ? (JSON.parse(
            await this.request({
              method: 'GET',
              path: `/apis/events.k8s.io/v1/events?${new URLSearchParams({
                fieldSelector,
                limit: '500',
                ...(cont ? { continue: cont } : {}),
              })}`,
            }),
          ) as { items: unknown[]; metadata?: { continue?: string } })
        : await this.events.listEventForAllNamespaces({ fieldSelector, limit: 500, _continue: cont });
      for (const ev of page.items) {
        const d = decisionFromEvent(ev);
        if (d) out.push(d);
      }
      cont = page.metadata?._continue || page.metadata?.continue || undefined;
    } while (cont && out.length < max * 4);
    out.sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
    return out.slice(-max);
  }

  async drain(signal?: AbortSignal): Promise<void> {
    if (!signal?.aborted) {
      await Promise.race([
        this.writes.whenIdle(),
        new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true })),
      ]);
    }
    this.writes.clear();
    this.statusIntents.clear();
  }
}

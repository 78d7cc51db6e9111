/**
 * A list+watch informer that keeps going. Its watches follow the contract of client-node's `Watch`
 * (callbacks per event, done once, a 30 s inactivity timeout) but run on node:https with their own
 * decoder (watch-https.ts); it does not use client-node's `ListWatch`, because ListWatch 2.0.1 stops
 * for good on any error but 410, reports its own stop() as an error, can start a watch after stop()
 * when stop() lands during a list or a connect, and hands out list items as classes with Date fields.
 *
 * Here: every object reaches the handlers as raw JSON; any failure is retried with jittered
 * exponential backoff (1 s → 30 s); 410 Gone relists at once; a watch that shows no event and no
 * reconnect for `silenceMs` is torn down and re-established; stop() is final. Every callback of a
 * superseded attempt is ignored (the `epoch` check), so nothing resurrects a stopped informer.
 *
 * With `pollIntervalMs` the informer lists periodically instead of watching (metrics.k8s.io has no
 * watch); each list is reconciled against the previous one exactly like a relist.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { httpStatusOf, type KubeObject, objectKey, toPlainJson } from './kube-object.js';
import type { WatchFn } from './watch-fn.js';
import { httpsWatchFn } from './watch-https.js';

export type { WatchFn } from './watch-fn.js';

export interface ListRequest {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ListResult {
  metadata?: { resourceVersion?: string };
  items: unknown[];
}

export type ListFn = (request: ListRequest) => Promise<ListResult>;

export interface InformerHandlers<T extends KubeObject = KubeObject> {
  add?(obj: T): void;
  /** `old` is what was retained of the previous state (all of it unless `retain` says otherwise). */
  update?(obj: T, old: T): void;
  /**
   * The final state when the watch saw the delete; what was retained of the last known state when a
   * relist found it gone.
   */
  delete?(obj: T): void;
}

export interface InformerStats {
  /** Successful lists (initial, relists, polls). */
  lists: number;
  /** Watch connections opened. */
  watches: number;
  /** Recoveries from a failure (list/watch error, silent watch); each waited out a backoff. */
  restarts: number;
  /** Of those, restarts because the watch went silent. */
  silentRestarts: number;
  /** 410 Gone: the resourceVersion had expired, so the informer relisted. */
  expired: number;
  /** Re-watches after the watch's 30 s inactivity timeout (normal for quiet resources). */
  watchTimeouts: number;
  events: { added: number; modified: number; deleted: number; bookmark: number; error: number };
  lastError?: string;
}

export interface ResilientInformerOptions<T extends KubeObject = KubeObject> {
  /** Short resource name for logs and metrics, e.g. "pods". */
  name: string;
  /** Collection path, e.g. /api/v1/pods. */
  path: string;
  list: ListFn;
  /** Watch mode (default): the watch function, usually `watchFnFor(kubeConfig)`. */
  watch?: WatchFn;
  /** Poll mode: list every this many ms instead of watching. */
  pollIntervalMs?: number;
  labelSelector?: string;
  fieldSelector?: string;
  log: Logger;
  /** List items → raw JSON. Default: a deep copy with Dates as ISO strings. */
  normalise?: (item: unknown) => T;
  /** What makes two states of one object different. Default: metadata.resourceVersion. */
  versionOf?: (obj: T) => string;
  /**
   * What is kept of each object between events (default: all of it). It is what `versionOf`, the
   * update handler's `old` and the delete handler after a relist get; a consumer that converts objects
   * on arrival keeps only their identity (see identityOf) instead of a second copy of every object.
   */
  retain?: (obj: T) => T;
  backoff?: { initialMs?: number; maxMs?: number };
  /** A watch with no event and no reconnect for this long is restarted. Default 60 s. */
  silenceMs?: number;
  now?: () => number;
  random?: () => number;
}

type Phase = 'idle' | 'listing' | 'watching' | 'waiting' | 'stopped';

interface WatchAttempt {
  epoch: number;
  done: boolean;
  startedAt: number;
  events: number;
  request?: { abort(): void };
}

/** Below this, a watch the server closed without sending anything counts as a failure (no hot loop). */
const MIN_HEALTHY_WATCH_MS = 1000;

/**
 * The informers' watches for a cluster: one call per process, so that they share one connection pool.
 * Watched objects come without metadata.managedFields (list items keep it): the cache converts every
 * object on arrival and reads none of it, and leaving it unparsed halves the cost of decoding a pod.
 */
export function watchFnFor(kubeConfig: KubeConfig): WatchFn {
  return httpsWatchFn(kubeConfig, { withoutManagedFields: true });
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (err && typeof err === 'object') {
    const s = err as { message?: unknown; reason?: unknown };
    return String(s.message ?? s.reason ?? JSON.stringify(err));
  }
  return String(err);
}

export class ResilientInformer<T extends KubeObject = KubeObject> {
  readonly synced: Promise<void>;
  readonly stats: InformerStats = {
    lists: 0,
    watches: 0,
    restarts: 0,
    silentRestarts: 0,
    expired: 0,
    watchTimeouts: 0,
    events: { added: 0, modified: 0, deleted: 0, bookmark: 0, error: 0 },
  };

  private readonly known = new Map<string, T>();
  private resourceVersion = '';
  private phase: Phase = 'idle';
  /** Bumped whenever the current attempt is abandoned (stop, silent watch); stale callbacks compare. */
  private epoch = 0;
  private attempt: WatchAttempt | undefined;
  private lastActivity = 0;
  private backoffMs = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private isSynced = false;
  private resolveSynced!: () => void;

  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly silenceMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly normalise: (item: unknown) => T;
  private readonly versionOf: (obj: T) => string;
  private readonly retain: (obj: T) => T;

  constructor(
    private readonly opts: ResilientInformerOptions<T>,
    private readonly handlers: InformerHandlers<T>,
  ) {
    if (!opts.watch && !opts.pollIntervalMs)
      throw new Error(`informer ${opts.name}: need watch or pollIntervalMs`);
    this.synced = new Promise((resolve) => {
      this.resolveSynced = resolve;
    });
    this.initialBackoffMs = opts.backoff?.initialMs ?? 1000;
    this.maxBackoffMs = opts.backoff?.maxMs ?? 30_000;
    this.silenceMs = opts.silenceMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.normalise = opts.normalise ?? ((item) => toPlainJson(item) as T);
    this.versionOf = opts.versionOf ?? ((obj) => obj.metadata?.resourceVersion ?? '');
    this.retain = opts.retain ?? ((obj) => obj);
  }

  get name(): string {
    return this.opts.name;
  }

  hasSynced(): boolean {
    return this.isSynced;
  }

  /** Objects currently known. */
  get size(): number {
    return this.known.size;
  }

  latestResourceVersion(): string {
    return this.resourceVersion;
  }

  start(): void {
    if (this.phase !== 'idle') return;
    if (this.opts.watch) {
      this.watchdog = setInterval(
        () => this.checkSilence(),
        Math.max(1000, Math.min(this.silenceMs / 4, 15_000)),
      );
      this.watchdog.unref();
    }
    void this.cycle(this.epoch);
  }

  /** Final: nothing restarts the informer afterwards, not even start(). */
  stop(): void {
    if (this.phase === 'stopped') return;
    this.phase = 'stopped';
    this.epoch++;
    clearTimeout(this.retryTimer);
    clearInterval(this.watchdog);
    this.endAttempt();
  }

  /** Drops the current list/watch and starts again after `delayMs`, from the last resourceVersion. */
  restartWatch(reason = 'requested', delayMs = 0): void {
    if (this.phase === 'stopped' || this.phase === 'idle') return;
    this.opts.log.info({ resource: this.opts.name, reason }, 'restarting watch');
    this.abandonAndRetry(delayMs);
  }

  /** One step: list if needed, then watch (or wait for the next poll). Failures land in fail(). */
  private async cycle(epoch: number): Promise<void> {
    if (epoch !== this.epoch || this.phase === 'stopped') return;
    const polling = !this.opts.watch;
    try {
      if (polling || !this.resourceVersion) {
        this.enter('listing');
        const listed = await this.relist(epoch);
        if (!listed) return;
      }
      if (polling) {
        this.schedule(epoch, this.opts.pollIntervalMs as number);
        return;
      }
      await this.watch(epoch);
    } catch (err) {
      const phase = this.phase as Phase;
      if (epoch !== this.epoch || phase === 'stopped') return;
      this.fail(epoch, err, polling ? 'poll' : phase === 'watching' ? 'watch' : 'list');
    }
  }

  private async relist(epoch: number): Promise<boolean> {
    const result = await this.opts.list({
      labelSelector: this.opts.labelSelector,
      fieldSelector: this.opts.fieldSelector,
    });
    if (epoch !== this.epoch || this.phase === 'stopped') return false;
    const items = (result.items ?? []).map((item) => this.normalise(item));
    this.stats.lists++;
    this.backoffMs = 0;
    this.lastActivity = this.now();
    this.reconcile(items);
    this.resourceVersion = result.metadata?.resourceVersion ?? '';
    if (!this.isSynced) {
      this.isSynced = true;
      this.resolveSynced();
    }
    return true;
  }

  /** Makes `known` equal the list, firing delete/add/update for the differences. */
  private reconcile(items: T[]): void {
    const listed = new Map<string, T>();
    for (const obj of items) listed.set(objectKey(obj), obj);
    for (const [key, old] of this.known) {
      if (listed.has(key)) continue;
      this.known.delete(key);
      this.call('delete', old);
    }
    for (const [key, obj] of listed) this.upsert(key, obj);
  }

  private upsert(key: string, obj: T): void {
    const old = this.known.get(key);
    this.known.set(key, this.retain(obj));
    if (!old) this.call('add', obj);
    else {
      const version = this.versionOf(obj);
      if (version === '' || version !== this.versionOf(old)) this.call('update', obj, old);
    }
  }

  private call(kind: 'add' | 'update' | 'delete', obj: T, old?: T): void {
    try {
      if (kind === 'add') this.handlers.add?.(obj);
      else if (kind === 'update') this.handlers.update?.(obj, old as T);
      else this.handlers.delete?.(obj);
    } catch (err) {
      this.opts.log.error(
        { err, resource: this.opts.name, key: objectKey(obj) },
        `informer ${kind} handler failed`,
      );
    }
  }

  private async watch(epoch: number): Promise<void> {
    const watchFn = this.opts.watch as WatchFn;
    const attempt: WatchAttempt = { epoch, done: false, startedAt: this.now(), events: 0 };
    this.attempt = attempt;
    this.enter('watching');
    this.stats.watches++;
    const query = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      labelSelector: this.opts.labelSelector,
      fieldSelector: this.opts.fieldSelector,
    };
    const request = await watchFn(
      this.opts.path,
      query,
      (type, obj) => this.onEvent(attempt, type, obj),
      (err) => this.onDone(attempt, err),
    );
    // Ended (or abandoned) while connecting: make sure the connection goes away.
    if (attempt.done || attempt.epoch !== this.epoch) request.abort();
    else attempt.request = request;
  }

  private current(attempt: WatchAttempt): boolean {
    return !attempt.done && attempt.epoch === this.epoch && this.phase !== 'stopped';
  }

  private onEvent(attempt: WatchAttempt, type: string, raw: unknown): void {
    if (!this.current(attempt)) return;
    this.lastActivity = this.now();
    attempt.events++;
    const obj = raw as T;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        this.stats.events[type === 'ADDED' ? 'added' : 'modified']++;
        this.upsert(objectKey(obj), obj);
        break;
      case 'DELETED': {
        this.stats.events.deleted++;
        const key = objectKey(obj);
        if (this.known.delete(key)) this.call('delete', obj);
        break;
      }
      case 'BOOKMARK':
        this.stats.events.bookmark++;
        break;
      case 'ERROR': {
        this.stats.events.error++;
        this.endAttempt();
        const status = raw as { code?: number; message?: string; reason?: string };
        if (status?.code === 410) this.expire(attempt.epoch, status.message ?? 'Gone');
        else
          this.fail(
            attempt.epoch,
            Object.assign(new Error(errorText(status)), { code: status?.code }),
            'watch',
          );
        return;
      }
      default:
        return;
    }
    const rv = obj?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    this.backoffMs = 0;
  }

  private onDone(attempt: WatchAttempt, err: unknown): void {
    if (!this.current(attempt)) return;
    attempt.done = true;
    this.attempt = undefined;
    const epoch = attempt.epoch;
    if (!err) {
      // The server ended the watch (its request timeout). Re-watch now, unless it did so at once.
      const quick = attempt.events === 0 && this.now() - attempt.startedAt < MIN_HEALTHY_WATCH_MS;
      if (quick) this.fail(epoch, new Error('watch closed by the server immediately'), 'watch');
      else this.schedule(epoch, 0);
      return;
    }
    if ((err as { name?: string }).name === 'TimeoutError') {
      // The watch's inactivity timeout: normal for a quiet resource; it already waited 30 s.
      this.stats.watchTimeouts++;
      this.schedule(epoch, 0);
      return;
    }
    if (httpStatusOf(err) === 410) {
      this.expire(epoch, errorText(err));
      return;
    }
    this.fail(epoch, err, 'watch');
  }

  private expire(epoch: number, message: string): void {
    this.stats.expired++;
    this.resourceVersion = '';
    this.opts.log.info({ resource: this.opts.name, message }, 'watch expired (410 Gone); relisting');
    this.schedule(epoch, 0);
  }

  private fail(epoch: number, err: unknown, during: 'list' | 'watch' | 'poll'): void {
    this.endAttempt();
    const delay = this.nextBackoff();
    this.stats.restarts++;
    this.stats.lastError = errorText(err);
    const status = httpStatusOf(err);
    const fields = { resource: this.opts.name, path: this.opts.path, status, retryInMs: delay };
    if (status === 404) {
      this.opts.log.warn(
        fields,
        `${this.opts.path} is not served (404): CRD not installed or API not available yet; retrying`,
      );
    } else {
      this.opts.log.warn({ ...fields, err }, `${during} failed; retrying`);
    }
    this.schedule(epoch, delay);
  }

  private nextBackoff(): number {
    this.backoffMs =
      this.backoffMs > 0 ? Math.min(this.backoffMs * 2, this.maxBackoffMs) : this.initialBackoffMs;
    // ±20 % so that informers failing together do not retry in lockstep.
    return Math.round(this.backoffMs * (0.8 + 0.4 * this.random()));
  }

  private schedule(epoch: number, delayMs: number): void {
    if (epoch !== this.epoch || this.phase === 'stopped') return;
    this.enter('waiting');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.cycle(epoch), delayMs);
  }

  private checkSilence(): void {
    if (this.phase !== 'watching' && this.phase !== 'listing') return;
    const silentFor = this.now() - this.lastActivity;
    if (silentFor < this.silenceMs) return;
    this.stats.silentRestarts++;
    this.stats.restarts++;
    this.opts.log.warn(
      { resource: this.opts.name, phase: this.phase, silentForMs: silentFor },
      'no watch event and no reconnect for too long; restarting',
    );
    this.abandonAndRetry(0);
  }

  /** Gives up the current list/watch (its late callbacks are ignored) and schedules a fresh cycle. */
  private abandonAndRetry(delayMs: number): void {
    this.endAttempt();
    this.epoch++;
    this.schedule(this.epoch, delayMs);
  }

  private endAttempt(): void {
    const attempt = this.attempt;
    this.attempt = undefined;
    if (!attempt) return;
    attempt.done = true;
    attempt.request?.abort();
  }

  private enter(phase: Phase): void {
    if (this.phase === 'stopped') return;
    this.phase = phase;
    this.lastActivity = this.now();
  }
}

/**
 * Watch on nodeloads: a chunked stream of JSON lines `{"type":…,"object":…}` as the apiserver sends
 * them. Without a resourceVersion (or "0") the stream opens with ADDED events for the current objects;
 * from a list's resourceVersion it replays what changed since, so `kubectl get -w` (list, then watch
 * from the list's version) misses nothing. Selectors apply to both the old and new state, so an object
 * that starts or stops matching is seen as ADDED or DELETED, as the watch cache does.
 */
import type { Response } from 'express';
import { badRequest, failureStatus, GROUP_VERSION, NODELOADS, type Status } from './api.js';
import { matchesFilter, type NodeLoadObject, type ObjectFilter } from './nodeloads.js';
import type { WatchEventType } from './schema.js';
import type { NodeLoadStore, StoreEvent } from './store.js';

export interface WatchEvent<T = unknown> {
  type: WatchEventType;
  object: T;
}

/** What a watcher with this filter sees of a store event, if anything. */
export function filterEvent(e: StoreEvent, filter: ObjectFilter): WatchEvent<NodeLoadObject> | undefined {
  const now = matchesFilter(e.object, filter);
  if (e.type === 'ADDED') return now ? { type: 'ADDED', object: e.object } : undefined;
  if (e.type === 'DELETED') return now ? { type: 'DELETED', object: e.object } : undefined;
  const before = e.previous ? matchesFilter(e.previous, filter) : false;
  if (before && now) return { type: 'MODIFIED', object: e.object };
  if (now) return { type: 'ADDED', object: e.object };
  if (before && e.previous) {
    // Stopped matching: its last matching state, at this event's version.
    return {
      type: 'DELETED',
      object: {
        ...e.previous,
        metadata: { ...e.previous.metadata, resourceVersion: String(e.resourceVersion) },
      },
    };
  }
  return undefined;
}

export interface WatchParams {
  filter: ObjectFilter;
  /** undefined, "" or "0": start from the current state (synthetic ADDED events). */
  resourceVersion?: string;
  /** sendInitialEvents=true: ADDED events for the current state, then a BOOKMARK marking their end. */
  sendInitialEvents?: boolean;
  allowBookmarks: boolean;
}

export type WatchStart =
  | { ok: true; events: WatchEvent<NodeLoadObject>[]; initialEventsEnd: boolean }
  | { ok: false; status: Status };

function byName(a: NodeLoadObject, b: NodeLoadObject): number {
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

/** The events a new watch opens with; call it in the same tick as subscribing so nothing falls between. */
export function watchStart(store: NodeLoadStore, params: WatchParams): WatchStart {
  const rv = params.resourceVersion;
  if (params.sendInitialEvents || rv === undefined || rv === '' || rv === '0') {
    const events = [...store.list()]
      .filter((o) => matchesFilter(o, params.filter))
      .sort(byName)
      .map((object): WatchEvent<NodeLoadObject> => ({ type: 'ADDED', object }));
    return { ok: true, events, initialEventsEnd: params.sendInitialEvents === true && params.allowBookmarks };
  }
  if (!/^\d+$/.test(rv))
    throw badRequest(`resourceVersion: Invalid value: "${rv}": must be a decimal resource version`);
  const since = store.eventsSince(Number(rv));
  if (!since.ok) {
    return {
      ok: false,
      status: failureStatus(
        410,
        'Expired',
        `too old resource version: ${rv} (current ${store.resourceVersion})`,
      ),
    };
  }
  const events: WatchEvent<NodeLoadObject>[] = [];
  for (const e of since.events) {
    const seen = filterEvent(e, params.filter);
    if (seen) events.push(seen);
  }
  return { ok: true, events, initialEventsEnd: false };
}

export function bookmark(resourceVersion: string, initialEventsEnd: boolean): WatchEvent {
  return {
    type: 'BOOKMARK',
    object: {
      kind: NODELOADS.kind,
      apiVersion: GROUP_VERSION,
      metadata: {
        resourceVersion,
        ...(initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
      },
    },
  };
}

export interface ServeWatchOptions extends WatchParams {
  /** The stream ends after this long; clients re-watch from the last version they saw. */
  timeoutMs: number;
  /** Object, Table or PartialObjectMetadata, as negotiated. */
  render(obj: NodeLoadObject): unknown;
  /** Periodic BOOKMARKs keep a quiet watch's version fresh (only when the client allows them). */
  bookmarkIntervalMs?: number;
  /** A client that reads slower than this many bytes are queued is cut off (it re-watches). */
  maxBufferedBytes?: number;
}

/** Streams the watch on `res` until the timeout, the client going away, or a slow client being cut off. */
export function serveWatch(res: Response, store: NodeLoadStore, opts: ServeWatchOptions): void {
  const start = watchStart(store, opts);
  res.status(200);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Cache-Control', 'no-cache, private');
  res.flushHeaders();
  const maxBuffered = opts.maxBufferedBytes ?? 8 << 20;
  let closed = false;
  let timeout: NodeJS.Timeout | undefined;
  let bookmarks: NodeJS.Timeout | undefined;
  let unsubscribe = () => {};
  const close = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearTimeout(timeout);
    clearInterval(bookmarks);
    if (!res.writableEnded) res.end();
  };
  const send = (event: WatchEvent) => {
    if (closed) return;
    res.write(`${JSON.stringify(event)}\n`);
    if (res.writableLength > maxBuffered) close();
  };
  const sendObject = (e: WatchEvent<NodeLoadObject>) => send({ type: e.type, object: opts.render(e.object) });

  if (!start.ok) {
    send({ type: 'ERROR', object: start.status });
    close();
    return;
  }
  unsubscribe = store.subscribe((e) => {
    const seen = filterEvent(e, opts.filter);
    if (seen) sendObject(seen);
  });
  res.on('close', close);
  for (const e of start.events) sendObject(e);
  if (start.initialEventsEnd) send(bookmark(store.resourceVersion, true));

  timeout = setTimeout(close, opts.timeoutMs);
  if (opts.allowBookmarks && opts.bookmarkIntervalMs) {
    bookmarks = setInterval(() => send(bookmark(store.resourceVersion, false)), opts.bookmarkIntervalMs);
  }
}

/** The apiserver's default watch length: a random 30–60 min, so reconnects of many clients spread out. */
export function defaultWatchTimeoutMs(random: () => number = Math.random): number {
  return Math.round(1800_000 * (1 + random()));
}

/**
 * The cache's informers on /metrics: how often each listed, watched and recovered, and what its watch
 * delivered. Read at scrape time from the informers' own counters (InformerStats), so the hot path
 * (one watch event) pays nothing for them. A pod the scheduler never saw shows here first: `added`
 * falling behind the pods created, or restarts without a relist.
 */
import { Counter, type Registry } from 'prom-client';
import type { InformerStats } from './informer.js';

export interface InformerStatsSource {
  informerStats(): Partial<Record<string, InformerStats>>;
}

/** Counters that are totals kept elsewhere: each scrape sets them to the informers' values. */
function mirrored(
  registry: Registry,
  name: string,
  help: string,
  labelNames: string[],
  read: (set: (labels: Record<string, string>, value: number) => void) => void,
): void {
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      read((labels, value) => {
        if (value > 0) this.inc(labels, value);
      });
    },
  });
}

export function registerInformerMetrics(registry: Registry, cache: InformerStatsSource): void {
  const each = (fn: (resource: string, s: InformerStats) => void) => {
    for (const [resource, s] of Object.entries(cache.informerStats())) if (s) fn(resource, s);
  };
  mirrored(
    registry,
    'nodeload_cache_lists_total',
    'Successful lists (initial, relists, polls) by the cache, by resource.',
    ['resource'],
    (set) => each((resource, s) => set({ resource }, s.lists)),
  );
  mirrored(
    registry,
    'nodeload_cache_watches_total',
    'Watch connections the cache opened, by resource.',
    ['resource'],
    (set) => each((resource, s) => set({ resource }, s.watches)),
  );
  mirrored(
    registry,
    'nodeload_cache_watch_restarts_total',
    'Watch recoveries by resource and reason: "error" (a failed list or watch, retried with backoff), ' +
      '"silent" (no event and no reconnect for too long), "expired" (410 Gone: relisted), ' +
      '"timeout" (the watch\'s inactivity timeout on a quiet resource: normal).',
    ['resource', 'reason'],
    (set) =>
      each((resource, s) => {
        set({ resource, reason: 'error' }, s.restarts - s.silentRestarts);
        set({ resource, reason: 'silent' }, s.silentRestarts);
        set({ resource, reason: 'expired' }, s.expired);
        set({ resource, reason: 'timeout' }, s.watchTimeouts);
      }),
  );
  mirrored(
    registry,
    'nodeload_cache_watch_events_total',
    'Watch events the cache received, by resource and type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR).',
    ['resource', 'type'],
    (set) =>
      each((resource, s) => {
        set({ resource, type: 'ADDED' }, s.events.added);
        set({ resource, type: 'MODIFIED' }, s.events.modified);
        set({ resource, type: 'DELETED' }, s.events.deleted);
        set({ resource, type: 'BOOKMARK' }, s.events.bookmark);
        set({ resource, type: 'ERROR' }, s.events.error);
      }),
  );
}

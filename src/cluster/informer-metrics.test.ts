import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { InformerStats } from './informer.js';
import { registerInformerMetrics } from './informer-metrics.js';

function stats(over: Partial<InformerStats> = {}): InformerStats {
  return {
    lists: 1,
    watches: 3,
    restarts: 2,
    silentRestarts: 1,
    expired: 0,
    watchTimeouts: 4,
    events: { added: 10, modified: 7, deleted: 2, bookmark: 1, error: 0 },
    ...over,
  };
}

describe('registerInformerMetrics', () => {
  it('reads each informer’s counters at scrape time, by resource, reason and type', async () => {
    const registry = new Registry();
    const current: Record<string, InformerStats> = { pods: stats() };
    registerInformerMetrics(registry, { informerStats: () => current });
    const first = await registry.metrics();
    expect(first).toContain('nodeload_cache_lists_total{resource="pods"} 1');
    expect(first).toContain('nodeload_cache_watches_total{resource="pods"} 3');
    // restarts counts the silent ones too: "error" is the rest.
    expect(first).toContain('nodeload_cache_watch_restarts_total{resource="pods",reason="error"} 1');
    expect(first).toContain('nodeload_cache_watch_restarts_total{resource="pods",reason="silent"} 1');
    expect(first).toContain('nodeload_cache_watch_restarts_total{resource="pods",reason="timeout"} 4');
    expect(first).toContain('nodeload_cache_watch_events_total{resource="pods",type="ADDED"} 10');
    expect(first).not.toContain('type="ERROR"');

    // The next scrape shows the informer's values then, not a sum of scrapes.
    current['pods'] = stats({ events: { added: 25, modified: 7, deleted: 2, bookmark: 1, error: 0 } });
    current['nodes'] = stats({ lists: 2 });
    const second = await registry.metrics();
    expect(second).toContain('nodeload_cache_watch_events_total{resource="pods",type="ADDED"} 25');
    expect(second).toContain('nodeload_cache_lists_total{resource="nodes"} 2');
  });
});

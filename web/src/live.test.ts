import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type DashboardState,
  type LiveData,
  MAX_DECISIONS,
  mergeDecisions,
  startLiveData,
  trendSample,
} from './live.js';
import type { DecisionSummary, NodeView, RuleView } from './operations.js';
import { Store } from './store.js';

function decision(id: string, time: string): DecisionSummary {
  return {
    id,
    time,
    namespace: 'ns',
    pod: id,
    result: 'SCHEDULED',
    engine: 'NATIVE',
    node: 'a',
    message: '',
    attempts: 1,
    totalNodes: 1,
    feasibleNodes: 1,
    algorithmMs: 1,
    latencyMs: 1,
    e2eLatencyMs: 1,
    rebuilt: false,
  };
}

describe('mergeDecisions', () => {
  it('keeps one entry per id, newest first', () => {
    const a = decision('a', '2026-11-29T12:00:01Z');
    const b = decision('b', '2026-11-29T12:00:02Z');
    const c = decision('c', '2026-11-29T12:00:03Z');
    expect(mergeDecisions([b, a], [c, b]).map((d) => d.id)).toEqual(['c', 'b', 'a']);
  });

  it(`holds at most ${MAX_DECISIONS}`, () => {
    const many = Array.from({ length: MAX_DECISIONS + 20 }, (_, i) =>
      decision(`d${i}`, new Date(Date.UTC(2026, 10, 29, 12, 0, i)).toISOString()),
    );
    const merged = mergeDecisions([], many);
    expect(merged).toHaveLength(MAX_DECISIONS);
    expect(merged[0]?.id).toBe(`d${MAX_DECISIONS + 19}`);
  });
});

describe('trendSample', () => {
  function node(name: string, cpu: number, mem: number, unavailable = false): NodeView {
    return {
      name,
      ready: true,
      schedulable: true,
      podCount: 1,
      allocatable: { cpuMilli: 1000, memoryBytes: 1, pods: 10 },
      load: {
        cpuPercent: cpu,
        memoryPercent: mem,
        source: 'REQUESTS',
        timestamp: '2026-11-29T12:00:00Z',
        stale: false,
        unavailable,
        estimatedPods: 0,
        podCount: 1,
        effective: { cpuMilli: 0, memoryBytes: 0 },
        requested: { cpuMilli: 0, memoryBytes: 0 },
      },
    };
  }
  const rule: RuleView = {
    namespace: 'ns',
    name: 'r',
    generation: 1,
    spec: { maxCPU: 50, maxMemory: 90, allowedNodes: [], nodeSelector: null, podSelector: null, burst: null },
    status: null,
    evaluation: { evaluatedAt: null, eligible: [{ node: 'a', headroom: 1 }], ineligible: [] },
  };

  it('averages the nodes with a load figure and counts those over their strictest threshold', () => {
    const s = trendSample([node('a', 60, 10), node('b', 20, 30), node('c', 99, 99, true)], [rule]);
    expect(s.cpuAvg).toBe(40);
    expect(s.memAvg).toBe(20);
    expect(s.cpuP90).toBe(60);
    // a: 60% > the rule's 50%; b: no rule, 20% of 100%; c: no figure.
    expect(s.over).toBe(1);
  });
});

/**
 * The dashboard's data loading against a gateway that answers as the real one does for a user holding
 * only `view` in one namespace: the pending pods of that namespace, and FORBIDDEN for `schedulerStatus`
 * (non-null, so an operation asking for it gets no data at all). Each operation is answered from what it
 * selects, so an operation combining both fields fails here as it does against the gateway.
 */
describe('startLiveData for a user without get /scheduler/status', () => {
  const pod = {
    namespace: 'team',
    name: 'waiting',
    queue: 'UNSCHEDULABLE',
    reason: '0/3 nodes are available',
    since: '2026-11-29T12:00:00Z',
    attempts: 2,
  };
  const forbidden = {
    message: 'forbidden: user "system:serviceaccount:team:viewer" lacks get /scheduler/status',
    extensions: { code: 'FORBIDDEN', permission: 'get /scheduler/status' },
  };
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  const sent: string[] = [];

  function gateway(_url: string | URL | Request, init?: RequestInit): Promise<Response> {
    const { query } = JSON.parse(String(init?.body)) as { query: string };
    sent.push(query);
    if (/^\s*subscription\b/.test(query)) {
      // A stream that stays open until the page aborts it.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          init?.signal?.addEventListener('abort', () => controller.error(new Error('aborted')));
        },
      });
      return Promise.resolve(new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
    }
    if (query.includes('schedulerStatus')) return Promise.resolve(json({ data: null, errors: [forbidden] }));
    const data: Record<string, unknown> = {};
    if (query.includes('pendingPods')) data['pendingPods'] = [pod];
    if (query.includes('rules')) data['rules'] = [];
    if (query.includes('nodes')) data['nodes'] = [];
    if (query.includes('schedulingHistory')) data['schedulingHistory'] = { items: [] };
    return Promise.resolve(json({ data }));
  }

  beforeEach(() => {
    sent.length = 0;
    vi.stubGlobal('document', { baseURI: 'http://127.0.0.1:8080/' });
    vi.stubGlobal('sessionStorage', {
      getItem: () => 'a-token',
      setItem: () => undefined,
      removeItem: () => undefined,
    });
    vi.stubGlobal('fetch', vi.fn(gateway));
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  /** Resolves with the state once `done` holds for it. */
  function until(live: LiveData, done: (s: DashboardState) => boolean): Promise<DashboardState> {
    return new Promise((resolve) => {
      const check = () => {
        const s = live.store.get();
        if (!done(s)) return;
        unsubscribe();
        resolve(s);
      };
      const unsubscribe = live.store.subscribe(check);
      check();
    });
  }

  it('stops polling and streaming once the page is signed out', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const auth = new Store({ required: false });
    const live = startLiveData(undefined, auth);
    try {
      await vi.advanceTimersByTimeAsync(10_000);
      const asked = sent.length;
      expect(asked).toBeGreaterThan(0);
      auth.set({ required: true });
      expect(live.store.get().decisionStream).toBe('signed-out');
      expect(live.store.get().loadStream).toBe('signed-out');
      await vi.advanceTimersByTimeAsync(60_000);
      expect(sent.length).toBe(asked);
    } finally {
      live.stop();
      vi.useRealTimers();
    }
  });

  it('shows the pending pods, and the status as not permitted, naming the permission', async () => {
    const live = startLiveData();
    try {
      const p = await until(live, (s) => s.loaded.pending || s.errors.pending !== undefined);
      expect(p.errors.pending).toBeUndefined();
      expect(p.pending).toEqual([pod]);
      const s = await until(
        live,
        (s) => s.status !== null || s.statusRefused !== undefined || s.errors.status !== undefined,
      );
      expect(s.status).toBeNull();
      expect(s.statusRefused).toBe('get /scheduler/status');
      expect(s.errors.status).toBeUndefined();
      // The pending pods were asked for without the status.
      const pendingQueries = sent.filter((q) => q.includes('pendingPods'));
      expect(pendingQueries.length).toBeGreaterThan(0);
      expect(pendingQueries.filter((q) => q.includes('schedulerStatus'))).toEqual([]);
    } finally {
      live.stop();
    }
  });
});

/**
 * Keeps the dashboard's state current: an initial load, two live streams (scheduling decisions and
 * node load changes), and modest polling for what has no stream (rules, pending pods, node list).
 * Stream bursts are coalesced so 1,000 nodes changing at once cost one render, not 1,000. Once the
 * gateway refuses the token (auth.ts) everything stops: signing in again reloads the page.
 */
import { authState } from './auth.js';
import type { TypedDocumentString } from './gql/graphql.js';
import { query, refusedPermission, type StreamState, subscribe } from './graphql.js';
import { percentile, pressure, strictestThresholds, UNCOVERED } from './model.js';
import {
  DECISIONS,
  type DecisionSummary,
  HISTORY,
  LOAD_UPDATES,
  type Load,
  NODES,
  type NodeView,
  PENDING,
  type PendingPodView,
  RULES,
  type RuleView,
  SCHEDULER_STATUS,
  type SchedulerStatus,
} from './operations.js';
import { Store } from './store.js';

export const MAX_DECISIONS = 200;
export const TREND_POINTS = 450;
export const TREND_INTERVAL_MS = 2000;

/** Columnar, as the chart wants it; times in seconds. */
export interface Trend {
  t: number[];
  cpuAvg: number[];
  cpuP90: number[];
  memAvg: number[];
  memP90: number[];
  /** Nodes over their strictest threshold. */
  over: number[];
  /** Decisions per minute over the last interval. */
  rate: number[];
}

export type Feed = 'nodes' | 'rules' | 'pending' | 'history' | 'status';

export interface DashboardState {
  nodes: Map<string, NodeView>;
  rules: RuleView[];
  pending: PendingPodView[];
  status: SchedulerStatus | null;
  /**
   * The permission the gateway refused for the scheduler's status (`get /scheduler/status`): a user
   * with only `view` in a namespace sees its pending pods, and the status as not permitted.
   */
  statusRefused: string | undefined;
  /** Newest first. */
  decisions: DecisionSummary[];
  loaded: Record<Feed, boolean>;
  errors: Partial<Record<Feed, string>>;
  decisionStream: StreamState;
  loadStream: StreamState;
  trend: Trend;
  /** Ticks every second so ages re-render. */
  now: number;
}

export function initialState(): DashboardState {
  return {
    nodes: new Map(),
    rules: [],
    pending: [],
    status: null,
    statusRefused: undefined,
    decisions: [],
    loaded: { nodes: false, rules: false, pending: false, history: false, status: false },
    errors: {},
    decisionStream: 'connecting',
    loadStream: 'connecting',
    trend: { t: [], cpuAvg: [], cpuP90: [], memAvg: [], memP90: [], over: [], rate: [] },
    now: Date.now(),
  };
}

/** New decisions first, de-duplicated by id, newest first, bounded. */
export function mergeDecisions(current: DecisionSummary[], incoming: DecisionSummary[]): DecisionSummary[] {
  const byId = new Map<string, DecisionSummary>();
  for (const d of [...incoming, ...current]) if (!byId.has(d.id)) byId.set(d.id, d);
  return [...byId.values()]
    .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0))
    .slice(0, MAX_DECISIONS);
}

export function trendSample(nodes: Iterable<NodeView>, rules: RuleView[]) {
  const thresholds = strictestThresholds(rules);
  const cpu: number[] = [];
  const mem: number[] = [];
  let over = 0;
  for (const n of nodes) {
    if (!n.load || n.load.unavailable) continue;
    cpu.push(n.load.cpuPercent);
    mem.push(n.load.memoryPercent);
    if (pressure(n.load, thresholds.get(n.name) ?? UNCOVERED, 'max') > 1) over++;
  }
  const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return {
    cpuAvg: avg(cpu),
    cpuP90: percentile(cpu, 90) ?? 0,
    memAvg: avg(mem),
    memP90: percentile(mem, 90) ?? 0,
    over,
  };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export interface LiveData {
  store: Store<DashboardState>;
  stop(): void;
}

export function startLiveData(
  store: Store<DashboardState> = new Store(initialState()),
  auth: Store<{ required: boolean }> = authState,
): LiveData {
  const stops: (() => void)[] = [];
  const every = (ms: number, fn: () => void) => {
    const id = setInterval(fn, ms);
    stops.push(() => clearInterval(id));
  };

  const fetchFeed = async <T, V>(
    feed: Feed,
    doc: TypedDocumentString<T, V>,
    vars: V,
    apply: (data: T) => void,
  ) => {
    try {
      apply(await query(doc, vars));
      store.set((s) => ({
        loaded: { ...s.loaded, [feed]: true },
        errors: { ...s.errors, [feed]: undefined },
      }));
    } catch (err) {
      store.set((s) => ({ errors: { ...s.errors, [feed]: message(err) } }));
    }
  };

  const refreshNodes = () =>
    fetchFeed('nodes', NODES, {}, (d) => store.set({ nodes: new Map(d.nodes.map((n) => [n.name, n])) }));
  const refreshRules = () => fetchFeed('rules', RULES, {}, (d) => store.set({ rules: d.rules }));
  // Two operations: a refused status must not take the pending pods with it.
  const refreshStatus = async () => {
    try {
      const d = await query(SCHEDULER_STATUS, {});
      store.set((s) => ({
        status: d.schedulerStatus,
        statusRefused: undefined,
        loaded: { ...s.loaded, status: true },
        errors: { ...s.errors, status: undefined },
      }));
    } catch (err) {
      const refused = refusedPermission(err);
      store.set((s) =>
        refused !== undefined
          ? {
              status: null,
              statusRefused: refused,
              loaded: { ...s.loaded, status: true },
              errors: { ...s.errors, status: undefined },
            }
          : { errors: { ...s.errors, status: message(err) } },
      );
    }
  };
  const refreshPending = () =>
    Promise.all([
      fetchFeed('pending', PENDING, {}, (d) => store.set({ pending: d.pendingPods })),
      refreshStatus(),
    ]);
  const refreshHistory = () =>
    fetchFeed('history', HISTORY, { first: 100 }, (d) =>
      store.set((s) => ({ decisions: mergeDecisions(s.decisions, d.schedulingHistory.items) })),
    );

  // Coalescing: a decision burst refreshes pending pods once; load changes land in one render.
  let pendingTimer: ReturnType<typeof setTimeout> | undefined;
  const refreshPendingSoon = () => {
    pendingTimer ??= setTimeout(() => {
      pendingTimer = undefined;
      void refreshPending();
    }, 300);
  };
  let decisionsSinceSample = 0;
  let loadBatch = new Map<string, Load | null>();
  let loadTimer: ReturnType<typeof setTimeout> | undefined;
  let unknownNode = false;
  const flushLoads = () => {
    loadTimer = undefined;
    const batch = loadBatch;
    loadBatch = new Map();
    store.set((s) => {
      const nodes = new Map(s.nodes);
      for (const [name, load] of batch) {
        const node = nodes.get(name);
        if (load === null) nodes.delete(name);
        else if (node) nodes.set(name, { ...node, load, podCount: load.podCount });
        else unknownNode = true;
      }
      return { nodes };
    });
    if (unknownNode) {
      unknownNode = false;
      void refreshNodes();
    }
  };

  stops.push(
    subscribe(
      DECISIONS,
      {},
      {
        onData: (d) => {
          decisionsSinceSample++;
          store.set((s) => ({ decisions: mergeDecisions(s.decisions, [d.schedulingEvents]) }));
          refreshPendingSoon();
        },
        onState: (decisionStream) => store.set({ decisionStream }),
        // Whatever happened while disconnected is in the history.
        onConnected: () => void refreshHistory(),
      },
    ),
  );
  stops.push(
    subscribe(
      LOAD_UPDATES,
      {},
      {
        onData: (d) => {
          const u = d.nodeLoadUpdates;
          loadBatch.set(u.node, u.removed ? null : u.load);
          loadTimer ??= setTimeout(flushLoads, 250);
        },
        onState: (loadStream) => store.set({ loadStream }),
        onConnected: () => void refreshNodes(),
      },
    ),
  );

  void refreshRules();
  void refreshPending();
  every(10_000, () => void refreshNodes());
  every(5000, () => void refreshRules());
  every(3000, () => void refreshPending());
  every(1000, () => store.set({ now: Date.now() }));
  every(TREND_INTERVAL_MS, () => {
    const s = store.get();
    if (!s.loaded.nodes) return;
    const sample = trendSample(s.nodes.values(), s.rules);
    const rate = (decisionsSinceSample * 60_000) / TREND_INTERVAL_MS;
    decisionsSinceSample = 0;
    const push = (xs: number[], x: number) => [...xs.slice(-(TREND_POINTS - 1)), x];
    const t = s.trend;
    store.set({
      trend: {
        t: push(t.t, Date.now() / 1000),
        cpuAvg: push(t.cpuAvg, sample.cpuAvg),
        cpuP90: push(t.cpuP90, sample.cpuP90),
        memAvg: push(t.memAvg, sample.memAvg),
        memP90: push(t.memP90, sample.memP90),
        over: push(t.over, sample.over),
        rate: push(t.rate, rate),
      },
    });
  });

  const stop = () => {
    for (const s of stops.splice(0)) s();
    if (pendingTimer) clearTimeout(pendingTimer);
    if (loadTimer) clearTimeout(loadTimer);
  };
  // Signed out (a stream ended UNAUTHENTICATED, a query answered 401): no more polling, no reconnecting.
  const signedOut = () => {
    if (!auth.get().required) return;
    stop();
    store.set({ decisionStream: 'signed-out', loadStream: 'signed-out' });
  };
  stops.push(auth.subscribe(signedOut));
  signedOut();

  return { store, stop };
}

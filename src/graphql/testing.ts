/**
 * Test support (used by the *.test.ts files here): a real ClusterCache fed with fixture API objects
 * through a fake informer factory, a real LoadTracker on it, and a scheduling source over a real
 * DecisionHistory. Lets unit tests run the schema on the same data path as production, without sockets.
 */
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { ClusterCache, type InformerFactory, type ResourceName } from '../cluster/cache.js';
import { NODE_LOAD_RULE_KIND, type RuleCache } from '../rules/kind.js';
import type { InformerHandlers, KubeObject } from '../cluster/informer.js';
import { EventBus } from '../events/bus.js';
import { LoadTracker } from '../load/tracker.js';
import { rulesForPod } from '../rules/rule.js';
import type { NodeLoadRule, RuleEvaluation } from '../rules/types.js';
import {
  buildCandidates,
  type Decision,
  decisionRules,
  scheduledMessage,
  unschedulableMessage,
} from '../scheduler/explain.js';
import { DecisionHistory } from '../scheduler/history.js';
import type { PendingPod } from '../scheduler/queue.js';
import type { SchedulerStatus } from '../scheduler/scheduler.js';
import { simulateRule } from '../scheduler/simulate.js';
import { decide, defaultProfile, NOW as SCHEDULER_NOW, snapshotOf } from '../scheduler/testing.js';
import type { GraphQLSources } from './context.js';
import type { SchedulingSource } from './scheduling-source.js';
import { clusterSource, loadSource, ruleSource } from './sources.js';

export const NOW = Date.parse('2026-11-29T12:00:00Z');

export function rawNode(
  name: string,
  o: {
    cpu?: string;
    memory?: string;
    pods?: string;
    labels?: Record<string, string>;
    ready?: boolean;
    unschedulable?: boolean;
    taints?: unknown[];
  } = {},
): KubeObject {
  const resources = { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '1',
      labels: o.labels ?? {},
      creationTimestamp: '2026-11-01T00:00:00Z',
    },
    spec: { unschedulable: o.unschedulable ?? false, taints: o.taints ?? [] },
    status: {
      capacity: resources,
      allocatable: resources,
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

export function rawPod(
  namespace: string,
  name: string,
  o: {
    node?: string;
    cpu?: string;
    memory?: string;
    labels?: Record<string, string>;
    phase?: string;
    priority?: number;
  } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace,
      name,
      uid: `uid-${namespace}-${name}`,
      resourceVersion: '1',
      labels: o.labels ?? {},
      creationTimestamp: '2026-11-29T11:00:00Z',
    },
    spec: {
      nodeName: o.node,
      schedulerName: 'nodeload-scheduler',
      priority: o.priority ?? 0,
      containers: [
        { name: 'c', resources: { requests: { cpu: o.cpu ?? '100m', memory: o.memory ?? '128Mi' } } },
      ],
    },
    status: { phase: o.phase ?? (o.node ? 'Running' : 'Pending') },
  };
}

export function rawRule(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  status?: unknown,
): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'NodeLoadRule',
    metadata: {
      namespace,
      name,
      uid: `uid-rule-${name}`,
      generation: 1,
      resourceVersion: '1',
      creationTimestamp: '2026-11-02T00:00:00Z',
    },
    spec,
    ...(status ? { status } : {}),
  };
}

type Handlers = Required<InformerHandlers<KubeObject>>;

/** A ClusterCache whose informers are driven by hand. */
export class FixtureCluster {
  readonly cache: RuleCache;
  readonly loads: LoadTracker;
  private readonly handlers = new Map<ResourceName, Handlers>();

  constructor() {
    const factory: InformerFactory = (spec, handlers) => {
      this.handlers.set(spec.name, handlers as Handlers);
      return {
        start() {},
        stop() {},
        synced: Promise.resolve(),
        hasSynced: () => true,
        stats: {
          lists: 0,
          watches: 0,
          restarts: 0,
          silentRestarts: 0,
          expired: 0,
          watchTimeouts: 0,
          events: { added: 0, modified: 0, deleted: 0, bookmark: 0, error: 0 },
        },
      };
    };
    this.cache = new ClusterCache({
      rules: NODE_LOAD_RULE_KIND,
      kubeConfig: new KubeConfig(),
      log: pino({ level: 'silent' }),
      informerFactory: factory,
      discoverMetrics: async () => false,
      now: () => NOW,
    });
    this.cache.start();
    this.loads = new LoadTracker({ cache: this.cache, refreshSeconds: 0, now: () => NOW });
    this.loads.start();
  }

  private on(name: ResourceName): Handlers {
    const h = this.handlers.get(name);
    if (!h) throw new Error(`no informer for ${name}`);
    return h;
  }

  add(...objects: KubeObject[]): this {
    for (const o of objects) {
      const kind = o.kind === 'Node' ? 'nodes' : o.kind === 'Pod' ? 'pods' : 'nodeloadrules';
      this.on(kind).add(o);
    }
    this.loads.flush();
    return this;
  }

  remove(o: KubeObject): this {
    this.on(o.kind === 'Node' ? 'nodes' : o.kind === 'Pod' ? 'pods' : 'nodeloadrules').delete(o);
    this.loads.flush();
    return this;
  }

  stop(): void {
    this.loads.stop();
    this.cache.stop();
  }
}

export const IDLE_STATUS: SchedulerStatus = {
  schedulerName: 'nodeload-scheduler',
  identity: 'test',
  running: true,
  leader: true,
  cacheSynced: true,
  queues: { active: 0, backoff: 0, unschedulable: 0, inFlight: 0 },
  bindsInFlight: 0,
  bound: 0,
  failed: 0,
  unschedulable: 0,
  conflicts: 0,
  historySize: 0,
};

/**
 * A scheduling source over a real DecisionHistory (`record` stores and publishes a decision) whose
 * simulate runs the scheduler's pure simulateRule on the fixture cluster, as Scheduler.simulate does.
 */
export class FakeScheduling implements SchedulingSource {
  readonly historyStore = new DecisionHistory();
  readonly bus = new EventBus<{ decision: Decision }>();
  pending: PendingPod[] = [];
  statusView: SchedulerStatus = IDLE_STATUS;

  constructor(private readonly cluster?: FixtureCluster) {}

  record(decision: Decision): void {
    this.historyStore.add(decision);
    this.bus.emit('decision', decision);
  }

  history: SchedulingSource['history'] = (q) => this.historyStore.query(q);
  decision = (id: string) => this.historyStore.get(id);
  pendingPods = () => this.pending;
  status = () => ({ ...this.statusView, historySize: this.historyStore.size });
  onDecision = (listener: (d: Decision) => void) => this.bus.on('decision', listener);

  simulate = (rule: NodeLoadRule) => {
    if (!this.cluster) throw new Error('FakeScheduling has no cluster to simulate on');
    const { cache, loads } = this.cluster;
    return simulateRule({
      rule,
      profile: defaultProfile(),
      snapshot: snapshotOf([...cache.nodes.values()], [...cache.pods.values()]),
      loads: loads.all(),
      pendingPods: [...cache.unscheduledPods()],
      rules: [...cache.rules.values()].map((e) => e.rule),
      loadOptions: loads.options,
      now: SCHEDULER_NOW,
    });
  };
}

export function fixtureSources(
  cluster: FixtureCluster,
  opts: { scheduling?: SchedulingSource; evaluations?: Map<string, RuleEvaluation> } = {},
): GraphQLSources {
  const evaluations = opts.evaluations;
  return {
    cluster: clusterSource(cluster.cache),
    loads: loadSource(cluster.loads),
    rules: ruleSource(
      evaluations ? { evaluation: (ns, name) => evaluations.get(`${ns}/${name}`) } : undefined,
    ),
    scheduling: opts.scheduling ?? new FakeScheduling(cluster),
    now: () => NOW,
  };
}

let seq = 0;

/** A decision as the scheduler builds it, with the candidates given (defaults: one chosen node). */
export function decisionFixture(o: Partial<Decision> & { namespace: string; pod: string }): Decision {
  seq++;
  return {
    id: `d-${seq}`,
    podUid: `uid-${o.namespace}-${o.pod}`,
    result: 'scheduled',
    node: 'node-a',
    time: new Date(NOW + seq * 1000).toISOString(),
    algorithmMs: 0.4,
    latencyMs: 3,
    e2eLatencyMs: 5,
    attempts: 1,
    message: `Successfully assigned ${o.namespace}/${o.pod} to ${o.node ?? 'node-a'}`,
    rules: [],
    totalNodes: 1,
    feasibleNodes: 1,
    candidates: [],
    reportingInstance: 'test',
    ...o,
  };
}

export interface GraphQLResponse<T = Record<string, unknown>> {
  data?: T | null;
  errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[];
}

/** POSTs an operation to the yoga instance in-process (no socket). */
export async function post<T = Record<string, unknown>>(
  yoga: { fetch: (url: string, init: RequestInit) => Promise<Response> | Response },
  query: string,
  variables?: Record<string, unknown>,
): Promise<GraphQLResponse<T>> {
  const res = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as GraphQLResponse<T>;
}

/** A decision for a pod of the fixture cluster, explained by the scheduler's own filter and score. */
export function explainedDecision(
  cluster: FixtureCluster,
  namespace: string,
  pod: string,
  o: Partial<Decision> = {},
): Decision {
  const info = cluster.cache.pods.get(`${namespace}/${pod}`);
  if (!info) throw new Error(`no pod ${namespace}/${pod} in the fixture`);
  const rules = rulesForPod(
    [...cluster.cache.rules.values()].map((e) => e.rule),
    info,
  );
  const { verdicts, ranked } = decide(info, {
    nodes: [...cluster.cache.nodes.values()],
    pods: [...cluster.cache.pods.values()],
    rules,
    loads: cluster.loads.all(),
    loadOptions: cluster.loads.options,
  });
  const candidates = buildCandidates(verdicts, ranked);
  const chosen = ranked[0]?.node;
  return decisionFixture({
    namespace,
    pod,
    result: chosen ? 'scheduled' : 'unschedulable',
    ...(chosen ? { node: chosen } : { node: undefined }),
    message: chosen
      ? scheduledMessage(namespace, pod, chosen)
      : unschedulableMessage(verdicts.length, verdicts),
    rules: decisionRules(rules),
    totalNodes: verdicts.length,
    feasibleNodes: ranked.length,
    candidates,
    ...o,
  });
}

/** An SSE subscription over yoga.fetch: `next()` resolves with each `event: next` payload. */
export async function sseSubscribe(
  yoga: { fetch: (url: string, init: RequestInit) => Promise<Response> | Response },
  query: string,
  variables?: Record<string, unknown>,
) {
  const abort = new AbortController();
  const res = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  if (!res.body) throw new Error(`no SSE body (HTTP ${res.status})`);
  // Read the body itself: piping yoga's ponyfilled stream through a native TextDecoderStream would not
  // pass a cancel back to it, and the subscription would outlive close().
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    /** The next `data:` of an `event: next` message (pings and other events skipped). */
    async next(): Promise<GraphQLResponse> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = message.split('\n');
          if (!lines.includes('event: next')) continue;
          const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
          return JSON.parse(data.join('\n')) as GraphQLResponse;
        }
        const chunk = await reader.read();
        if (chunk.done) throw new Error('SSE stream ended');
        buffer += decoder.decode(chunk.value, { stream: true });
      }
    },
    async close() {
      abort.abort();
      await reader.cancel().catch(() => {});
    },
  };
}

/** Resolves once `check` holds, re-checking on each turn of the event loop (no timers to tune). */
export async function until(check: () => boolean, what: string, maxTurns = 10_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`never happened: ${what}`);
}

/**
 * Test support (used by the *.test.ts files here): a real ClusterCache fed with fixture API objects
 * (test/kit/objects.ts) through a fake informer factory, a real LoadTracker on it, and a scheduling
 * source over a real DecisionHistory. Lets unit tests run the schema on the same data path as
 * production, without sockets. GraphQL over SSE: test/kit/graphql.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { type Client, createClient } from 'graphql-ws';
import pino from 'pino';
import WebSocket from 'ws';
import {
  type FetchTarget,
  type GraphQLResponse,
  IN_PROCESS_URL,
  postGraphQL,
} from '../../test/kit/graphql.js';
import { idleInformerStats, NOW } from '../../test/kit/objects.js';
import { ClusterCache, type InformerFactory, type ResourceName } from '../cluster/cache.js';
import type { InformerHandlers } from '../cluster/informer.js';
import type { KubeObject } from '../cluster/kube-object.js';
import { EventBus } from '../events/bus.js';
import { LoadTracker } from '../load/tracker.js';
import { NODE_LOAD_RULE_KIND } from '../rules/kind.js';
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
import { type Access, UNRESTRICTED_ACCESS } from '../server/access.js';
import type { GraphQLSources, GraphQLYoga } from './context.js';
import type { SchedulingSource } from './scheduling-source.js';
import { createGraphQLYoga, type GraphQLServerOptions } from './server.js';
import { clusterSource, loadSource, ruleSource } from './sources.js';
import { attachWebSocket, type WebSocketOptions } from './websocket.js';

type Handlers = Required<InformerHandlers<KubeObject>>;

/** A ClusterCache whose informers are driven by hand. */
export class FixtureCluster {
  readonly cache: ClusterCache<NodeLoadRule>;
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
        stats: idleInformerStats(),
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

/**
 * createGraphQLYoga for tests: its in-process fetch runs as `access`, as if the user port's gate had let
 * the request in (default: the unrestricted loopback user of --anonymous-user-port).
 */
export function createTestYoga(
  opts: GraphQLServerOptions,
  access: Access = UNRESTRICTED_ACCESS,
  pushWindow?: Parameters<typeof createGraphQLYoga>[1],
): GraphQLYoga {
  const yoga = createGraphQLYoga(opts, pushWindow);
  const fetchAs = (url: string, init: RequestInit = {}) => yoga.fetch(url, init, { access });
  return new Proxy(yoga, {
    get(target, prop) {
      if (prop === 'fetch') return fetchAs;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** POSTs an operation to the yoga instance in-process (no socket). */
export function post<T = Record<string, unknown>>(
  yoga: FetchTarget,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GraphQLResponse<T>> {
  return postGraphQL<T>(yoga, IN_PROCESS_URL, query, variables);
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

/** Resolves once `check` holds, re-checking on each turn of the event loop (no timers to tune). */
export async function until(check: () => boolean, what: string, maxTurns = 10_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`never happened: ${what}`);
}

/** graphql-ws for `yoga` on a loopback port, attached as the gateway attaches it; close() ends it all. */
export async function serveWebSocket(
  yoga: GraphQLYoga,
  opts: WebSocketOptions,
  log = pino({ level: 'silent' }),
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.end());
  const ws = attachWebSocket(yoga, server, log, opts);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    close: async () => {
      await ws.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A graphql-ws client sending `token` in connection_init, never retrying. */
export function webSocketClient(url: string, token: string): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  });
}

/** What an operation over graphql-ws first got: its first result, or how the socket closed. */
type FirstResult = { data?: unknown; errors?: unknown; closed?: number; reason?: string };

/** Runs an operation on the client; resolves with its first result, or how the socket closed. */
export function firstResult(c: Client, query: string): Promise<FirstResult> {
  return new Promise((resolve) => {
    const stop = c.subscribe(
      { query },
      {
        next: (r) => {
          stop();
          resolve(r as { data?: unknown; errors?: unknown });
        },
        error: (e) => {
          const ev = e as { code?: number; reason?: string };
          if (typeof ev.code === 'number') resolve({ closed: ev.code, reason: String(ev.reason) });
          else resolve({ errors: e });
        },
        complete: () => {},
      },
    );
  });
}

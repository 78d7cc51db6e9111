// GraphQL against the real control plane: the gateway (operator + scheduler + GraphQL) in-process, KWOK
// nodes of this file's own pool, pods placed by a scheduler name of this file only. GraphQL must report
// the same figures as the LoadTracker and as the rule status the operator wrote, and stream every decision
// of a 100-pod burst to a WebSocket (graphql-ws) and an SSE subscriber alike.
//
// Other test files share the cluster: every check is scoped to this file's namespace and nodes.
import { CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { createClient } from 'graphql-ws';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { graphqlComponent } from '../../src/graphql/component.js';
import { operatorComponent } from '../../src/operator/component.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import type { Operator } from '../../src/operator/operator.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION, type RuleStatus } from '../../src/rules/types.js';
import { schedulerComponent } from '../../src/scheduler/component.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { createFakeNodes } from '../cluster/nodes.js';
import { type GraphQLResponse, sseSubscribe as kitSseSubscribe, postGraphQL } from '../kit/graphql.js';
import {
  coreApi,
  createNamespace,
  kubeConfig,
  removeTestResources,
  type TestNamespace,
  uniqueName,
  waitFor,
} from './context.js';

const POOL_LABEL = 'nodeload.test/pool';
const RULE = { group: RULE_GROUP, version: RULE_VERSION, plural: RULE_PLURAL };
/** Pods of the burst; the later tests reuse them. 100 × 20m cpu / 32Mi fit the pool whatever the spread. */
const BURST = 100;
const burstPod = (i: number) => `burst-${String(i).padStart(3, '0')}`;

let ns: TestNamespace;
let gateway: Gateway;
let pool: string;
let nodes: string[] = [];
const schedulerName = uniqueName('nodeload-it-gql');
/** Subscriptions currently listening to the scheduler through GraphQL (the burst waits for them). */
let decisionListeners = 0;

function gql<T = Record<string, unknown>>(
  query: string,
  variables?: Record<string, unknown>,
): Promise<GraphQLResponse<T>> {
  return postGraphQL<T>({ fetch }, `http://127.0.0.1:${gateway.httpPort}/graphql`, query, variables);
}

/** A scheduler wrapper counting live onDecision subscriptions, so the burst starts once both clients listen. */
function counted(scheduler: Scheduler): Parameters<typeof graphqlComponent>[1]['scheduler'] {
  return {
    history: scheduler.history,
    decision: (id) => scheduler.decision(id),
    pendingPods: () => scheduler.pendingPods(),
    status: () => scheduler.status(),
    simulate: (rule) => scheduler.simulate(rule),
    onDecision: (fn) => {
      decisionListeners++;
      const off = scheduler.onDecision(fn);
      return () => {
        decisionListeners--;
        off();
      };
    },
  };
}

function podBody(name: string): V1Pod {
  return {
    metadata: { name, labels: { app: 'web' } },
    spec: {
      schedulerName,
      nodeSelector: { [POOL_LABEL]: pool },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: '20m', memory: '32Mi' } },
        },
      ],
    },
  };
}

/** Creates the pods with a few requests in flight at once (a 2-core machine runs the API server too). */
async function createPods(bodies: V1Pod[], concurrency = 10): Promise<void> {
  const core = coreApi();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++] as V1Pod;
        await core.createNamespacedPod({ namespace: ns.name, body });
      }
    }),
  );
}

async function readRuleStatus(
  name: string,
): Promise<{ status?: RuleStatus; generation: number; spec: unknown }> {
  const obj = (await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ ...RULE, namespace: ns.name, name })) as {
    metadata: { generation: number };
    spec: unknown;
    status?: RuleStatus;
  };
  return { status: obj.status, generation: obj.metadata.generation, spec: obj.spec };
}

/** An SSE subscription over the gateway's HTTP port; `events` fills as `event: next` messages arrive. */
async function sseSubscribe(query: string, variables: Record<string, unknown>) {
  const sub = await kitSseSubscribe(
    { fetch },
    `http://127.0.0.1:${gateway.httpPort}/graphql`,
    query,
    variables,
  );
  expect(sub.contentType).toContain('text/event-stream');
  return sub;
}

beforeAll(async () => {
  const kubeconfig = inject('kubeconfig');
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  ns = await createNamespace('it-graphql');
  pool = uniqueName('it-gql');
  nodes = [0, 1, 2].map((i) => `${pool}-${i}`);
  await createFakeNodes(
    kubeconfig,
    nodes.map((name) => ({ name, cpu: 4, memory: '8Gi', pods: 110, labels: { [POOL_LABEL]: pool } })),
  );
  const config = parseConfig({
    kubeconfig,
    httpPort: 0,
    bindAddress: '127.0.0.1',
    // Reads the user port without a token (test/integration/authz.test.ts covers tokens).
    anonymousUserPort: true,
    leaderElect: false,
    schedulerName,
    identity: uniqueName('it-graphql'),
    installCrd: false,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
  });
  let operator: Operator | undefined;
  let scheduler: Scheduler | undefined;
  gateway = await startGateway(config, [
    (ctx) => {
      const c = operatorComponent(ctx);
      operator = c.operator;
      return c;
    },
    (ctx) => {
      const c = schedulerComponent(ctx);
      scheduler = c.scheduler;
      return c;
    },
    (ctx) => graphqlComponent(ctx, { operator, scheduler: counted(scheduler as Scheduler) }),
  ]);
  await gateway.cache.ready();
  await waitFor('our nodes in the cache', () => nodes.every((n) => gateway.cache.nodes.has(n)));
  // Every pod of this file is covered: 50% CPU of a pool node, nodes outside the pool are out.
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      ...RULE,
      namespace: ns.name,
      body: {
        apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
        kind: 'NodeLoadRule',
        metadata: { name: 'web' },
        spec: { maxCPU: 50, maxMemory: 80, nodeSelector: { matchLabels: { [POOL_LABEL]: pool } } },
      },
    });
  await waitFor('rule web in the cache', () => gateway.cache.rules.has(`${ns.name}/web`));
});

afterAll(async () => {
  await gateway?.stop();
  await removeTestResources({ namespace: ns, nodes });
});

describe('GraphQL on the gateway', () => {
  it('streams every decision of a 100-pod burst to a WebSocket and an SSE subscriber', async () => {
    const query = `subscription($ns: String) { schedulingEvents(namespace: $ns) { id namespace pod result node } }`;
    // The gateway listens to decisions itself (the response cache's data version): count only ours.
    const idleListeners = decisionListeners;
    const client = createClient({
      url: `ws://127.0.0.1:${gateway.httpPort}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
    });
    const wsEvents: Record<string, unknown>[] = [];
    const wsErrors: unknown[] = [];
    const unsubscribe = client.subscribe(
      { query, variables: { ns: ns.name } },
      {
        next: (r) => wsEvents.push(r.data?.['schedulingEvents'] as Record<string, unknown>),
        error: (e) => wsErrors.push(e),
        complete: () => {},
      },
    );
    // A different selection over SSE: identical operations share one execution (shared-subscriptions.ts),
    // and two distinct ones let the test see that both transports are listening before the burst.
    const sse = await sseSubscribe(query.replace('{ id ', '{ __typename id '), { ns: ns.name });
    try {
      await waitFor('both subscriptions listening', () => decisionListeners === idleListeners + 2);
      await createPods(Array.from({ length: BURST }, (_, i) => podBody(burstPod(i))));
      await waitFor(
        `${BURST} decisions on both transports`,
        () => wsEvents.length >= BURST && sse.events.length >= BURST,
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      expect(wsErrors).toEqual([]);
      const sseEvents = sse.events.map((e) => {
        const { __typename, ...rest } = (e.data?.['schedulingEvents'] ?? {}) as Record<string, unknown>;
        expect(__typename).toBe('SchedulingDecision');
        return rest;
      });
      // Exactly one decision per pod on each transport: none lost, none repeated.
      const ids = (list: Record<string, unknown>[]) => list.map((e) => String(e['id']));
      expect(wsEvents).toHaveLength(BURST);
      expect(sseEvents).toHaveLength(BURST);
      expect(new Set(ids(wsEvents)).size).toBe(BURST);
      expect(new Set(ids(sseEvents)).size).toBe(BURST);
      const byPod = (list: Record<string, unknown>[]) =>
        [...list].sort((a, b) => String(a['pod']).localeCompare(String(b['pod'])));
      // Same decisions (same ids) on both transports, every one scheduled on a pool node.
      expect(byPod(sseEvents)).toEqual(byPod(wsEvents));
      expect(byPod(wsEvents).map((e) => e['pod'])).toEqual(
        Array.from({ length: BURST }, (_, i) => burstPod(i)),
      );
      for (const e of wsEvents) {
        expect(e).toMatchObject({ namespace: ns.name, result: 'SCHEDULED' });
        expect(nodes).toContain(e['node']);
      }

      // The history and decision(id) serve the very same decisions, with every node's verdict.
      const history = await gql<{ schedulingHistory: { items: { id: string }[] } }>(
        'query($ns: String) { schedulingHistory(namespace: $ns, first: 500) { items { id } } }',
        { ns: ns.name },
      );
      expect(history.data?.schedulingHistory.items.map((d) => d.id).sort()).toEqual(
        wsEvents.map((e) => String(e['id'])).sort(),
      );
      const one = wsEvents[0] as { id: string; node: string };
      const explained = await gql<{
        decision: {
          candidates: { node: string; verdict: string; rules: { rule: string; cpuMargin: number }[] }[];
        };
      }>('query($id: ID!) { decision(id: $id) { candidates { node verdict rules { rule cpuMargin } } } }', {
        id: one.id,
      });
      const candidates = explained.data?.decision.candidates ?? [];
      expect(candidates.filter((c) => c.verdict === 'CHOSEN').map((c) => c.node)).toEqual([one.node]);
      for (const n of nodes) expect(candidates.map((c) => c.node)).toContain(n);
      const chosen = candidates.find((c) => c.node === one.node);
      expect(chosen?.rules).toEqual([{ rule: 'web', cpuMargin: expect.any(Number) }]);
      expect(chosen?.rules[0]?.cpuMargin).toBeGreaterThanOrEqual(0);
    } finally {
      unsubscribe();
      await client.dispose();
      await sse.close();
    }
    await waitFor('subscriptions released when the clients leave', () => decisionListeners === idleListeners);
  }, 180_000);

  it('reports the same node loads as the LoadTracker', async () => {
    await waitFor(`${BURST} pods bound in the cache`, () => {
      const bound = nodes.reduce((n, node) => n + gateway.cache.podsOnNode(node).size, 0);
      return bound === BURST;
    });
    const res = await gql<{
      nodes: {
        name: string;
        podCount: number;
        load: Record<string, unknown> & { requested: { cpuMilli: number; memoryBytes: number } };
      }[];
    }>(
      '{ nodes { name podCount load { cpuPercent memoryPercent source stale unavailable podCount timestamp requested { cpuMilli memoryBytes } } } }',
    );
    expect(res.errors).toBeUndefined();
    const ours = (res.data?.nodes ?? []).filter((n) => nodes.includes(n.name));
    expect(ours.map((n) => n.name)).toEqual(nodes);
    for (const n of ours) {
      const load = gateway.loads.loadOf(n.name);
      expect(load, n.name).toBeDefined();
      expect(n.load).toEqual({
        cpuPercent: load?.cpuPercent,
        memoryPercent: load?.memoryPercent,
        source: { requests: 'REQUESTS', metrics: 'METRICS', 'metrics+estimate': 'METRICS_PLUS_ESTIMATE' }[
          load?.source ?? 'requests'
        ],
        stale: load?.metricsStale,
        unavailable: load?.unavailable,
        podCount: load?.podCount,
        // A requests-based figure carries its computation time, which the periodic refresh renews.
        timestamp: load?.source === 'requests' ? expect.stringMatching(/^\d{4}-\d\d-\d\dT/) : load?.timestamp,
        requested: load?.requested,
      });
      expect(n.podCount).toBe(load?.podCount);
    }
    expect(ours.reduce((s, n) => s + n.podCount, 0)).toBe(BURST);
  });

  it('reports the rule status the operator wrote, and the evaluation behind it', async () => {
    type RuleView = {
      rule: {
        status: (Omit<RuleStatus, 'conditions'> & { conditions: Record<string, unknown>[] }) | null;
        evaluation: {
          eligible: { node: string }[];
          ineligible: { node: string; reasons: { message: string }[] }[];
        };
      };
    };
    const query = `query($ns: String!) { rule(namespace: $ns, name: "web") {
        status { observedGeneration eligibleNodes eligibleCount ineligibleCount ineligibleNodes { node reasons }
                 lastEvaluationTime suggestions { node headroom }
                 conditions { type status reason message lastTransitionTime observedGeneration } }
        evaluation { eligible { node } ineligible { node reasons { message } } } } }`;
    // Wait for a quiet moment: the status as written (read from the API server) equals what GraphQL serves,
    // and this gateway's evaluation covers the same nodes. Other files add and delete nodes meanwhile, and
    // their gateways' operators write this rule's status too, each after its own debounce.
    const { api, view } = await waitFor('GraphQL status to match the written status', async () => {
      const written = await readRuleStatus('web');
      if (!written.status || written.status.observedGeneration !== written.generation) return undefined;
      const res = await gql<RuleView>(query, { ns: ns.name });
      const rule = res.data?.rule;
      return rule?.status &&
        JSON.stringify(rule.status) === JSON.stringify(toGraphQLOrder(written.status)) &&
        rule.evaluation.eligible.length === written.status.eligibleCount &&
        rule.evaluation.ineligible.length === written.status.ineligibleCount
        ? { api: written.status, view: rule }
        : undefined;
    });
    expect(view.status).toEqual(toGraphQLOrder(api));
    // Our pool nodes are all eligible (100 × 20m is 50% of one node at most); the evaluation agrees with the status.
    const eligibleOurs = view.evaluation.eligible
      .map((v) => v.node)
      .filter((n) => nodes.includes(n))
      .sort();
    expect(eligibleOurs).toEqual(api.eligibleNodes.filter((n) => nodes.includes(n)).sort());
    expect(eligibleOurs).toEqual([...nodes].sort());
    expect(view.evaluation.eligible.length).toBe(api.eligibleCount);
    expect(view.evaluation.ineligible.length).toBe(api.ineligibleCount);
    for (const listed of api.ineligibleNodes) {
      const v = view.evaluation.ineligible.find((x) => x.node === listed.node);
      expect(v?.reasons.map((r) => r.message)).toEqual(listed.reasons);
    }
  });

  it('simulates a tighter rule on the live state without writing anything', async () => {
    const before = await readRuleStatus('web');
    const res = await gql<{
      simulateRule: {
        exists: boolean;
        eligibleAfter: number;
        nodesBecomingIneligible: { node: string; reasons: string[] }[];
        runningPodsBreaching: { pod: string; node: string }[];
      };
    }>(
      `query($ns: String!) { simulateRule(namespace: $ns, name: "web", spec: { maxCPU: 10, nodeSelector: { matchLabels: [{ key: "${POOL_LABEL}", value: "${pool}" }] } }) {
          exists eligibleAfter nodesBecomingIneligible { node reasons } runningPodsBreaching { pod node } } }`,
      { ns: ns.name },
    );
    expect(res.errors).toBeUndefined();
    const sim = res.data?.simulateRule;
    expect(sim?.exists).toBe(true);
    // Spread over the pool, the burst puts every node above 10% (100 × 20m ≈ 17% of each); a node the
    // scheduler left nearly empty would stay eligible, and its pods would not breach.
    const loaded = nodes.filter((n) => (gateway.loads.loadOf(n)?.cpuPercent ?? 0) > 10).sort();
    expect(loaded.length).toBeGreaterThan(0);
    expect(
      sim?.nodesBecomingIneligible
        .map((c) => c.node)
        .filter((n) => nodes.includes(n))
        .sort(),
    ).toEqual(loaded);
    const onLoaded = loaded.flatMap((n) => [...gateway.cache.podsOnNode(n).values()].map((p) => p.name));
    expect(sim?.runningPodsBreaching.map((p) => p.pod).sort()).toEqual(onLoaded.sort());
    expect(onLoaded.every((p) => p.startsWith('burst-'))).toBe(true);
    // The spec is untouched. (The status may be rewritten meanwhile: the operators of this file's gateway
    // and of other files' follow the nodes other files add and delete.)
    const after = await readRuleStatus('web');
    expect(after.generation).toBe(before.generation);
    expect(after.spec).toEqual(before.spec);
  });

  it('answers errors with a code and serves GraphiQL without any remote asset', async () => {
    const missing = await gql('{ rule(namespace: "nowhere", name: "x") { name } }');
    expect(missing.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    const bad = await gql('query($n: Int) { schedulingHistory(first: $n) { hasNextPage } }', { n: 10_000 });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'first' });
    const tooDeep = await gql(
      '{ __type(name: "Node") { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } }',
    );
    expect(tooDeep.errors?.[0]?.extensions).toMatchObject({
      code: 'GRAPHQL_VALIDATION_FAILED',
      limit: 'maxDepth',
    });
    const page = await fetch(`http://127.0.0.1:${gateway.httpPort}/graphql`, {
      headers: { accept: 'text/html' },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<title>nodeload GraphQL</title>');
    expect(html).not.toMatch(/<script[^>]+src=["']https?:|<link[^>]+href=["']https?:/i);
  });
});

/** The written status with keys in the order the GraphQL query selects them (for a JSON comparison). */
function toGraphQLOrder(s: RuleStatus) {
  return {
    observedGeneration: s.observedGeneration,
    eligibleNodes: s.eligibleNodes,
    eligibleCount: s.eligibleCount,
    ineligibleCount: s.ineligibleCount,
    ineligibleNodes: s.ineligibleNodes.map((e) => ({ node: e.node, reasons: e.reasons })),
    lastEvaluationTime: s.lastEvaluationTime,
    suggestions: s.suggestions.map((x) => ({ node: x.node, headroom: x.headroom })),
    conditions: s.conditions.map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionTime: c.lastTransitionTime,
      observedGeneration: c.observedGeneration,
    })),
  };
}

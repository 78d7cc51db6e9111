// The user port (8080) as Kubernetes users meet it: a gateway WITHOUT the anonymous flag, ServiceAccounts
// with Roles bound in some namespaces only, their tokens from TokenRequest. No token is a 401; a token
// that may list pods in namespace B but not in A reads B's pods and decisions and gets A's neither — over
// HTTP, SSE and WebSocket; /metrics needs the nonResourceURL. The gateway reviews every token and
// permission with the real API server (TokenReview, SubjectAccessReview).
//
// The pods never fit (a nodeSelector no node has): each attempt is an `unschedulable` decision of this
// file's scheduler, and the pods stay pending. Each test works in namespaces of its own.
import {
  AuthenticationV1Api,
  type CoreV1Api,
  RbacAuthorizationV1Api,
  type V1Pod,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { createClient } from 'graphql-ws';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { graphqlComponent } from '../../src/graphql/component.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { schedulerComponent } from '../../src/scheduler/component.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { type FetchTarget, type GraphQLResponse, postGraphQL, sseSubscribe } from '../kit/graphql.js';
import { coreApi, kubeConfig, uniqueName, waitFor, withNamespace } from './context.js';

let gateway: Gateway;
let scheduler: Scheduler;
const schedulerName = uniqueName('nodeload-it-authz');
/** Live onDecision listeners of GraphQL subscriptions (a stream is listening once this counts it). */
let decisionListeners = 0;

const base = () => `http://127.0.0.1:${gateway.httpPort}`;

/** fetch with the token as a bearer header. */
function as(token: string | undefined): FetchTarget {
  return {
    fetch: (url, init) =>
      fetch(url, {
        ...init,
        headers: {
          ...(init.headers as Record<string, string>),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      }),
  };
}

function gql<T = Record<string, unknown>>(
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GraphQLResponse<T>> {
  return postGraphQL<T>(as(token), `${base()}/graphql`, query, variables);
}

/** A graphql-ws client of the gateway sending the token in connection_init; disposed when the test ends. */
function webSocketAs(token: string) {
  const client = createClient({
    url: `ws://127.0.0.1:${gateway.httpPort}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  });
  onTestFinished(() => client.dispose());
  return client;
}

/** A pod of this file's scheduler that fits no node: it stays pending, each attempt a decision. */
function pendingPod(name: string): V1Pod {
  return {
    metadata: { name },
    spec: {
      schedulerName,
      nodeSelector: { 'nodeload.test/authz': 'nowhere' },
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'app', image: 'registry.invalid/app:1' }],
    },
  };
}

async function createPendingPod(core: CoreV1Api, namespace: string, name: string): Promise<void> {
  await core.createNamespacedPod({ namespace, body: pendingPod(name) });
  await waitFor(`a decision for ${namespace}/${name}`, () =>
    scheduler.history.query({ namespace, pod: name, limit: 1 }).items.length > 0 ? true : undefined,
  );
}

/** A ServiceAccount in `namespace` and a token for it (TokenRequest, 10 minutes). */
async function serviceAccountToken(namespace: string, name: string): Promise<string> {
  const core = coreApi();
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const request = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { expirationSeconds: 600, audiences: [] } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`no token for ${namespace}/${name}`);
  return token;
}

/** A Role with `rules` in `namespace`, bound to the ServiceAccount `sa` of `saNamespace`. */
async function grantInNamespace(
  namespace: string,
  sa: { namespace: string; name: string },
  rules: V1PolicyRule[],
): Promise<void> {
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  const name = 'nodeload-authz-test';
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', ...sa }],
    },
  });
}

/** A ClusterRole with `rules` bound cluster-wide to the ServiceAccount; both deleted when the test ends. */
async function grantClusterWide(
  sa: { namespace: string; name: string },
  rules: V1PolicyRule[],
): Promise<void> {
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  const name = uniqueName('nodeload-authz-test');
  await rbac.createClusterRole({ body: { metadata: { name }, rules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', ...sa }],
    },
  });
  onTestFinished(async () => {
    await rbac.deleteClusterRoleBinding({ name });
    await rbac.deleteClusterRole({ name });
  });
}

const LIST_PODS: V1PolicyRule[] = [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }];

/**
 * Namespaces A and B, a pending pod with a decision in each, and a ServiceAccount (in B) that may list
 * pods in B only: its token.
 */
async function twoNamespaces(): Promise<{ a: string; b: string; token: string }> {
  const [a, b] = await Promise.all([withNamespace('it-authz-a'), withNamespace('it-authz-b')]);
  const core = coreApi();
  await Promise.all([createPendingPod(core, a, 'secret-a'), createPendingPod(core, b, 'visible-b')]);
  const token = await serviceAccountToken(b, 'reader');
  await grantInNamespace(b, { namespace: b, name: 'reader' }, LIST_PODS);
  return { a, b, token };
}

beforeAll(async () => {
  // The cache watches NodeLoadRules: it syncs once their CRD exists.
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  const config = parseConfig({
    kubeconfig: inject('kubeconfig'),
    httpPort: 0,
    bindAddress: '127.0.0.1',
    // No anonymous access: every request below is authenticated by the API server.
    leaderElect: false,
    schedulerName,
    identity: uniqueName('it-authz'),
    installCrd: false,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
    // Open streams' tokens re-reviewed every second (the TokenReview cache still holds a verdict 10 s).
    streamTokenReviewSeconds: 1,
  });
  expect(config.anonymousUserPort).toBe(false);
  gateway = await startGateway(config, [
    (ctx) => {
      const c = schedulerComponent(ctx);
      scheduler = c.scheduler;
      return c;
    },
    (ctx) =>
      graphqlComponent(ctx, {
        scheduler: {
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
        },
      }),
  ]);
  await gateway.cache.ready();
});

afterAll(async () => {
  await gateway?.stop();
});

describe('the user port without a token', () => {
  it('answers 401 over HTTP and SSE, closes a WebSocket with 4401, and still serves health', async () => {
    expect((await fetch(`${base()}/healthz`)).status).toBe(200);
    expect((await fetch(`${base()}/readyz`)).status).toBe(200);
    for (const path of ['/metrics', '/scheduler/status', '/api/node-load', '/operator/suggestions']) {
      const res = await fetch(`${base()}${path}`);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="nodeload"');
    }
    const post = await fetch(`${base()}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ pendingPods { name } }' }),
    });
    expect(post.status).toBe(401);
    expect(await post.json()).toMatchObject({
      message: expect.stringContaining('authentication required'),
      errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
    });
    const sse = await fetch(`${base()}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { schedulingEvents { id } }' }),
    });
    expect(sse.status).toBe(401);
    await sse.body?.cancel();
    const bogus = await gql('not-a-token', '{ pendingPods { name } }');
    expect(bogus.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED' });

    const closed = await new Promise<{ code: number; reason: string }>((resolve) => {
      const client = createClient({
        url: `ws://127.0.0.1:${gateway.httpPort}/graphql`,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
      });
      client.subscribe(
        { query: '{ pendingPods { name } }' },
        {
          next: () => {},
          error: (e) => resolve(e as { code: number; reason: string }),
          complete: () => {},
        },
      );
    });
    expect(closed.code).toBe(4401);
    expect(closed.reason).toContain('Unauthorized');
  });
});

describe('a token that may list pods in B but not in A', () => {
  it("reads B's pods and decisions over HTTP; A's are absent from lists and FORBIDDEN when asked for", async () => {
    const { a, b, token } = await twoNamespaces();

    const pending = await gql<{ pendingPods: { namespace: string; name: string }[] }>(
      token,
      '{ pendingPods { namespace name } }',
    );
    expect(pending.errors).toBeUndefined();
    expect(pending.data?.pendingPods).toEqual([{ namespace: b, name: 'visible-b' }]);
    expect(pending.extensions).toMatchObject({ authorization: { omitted: [{ permission: 'pods list' }] } });

    type History = { schedulingHistory: { items: { id: string; namespace: string; pod: string }[] } };
    const history = await gql<History>(
      token,
      '{ schedulingHistory(first: 100) { items { id namespace pod } } }',
    );
    expect(history.errors).toBeUndefined();
    const namespaces = new Set(history.data?.schedulingHistory.items.map((d) => d.namespace));
    expect(namespaces).toEqual(new Set([b]));
    const ofB = await gql<History>(
      token,
      'query($ns: String) { schedulingHistory(namespace: $ns) { items { pod } } }',
      {
        ns: b,
      },
    );
    expect(ofB.data?.schedulingHistory.items.map((d) => d.pod)).toContain('visible-b');

    const ofA = await gql(
      token,
      'query($ns: String) { schedulingHistory(namespace: $ns) { items { pod } } }',
      {
        ns: a,
      },
    );
    expect(ofA.data).toBeNull();
    expect(ofA.errors?.[0]).toMatchObject({
      message: expect.stringContaining(`lacks pods list in ${a}`),
      extensions: { code: 'FORBIDDEN', permission: `pods list in ${a}` },
    });
    const aDecision = scheduler.history.query({ namespace: a, limit: 1 }).items[0];
    const one = await gql(token, 'query($id: ID!) { decision(id: $id) { pod } }', { id: aDecision?.id });
    expect(one.errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN', permission: `pods list in ${a}` });
    const pendingA = await gql(token, 'query($ns: String) { pendingPods(namespace: $ns) { name } }', {
      ns: a,
    });
    expect(pendingA.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');

    // Node data needs `list nodes`, the scheduler's counters `get /scheduler/status`: it has neither.
    const nodes = await gql(token, '{ nodes { name } }');
    expect(nodes.errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN', permission: 'nodes list' });
    const status = await fetch(`${base()}/scheduler/status`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(status.status).toBe(403);
    expect(await status.json()).toMatchObject({ permission: 'get /scheduler/status' });
  });

  it("streams B's decisions over SSE and never A's; a subscription to A is FORBIDDEN", async () => {
    const { a, b, token } = await twoNamespaces();
    const forbidden = await sseSubscribe(
      as(token),
      `${base()}/graphql`,
      'subscription($ns: String) { schedulingEvents(namespace: $ns) { pod } }',
      { ns: a },
    );
    expect(await forbidden.next()).toMatchObject({
      errors: [{ extensions: { code: 'FORBIDDEN', permission: `pods list in ${a}` } }],
    });
    await forbidden.close();

    const before = decisionListeners;
    const sub = await sseSubscribe<{ schedulingEvents: { namespace: string; pod: string } }>(
      as(token),
      `${base()}/graphql`,
      'subscription { schedulingEvents { namespace pod } }',
    );
    try {
      expect(sub.status).toBe(200);
      await waitFor('the SSE subscription listening', () => decisionListeners === before + 1);
      // A's decision is made (and recorded) first, then B's: a leak would arrive before B's.
      const core = coreApi();
      await createPendingPod(core, a, 'secret-a-2');
      await createPendingPod(core, b, 'visible-b-2');
      const first = await sub.next();
      expect(first.data?.schedulingEvents.namespace).toBe(b);
      expect(sub.events.every((e) => e.data?.schedulingEvents.namespace === b)).toBe(true);
    } finally {
      await sub.close();
    }
  });

  it("streams B's decisions over WebSocket (token in connection_init) and never A's", async () => {
    const { a, b, token } = await twoNamespaces();
    const client = webSocketAs(token);

    const forbidden = await new Promise<unknown>((resolve) => {
      client.subscribe(
        {
          query: 'subscription($ns: String) { schedulingEvents(namespace: $ns) { pod } }',
          variables: { ns: a },
        },
        { next: resolve, error: resolve, complete: () => {} },
      );
    });
    expect(JSON.stringify(forbidden)).toContain(`pods list in ${a}`);

    const pending = await new Promise<unknown>((resolve, reject) => {
      client.subscribe(
        { query: '{ pendingPods { namespace name } }' },
        { next: resolve, error: reject, complete: () => {} },
      );
    });
    expect(pending).toMatchObject({ data: { pendingPods: [{ namespace: b, name: 'visible-b' }] } });

    const before = decisionListeners;
    const events: { namespace: string; pod: string }[] = [];
    const errors: unknown[] = [];
    const stop = client.subscribe(
      { query: 'subscription { schedulingEvents { namespace pod __typename } }' },
      {
        next: (r) =>
          events.push((r.data as { schedulingEvents: { namespace: string; pod: string } }).schedulingEvents),
        error: (e) => errors.push(e),
        complete: () => {},
      },
    );
    try {
      await waitFor('the WebSocket subscription listening', () => decisionListeners === before + 1);
      const core = coreApi();
      await createPendingPod(core, a, 'secret-a-3');
      await createPendingPod(core, b, 'visible-b-3');
      await waitFor('a decision on the WebSocket', () => events.length > 0);
      expect(errors).toEqual([]);
      expect(events[0]?.namespace).toBe(b);
      expect(events.every((e) => e.namespace === b)).toBe(true);
    } finally {
      stop();
    }
  });
});

describe('a token revoked while its streams are open', () => {
  it('closes the WebSocket (4401) and ends the SSE subscription (UNAUTHENTICATED) once the ServiceAccount is deleted', async () => {
    const ns = await withNamespace('it-authz-revoke');
    const token = await serviceAccountToken(ns, 'leaver');
    await grantInNamespace(ns, { namespace: ns, name: 'leaver' }, LIST_PODS);
    const authenticates = async () => {
      const review = await kubeConfig()
        .makeApiClient(AuthenticationV1Api)
        .createTokenReview({ body: { spec: { token } } });
      return review.status?.authenticated === true;
    };
    expect(await authenticates()).toBe(true);

    const before = decisionListeners;
    const client = webSocketAs(token);
    let closed: { code: number; reason: string } | undefined;
    client.subscribe(
      { query: 'subscription { schedulingEvents { pod } }' },
      {
        next: () => {},
        error: (e) => {
          closed = e as { code: number; reason: string };
        },
        complete: () => {},
      },
    );
    const sse = await sseSubscribe(
      as(token),
      `${base()}/graphql`,
      'subscription { schedulingEvents { id } }',
    );
    onTestFinished(() => sse.close());
    expect(sse.status).toBe(200);
    await waitFor('both streams listening', () => decisionListeners === before + 2);

    await coreApi().deleteNamespacedServiceAccount({ namespace: ns, name: 'leaver' });
    await waitFor('the API server refusing the token', async () => !(await authenticates()));

    // Within the re-review period plus the TokenReview cache's 10 s: asserted only as "eventually".
    const generous = { timeoutMs: 60_000 };
    const close = await waitFor('the WebSocket closed', () => closed, generous);
    expect(close.code).toBe(4401);
    expect(close.reason).toContain('Unauthorized: invalid bearer token');
    const last = await waitFor(
      'the SSE stream ending with UNAUTHENTICATED',
      () => sse.events.find((e) => e.errors?.[0]?.extensions?.['code'] === 'UNAUTHENTICATED'),
      generous,
    );
    expect(last.errors?.[0]?.message).toContain('the token no longer authenticates');
    await waitFor('both streams stopped listening', () => decisionListeners === before, generous);
  }, 180_000);
});

describe('/metrics', () => {
  it('needs the nonResourceURL get /metrics, as kube-scheduler does', async () => {
    const ns = await withNamespace('it-authz-metrics');
    const reader = await serviceAccountToken(ns, 'reader');
    await grantInNamespace(ns, { namespace: ns, name: 'reader' }, LIST_PODS);
    const scraper = await serviceAccountToken(ns, 'scraper');
    await grantClusterWide({ namespace: ns, name: 'scraper' }, [
      { nonResourceURLs: ['/metrics'], verbs: ['get'] },
    ]);

    const denied = await fetch(`${base()}/metrics`, { headers: { authorization: `Bearer ${reader}` } });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({
      error: 'Forbidden',
      permission: 'get /metrics',
      message: `forbidden: user "system:serviceaccount:${ns}:reader" lacks get /metrics`,
    });
    const allowed = await fetch(`${base()}/metrics`, { headers: { authorization: `Bearer ${scraper}` } });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('nodeload_build_info');
  });
});

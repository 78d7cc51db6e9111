// The read-only roles the base ships for the user port (manifests/viewer), as an admin hands them out:
// a token bound to nodeload:viewer runs every query and subscription the dashboard sends and reads
// nothing more (no /metrics, no write, exactly four rows in `kubectl auth can-i --list`); a user holding
// the built-in `view` in one namespace sees that namespace's pending pods, decisions and rules on the
// dashboard (nodeload:nodeloadrules-reader is aggregated into view; the pending pods are asked apart from
// the scheduler's status, which `view` does not grant), and neither nodes nor other namespaces. The
// gateway reviews every token and permission with the real API server. The roles come from the kustomize
// rendering of the base, their names suffixed for the shared cluster.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { graphqlComponent } from '../../src/graphql/component.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { schedulerComponent } from '../../src/scheduler/component.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import {
  DECISION,
  DECISIONS,
  HISTORY,
  LOAD_UPDATES,
  NODES,
  PENDING,
  RULES,
  SCHEDULER_STATUS,
  SIMULATE,
} from '../../web/src/operations.js';
import {
  addedRows,
  hasWildcard,
  isolate,
  type KubeObject,
  kustomize,
  parseCanIList,
} from '../cluster/deploy.js';
import { VIEWER_ROLE } from '../cluster/viewer.js';
import { type FetchTarget, type GraphQLResponse, postGraphQL, sseSubscribe } from '../kit/graphql.js';
import {
  coreApi,
  createNodeLoadRule,
  kubeConfig,
  provided,
  uniqueName,
  waitFor,
  withNamespace,
} from './context.js';
import { applyObjects, deleteObjects, kubectlRun } from './deployed.js';

let gateway: Gateway;
let scheduler: Scheduler;
const schedulerName = uniqueName('nodeload-it-viewer');
const suffix = schedulerName.slice(-10);
/** Cluster-scoped objects of this file, removed after it. */
const cleanup: KubeObject[] = [];
/** The shipped roles as applied here: their names suffixed. */
let roles: { viewer: string; rulesReader: string };

const base = () => `http://127.0.0.1:${gateway.httpPort}`;
const as = (token: string): FetchTarget => ({
  fetch: (url, init) =>
    fetch(url, { ...init, headers: { ...(init.headers as object), authorization: `Bearer ${token}` } }),
});
const gql = <T = Record<string, unknown>>(token: string, doc: { toString(): string }, vars?: object) =>
  postGraphQL<T>(as(token), `${base()}/graphql`, String(doc), vars as Record<string, unknown>);

/** A pod of this file's scheduler that fits no node: pending, each attempt a decision. */
async function pendingPod(namespace: string, name: string): Promise<void> {
  await coreApi().createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        schedulerName,
        nodeSelector: { 'nodeload.test/viewer': 'nowhere' },
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'app', image: 'registry.invalid/app:1' }],
      },
    },
  });
  await waitFor(`a decision for ${namespace}/${name}`, () =>
    scheduler.history.query({ namespace, pod: name, limit: 1 }).items.length > 0 ? true : undefined,
  );
}

/** A ServiceAccount, bound as `binding` says, and a token for it. */
async function boundServiceAccount(namespace: string, name: string, binding: KubeObject): Promise<string> {
  const subject = { kind: 'ServiceAccount', namespace, name };
  await applyObjects([
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
    { ...binding, subjects: [subject] },
  ]);
  if (binding.kind === 'ClusterRoleBinding') cleanup.push(binding);
  return (await kubectlRun(['create', 'token', name, '-n', namespace, '--duration=600s'])).stdout.trim();
}

const clusterRoleBinding = (name: string, role: string): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
});

beforeAll(async () => {
  // The cache watches NodeLoadRules: it syncs once their CRD exists.
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  const rendered = isolate(await kustomize(provided('kubectlPath'), 'base'), {
    namespace: uniqueName('nl-viewer-ns'),
    suffix,
  });
  const shipped = rendered.filter(
    (o) => o.kind === 'ClusterRole' && o.metadata.labels?.['app.kubernetes.io/component'] === 'user-port',
  );
  roles = {
    viewer: `${VIEWER_ROLE}-${suffix}`,
    rulesReader: `nodeload:nodeloadrules-reader-${suffix}`,
  };
  expect(shipped.map((o) => o.metadata.name).sort()).toEqual([roles.rulesReader, roles.viewer]);
  cleanup.push(...shipped);
  await applyObjects(shipped);

  const config = parseConfig({
    kubeconfig: inject('kubeconfig'),
    httpPort: 0,
    bindAddress: '127.0.0.1',
    leaderElect: false,
    schedulerName,
    identity: uniqueName('it-viewer'),
    installCrd: false,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
  });
  gateway = await startGateway(config, [
    (ctx) => {
      const c = schedulerComponent(ctx);
      scheduler = c.scheduler;
      return c;
    },
    (ctx) => graphqlComponent(ctx, { scheduler }),
  ]);
  await gateway.cache.ready();
});

afterAll(async () => {
  await gateway?.stop();
  await deleteObjects(cleanup);
});

/** A response without errors and with nothing left out. */
function complete<T>(res: GraphQLResponse<T>, what: string): T {
  expect(res.errors, what).toBeUndefined();
  expect(res.extensions?.['authorization'], what).toBeUndefined();
  return res.data as T;
}

describe('a token bound to nodeload:viewer', () => {
  it('runs every query and subscription of the dashboard, in every namespace', {
    timeout: 120_000,
  }, async () => {
    const ns = await withNamespace('it-viewer');
    await createNodeLoadRule(ns, 'web', { maxCPU: 70 }, (key) => gateway.cache.rules.has(key));
    await pendingPod(ns, 'waiting');
    const token = await boundServiceAccount(
      ns,
      'dashboard',
      clusterRoleBinding(uniqueName('nl-viewer'), roles.viewer),
    );

    complete(await gql(token, NODES), 'nodes');
    const rules = complete(
      await gql<{ rules: { namespace: string; name: string }[] }>(token, RULES),
      'rules',
    );
    expect(rules.rules).toContainEqual(expect.objectContaining({ namespace: ns, name: 'web' }));
    const pending = complete(
      await gql<{ pendingPods: { namespace: string; name: string }[] }>(token, PENDING),
      'pending pods',
    );
    expect(pending.pendingPods).toContainEqual(expect.objectContaining({ namespace: ns, name: 'waiting' }));
    complete(await gql(token, SCHEDULER_STATUS), 'scheduler status');
    const history = complete(
      await gql<{ schedulingHistory: { items: { id: string; pod: string }[] } }>(token, HISTORY, {
        first: 20,
      }),
      'history',
    );
    const id = history.schedulingHistory.items.find((d) => d.pod === 'waiting')?.id;
    expect(id).toBeDefined();
    complete(await gql(token, DECISION, { id }), 'decision');
    complete(
      await gql(token, SIMULATE, { namespace: ns, name: 'web', spec: { maxCPU: 50, maxMemory: 80 } }),
      'what-if',
    );

    // The live parts: node loads and decisions over SSE, as the dashboard subscribes.
    const loads = await sseSubscribe(as(token), `${base()}/graphql`, String(LOAD_UPDATES));
    const decisions = await sseSubscribe<{ schedulingEvents: { namespace: string; pod: string } }>(
      as(token),
      `${base()}/graphql`,
      String(DECISIONS),
    );
    try {
      expect([loads.status, decisions.status]).toEqual([200, 200]);
      await pendingPod(ns, 'another');
      const event = await waitFor('the decision event of the new pod', async () => {
        const e = await decisions.next();
        return e.data?.schedulingEvents.pod === 'another' ? e : undefined;
      });
      expect(event.errors).toBeUndefined();
    } finally {
      await Promise.all([loads.close(), decisions.close()]);
    }

    // The scheduler's status route, and /metrics, which the dashboard does not need.
    expect((await as(token).fetch(`${base()}/scheduler/status`, {})).status).toBe(200);
    expect((await as(token).fetch(`${base()}/metrics`, {})).status).toBe(403);
  });

  it('grants reading pods, nodes, rules and the scheduler status, and nothing else', async () => {
    const ns = await withNamespace('it-viewer-cani');
    await boundServiceAccount(ns, 'dashboard', clusterRoleBinding(uniqueName('nl-viewer'), roles.viewer));
    const list = async (user: string) =>
      parseCanIList((await kubectlRun(['auth', 'can-i', '--list', `--as=${user}`, '-n', ns])).stdout);
    const added = addedRows(
      await list(`system:serviceaccount:${ns}:dashboard`),
      // The same kind of identity without the binding: what every ServiceAccount may do anyway.
      await list(`system:serviceaccount:${ns}:nobody`),
    );
    expect(added.filter(hasWildcard)).toEqual([]);
    expect(added.map((r) => `${r.resources || r.nonResourceURLs} ${r.verbs}`).sort()).toEqual([
      '[/scheduler/status] [get]',
      'nodeloadrules.example.com [get list watch]',
      'nodes [get list watch]',
      'pods [get list watch]',
    ]);
  });
});

describe('the built-in view role in one namespace', () => {
  it("shows that namespace's pods, decisions and rules, and not nodes, the scheduler's status or other namespaces", {
    timeout: 120_000,
  }, async () => {
    const [mine, other] = await Promise.all([
      withNamespace('it-viewer-mine'),
      withNamespace('it-viewer-other'),
    ]);
    for (const ns of [mine, other]) {
      await createNodeLoadRule(ns, 'web', { maxCPU: 70 }, (key) => gateway.cache.rules.has(key));
      await pendingPod(ns, 'waiting');
    }
    const token = await boundServiceAccount(mine, 'team', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'team-view', namespace: mine },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    });

    // The rules reach `view` through the aggregation controller, soon after the role exists.
    const rules = await waitFor('the namespace rule through the aggregated view role', async () => {
      const res = await gql<{ rules: { namespace: string; name: string }[] }>(token, RULES);
      return res.data?.rules.some((r) => r.namespace === mine) ? res : undefined;
    });
    expect(rules.errors).toBeUndefined();
    expect(rules.data?.rules.map((r) => r.namespace)).not.toContain(other);
    expect(rules.extensions?.['authorization']).toMatchObject({
      omitted: expect.arrayContaining([
        expect.objectContaining({ permission: 'nodeloadrules.example.com list' }),
      ]),
    });

    const pods = await gql<{
      pendingPods: { namespace: string }[];
      schedulingHistory: { items: { namespace: string }[] };
    }>(token, '{ pendingPods { namespace } schedulingHistory(first: 50) { items { namespace } } }');
    expect(pods.errors).toBeUndefined();
    expect(pods.data?.pendingPods.map((p) => p.namespace)).toEqual([mine]);
    expect(new Set(pods.data?.schedulingHistory.items.map((d) => d.namespace))).toEqual(new Set([mine]));
    // The dashboard's operations exactly as web/src sends them: the pending pods of this namespace
    // (asked apart from the scheduler's status, which needs `get /scheduler/status`), the status refused
    // with the permission named (the page says "scheduler status: not permitted"), the decisions.
    const pending = await gql<{ pendingPods: { namespace: string; name: string }[] }>(token, PENDING);
    expect(pending.errors).toBeUndefined();
    expect(pending.data?.pendingPods).toContainEqual(
      expect.objectContaining({ namespace: mine, name: 'waiting' }),
    );
    expect(pending.data?.pendingPods.map((p) => p.namespace)).toEqual([mine]);
    const status = await gql(token, SCHEDULER_STATUS);
    expect(status.data).toBeNull();
    expect(status.errors?.map((e) => e.extensions)).toEqual([
      expect.objectContaining({ code: 'FORBIDDEN', permission: 'get /scheduler/status' }),
    ]);
    const history = await gql<{ schedulingHistory: { items: { namespace: string; pod: string }[] } }>(
      token,
      HISTORY,
      { first: 100 },
    );
    expect(history.errors).toBeUndefined();
    expect(history.data?.schedulingHistory.items).toContainEqual(
      expect.objectContaining({ namespace: mine, pod: 'waiting' }),
    );
    const nodes = await gql(token, NODES);
    expect(nodes.errors?.map((e) => e.extensions)).toEqual([
      expect.objectContaining({ code: 'FORBIDDEN', permission: 'nodes list' }),
    ]);
  });
});

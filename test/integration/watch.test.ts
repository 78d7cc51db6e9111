// The informers' watch on node:https (src/cluster/watch-https.ts) against the real API server: an informer
// built on it follows add/update/delete, recovers from a too-old resourceVersion by relisting, reports a
// forbidden watch as 403; the watch ends once, with the right value, at the server's timeout, on abort
// and on inactivity. (ClusterCache uses it by default, so cache.test.ts exercises it too.)
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api, type V1Pod } from '@kubernetes/client-node';
import pino from 'pino';
import { describe, expect, it, onTestFailed, onTestFinished } from 'vitest';
import { type ListFn, ResilientInformer, type WatchFn, watchFnFor } from '../../src/cluster/informer.js';
import { httpStatusOf, type KubeObject } from '../../src/cluster/kube-object.js';
import { httpsWatchFn, WatchStatusError } from '../../src/cluster/watch-https.js';
import { readClusterState } from '../cluster/controlplane.js';
import { kubeConfig, provided, waitFor, withNamespace } from './context.js';

function podBody(name: string): V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] },
  };
}

interface Resource {
  path: string;
  list: ListFn;
}

function pods(kc: KubeConfig, namespace: string): Resource {
  const core = kc.makeApiClient(CoreV1Api);
  return {
    path: `/api/v1/namespaces/${namespace}/pods`,
    list: async () => {
      const list = await core.listNamespacedPod({ namespace });
      return { metadata: { resourceVersion: list.metadata?.resourceVersion }, items: list.items };
    },
  };
}

/** Compacts the shared cluster's etcd (plain HTTP on loopback) up to `revision`. */
async function compactEtcd(revision: number): Promise<void> {
  const state = readClusterState(provided('clusterDir'));
  if (!state) throw new Error('no cluster state');
  const res = await fetch(`http://127.0.0.1:${state.ports.etcdClient}/v3/kv/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision: String(revision), physical: true }),
  });
  if (!res.ok) throw new Error(`etcd compaction: ${res.status} ${await res.text()}`);
}

/** A started informer; what its handlers saw, and its logs, printed if the test fails. */
function startInformer(resource: Resource, watch: WatchFn) {
  const logs: Array<{ msg: string; status?: number }> = [];
  const log = pino({ level: 'debug' }, { write: (l: string) => logs.push(JSON.parse(l)) });
  onTestFailed(() => {
    process.stderr.write(`--- informer log ---\n${logs.map((l) => JSON.stringify(l)).join('\n')}\n`);
  });
  const seen: string[] = [];
  const informer = new ResilientInformer<KubeObject>(
    { name: 'test', ...resource, watch, log },
    {
      add: (o) => seen.push(`add ${o.metadata?.name}`),
      update: (o) => seen.push(`update ${o.metadata?.name} ${JSON.stringify(o.metadata?.labels)}`),
      delete: (o) => seen.push(`delete ${o.metadata?.name}`),
    },
  );
  informer.start();
  onTestFinished(() => informer.stop());
  return { informer, seen, logs };
}

/** A KubeConfig for the shared cluster that authenticates as a new ServiceAccount of `namespace`. */
async function serviceAccountConfig(namespace: string, name: string): Promise<KubeConfig> {
  const admin = kubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const request = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { expirationSeconds: 600, audiences: [] } },
  });
  const cluster = admin.getCurrentCluster();
  if (!cluster || !request.status?.token) throw new Error('no cluster or no token');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name, token: request.status.token }],
    contexts: [{ name, cluster: cluster.name, user: name }],
    currentContext: name,
  });
  return kc;
}

interface Ended {
  events: Array<{ type: string; object: unknown }>;
  dones: unknown[];
  request: { abort(): void };
  /** Resolves with the first done's error; afterwards a macrotask passes, so that a second done would show. */
  ended: Promise<unknown>;
}

async function watchUntilDone(
  watch: WatchFn,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
): Promise<Ended> {
  const events: Ended['events'] = [];
  const dones: unknown[] = [];
  let resolve!: (err: unknown) => void;
  const first = new Promise<unknown>((r) => {
    resolve = r;
  });
  const request = await watch(
    path,
    query,
    (type, object) => events.push({ type, object }),
    (err) => {
      dones.push(err);
      resolve(err);
    },
  );
  const ended = first.then((err) => new Promise<unknown>((r) => setTimeout(() => r(err), 50)));
  return { events, dones, request, ended };
}

describe('httpsWatchFn on the shared cluster', () => {
  it("an informer on the gateway's watch follows pod add, update and delete, without managedFields", async () => {
    const kc = kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const namespace = await withNamespace('it-watch');
    await core.createNamespacedPod({ namespace, body: podBody('before') });
    const gateways = watchFnFor(kc);
    const watched: KubeObject[] = [];
    const watch: WatchFn = (path, query, onEvent, onDone) =>
      gateways(
        path,
        query,
        (type, obj, line) => {
          watched.push(obj as KubeObject);
          onEvent(type, obj, line);
        },
        onDone,
      );
    const { informer, seen } = startInformer(pods(kc, namespace), watch);
    await informer.synced;
    expect(seen).toEqual(['add before']);

    await core.createNamespacedPod({ namespace, body: podBody('during') });
    await waitFor('the add', () => seen.includes('add during'));
    await core.patchNamespacedPod({
      namespace,
      name: 'during',
      body: [{ op: 'add', path: '/metadata/labels/tier', value: 'web' }],
    });
    await waitFor('the update', () => seen.some((s) => s.startsWith('update during') && s.includes('web')));
    await core.deleteNamespacedPod({ namespace, name: 'during', gracePeriodSeconds: 0 });
    await waitFor('the delete', () => seen.includes('delete during'));
    // All of it came through the one watch: no relist, no restart.
    expect(informer.stats).toMatchObject({ lists: 1, watches: 1, restarts: 0 });
    expect(informer.stats.events).toMatchObject({ added: 1, deleted: 1 });
    // The server keeps managedFields (create and patch each own fields); the watch leaves them unparsed.
    const created = await core.createNamespacedPod({ namespace, body: podBody('check') });
    expect(created.metadata?.managedFields?.length).toBeGreaterThan(0);
    await waitFor('the last add', () => seen.includes('add check'));
    expect(watched.map((o) => o.metadata?.name)).toEqual(expect.arrayContaining(['during', 'check']));
    expect(watched.filter((o) => o.metadata?.managedFields !== undefined)).toEqual([]);
  });

  it('a too-old resourceVersion: the ERROR 410 passes through and the informer relists', async () => {
    const kc = kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const namespace = await withNamespace('it-watch-410');
    const event = (name: string) => ({
      metadata: { name },
      involvedObject: { kind: 'Pod', namespace, name: 'some-pod' },
      reason: 'Test',
      message: name,
      type: 'Normal',
    });
    await core.createNamespacedEvent({ namespace, body: event('old') });
    const old = (await core.listNamespacedEvent({ namespace })).metadata?.resourceVersion;
    await core.createNamespacedEvent({ namespace, body: event('gap') });
    const later = await core.createNamespacedEvent({ namespace, body: event('later') });
    // Events have no watch cache in kube-apiserver, so a watch from `old` is served by etcd: compacting
    // etcd past old + 1 (what the API server does every 5 minutes, here only up to `later`) makes it too old.
    await compactEtcd(Number(later.metadata?.resourceVersion));

    const real = httpsWatchFn(kc);
    const errors: unknown[] = [];
    let first = true;
    const watch: WatchFn = (path, query, onEvent, onDone) => {
      const q = first ? { ...query, resourceVersion: old } : query;
      first = false;
      return real(
        path,
        q,
        (type, obj, line) => {
          if (type === 'ERROR') errors.push(obj);
          onEvent(type, obj, line);
        },
        onDone,
      );
    };
    const list: ListFn = async () => {
      const l = await core.listNamespacedEvent({ namespace });
      return { metadata: { resourceVersion: l.metadata?.resourceVersion }, items: l.items };
    };
    const { informer, seen } = startInformer({ path: `/api/v1/namespaces/${namespace}/events`, list }, watch);
    await waitFor(
      'a watch after the relist',
      () => informer.stats.expired === 1 && informer.stats.watches === 2,
    );
    expect(errors).toEqual([expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' })]);
    expect(informer.stats.lists).toBe(2);
    await core.createNamespacedEvent({ namespace, body: event('after') });
    await waitFor('the event made after the relist', () => seen.includes('add after'));
    // The list's three (in the list's order), then the one the new watch saw.
    expect(seen.slice(0, 3).sort()).toEqual(['add gap', 'add later', 'add old']);
    expect(seen.slice(3)).toEqual(['add after']);
  });

  it('a watch the token may not make is a 403 (the informer logs it and retries)', async () => {
    const namespace = await withNamespace('it-watch-403');
    const kc = await serviceAccountConfig(namespace, 'lister');
    // May list the namespace's pods, not watch them: the informer syncs, then its watch is refused.
    const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    const role = 'list-pods';
    await rbac.createNamespacedRole({
      namespace,
      body: { metadata: { name: role }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: role },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
        subjects: [{ kind: 'ServiceAccount', namespace, name: 'lister' }],
      },
    });
    const watch = httpsWatchFn(kc);
    const path = `/api/v1/namespaces/${namespace}/pods`;

    const refused = await waitFor('RBAC to admit the list but not the watch', async () => {
      await pods(kc, namespace).list({});
      const w = await watchUntilDone(watch, path, {});
      const err = await w.ended;
      return httpStatusOf(err) === 403 ? { w, err } : undefined;
    });
    expect(refused.err).toBeInstanceOf(WatchStatusError);
    expect((refused.err as WatchStatusError).status?.reason).toBe('Forbidden');
    expect((refused.err as Error).message).toMatch(/cannot watch resource "pods"/);
    expect(refused.w.dones).toHaveLength(1);

    const { informer, logs } = startInformer(pods(kc, namespace), watch);
    await informer.synced;
    await waitFor('the refused watch logged', () =>
      logs.some((l) => l.msg === 'watch failed; retrying' && l.status === 403),
    );
    expect(informer.stats.lastError).toMatch(/Forbidden/);
  });

  it('delivers nothing after an abort made from inside an event callback', async () => {
    const kc = kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const namespace = await withNamespace('it-watch-stop');
    for (const name of ['a', 'b', 'c']) await core.createNamespacedPod({ namespace, body: podBody(name) });
    // Without a resourceVersion the server starts with an ADDED per existing pod, written back to back.
    const names: unknown[] = [];
    const dones: unknown[] = [];
    let request: { abort(): void } | undefined;
    await new Promise<void>((resolve) => {
      void httpsWatchFn(kc)(
        `/api/v1/namespaces/${namespace}/pods`,
        {},
        (_type, obj) => {
          names.push((obj as KubeObject).metadata?.name);
          request?.abort();
        },
        (err) => {
          dones.push(err);
          resolve();
        },
      ).then((r) => {
        request = r;
      });
    });
    expect(names).toHaveLength(1);
    expect(dones).toEqual([expect.objectContaining({ name: 'AbortError' })]);
  });

  it('ends once each: null at the server timeout, AbortError on abort, TimeoutError when silent', async () => {
    const kc = kubeConfig();
    const namespace = await withNamespace('it-watch-end');
    const path = `/api/v1/namespaces/${namespace}/pods`;
    const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace });
    const resourceVersion = list.metadata?.resourceVersion;

    const timedOut = await watchUntilDone(httpsWatchFn(kc), path, { resourceVersion, timeoutSeconds: 1 });
    expect(await timedOut.ended).toBeNull();
    timedOut.request.abort();
    expect(timedOut.dones).toEqual([null]);

    const aborted = await watchUntilDone(httpsWatchFn(kc), path, { resourceVersion });
    aborted.request.abort();
    aborted.request.abort();
    expect((await aborted.ended) as Error).toMatchObject({ name: 'AbortError' });
    expect(aborted.dones).toHaveLength(1);

    const silent = await watchUntilDone(httpsWatchFn(kc, { inactivityMs: 300 }), path, { resourceVersion });
    expect((await silent.ended) as Error).toMatchObject({ name: 'TimeoutError' });
    expect(silent.dones).toHaveLength(1);
    expect([...timedOut.events, ...aborted.events, ...silent.events]).toEqual([]);
  });
});

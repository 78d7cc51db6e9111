// Helpers for integration tests; the values come from global-setup.ts through vitest's provide/inject.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, inject, onTestFinished, type ProvidedContext } from 'vitest';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import {
  killClusterSync,
  type StartClusterOptions,
  startCluster,
  stopCluster,
  waitForDefaultServiceAccount,
} from '../cluster/controlplane.js';
import { deleteFakeNodes, describeApiError, isApiException } from '../cluster/nodes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of the admin (system:masters) kubeconfig. */
    kubeconfig: string;
    /** The cluster directory (state.json, logs/, pki/). */
    clusterDir: string;
    /** Directory of the control-plane binaries (kubectl, kube-apiserver, ...). */
    binDir: string;
    /** PKI: ca.crt (cluster CA, caBundle for webhooks/APIService), serving.crt/.key (gateway), front-proxy-ca.crt. */
    pkiDir: string;
    kubectlPath: string;
    apiserverUrl: string;
  }
}

let cachedConfig: KubeConfig | undefined;
let privateCluster: Partial<ProvidedContext> | undefined;

/** The shared cluster's value, or this file's private cluster's after usePrivateCluster(). */
export function provided<K extends keyof ProvidedContext>(key: K): ProvidedContext[K] {
  return (privateCluster?.[key] as ProvidedContext[K] | undefined) ?? inject(key);
}

let privateClusterDir: string | undefined;

// Registered when this module is imported, i.e. at the test file's top level: vitest does not run an
// afterAll registered from inside a beforeAll, and a leaked control plane outlives the run.
afterAll(async () => {
  if (!privateClusterDir) return;
  await stopCluster(privateClusterDir);
  if (!process.env['NODELOAD_IT_KEEP']) rmSync(privateClusterDir, { recursive: true, force: true });
});
// A killed worker never reaches afterAll: end the private cluster's recorded processes on exit.
process.once('exit', () => {
  if (privateClusterDir) killClusterSync(privateClusterDir);
});

/**
 * Gives this test file a control plane of its own (every helper here then uses it), for tests that
 * change cluster-wide state other files would see: a metrics.k8s.io APIService, an API server restart.
 * Call in beforeAll; the cluster is stopped after the file. `scheduler: true` also runs the stock
 * kube-scheduler (the differential harness's oracle), with `schedulerConfig` as its configuration file.
 */
export async function usePrivateCluster(
  opts: Pick<StartClusterOptions, 'scheduler' | 'schedulerConfig'> = {},
): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'nodeload-private-'));
  privateClusterDir = dir;
  const cluster = await startCluster({
    dir,
    binDir: inject('binDir'),
    scheduler: opts.scheduler ?? false,
    ...(opts.schedulerConfig ? { schedulerConfig: opts.schedulerConfig } : {}),
  });
  privateCluster = {
    kubeconfig: cluster.kubeconfig,
    clusterDir: dir,
    pkiDir: cluster.pkiDir,
    kubectlPath: cluster.kubectl,
    apiserverUrl: cluster.apiserverUrl,
  };
  cachedConfig = undefined;
}

/** A KubeConfig loaded from the cluster's admin kubeconfig (shared, do not mutate). */
export function kubeConfig(): KubeConfig {
  if (!cachedConfig) {
    cachedConfig = new KubeConfig();
    cachedConfig.loadFromFile(provided('kubeconfig'));
  }
  return cachedConfig;
}

export function coreApi(): CoreV1Api {
  return kubeConfig().makeApiClient(CoreV1Api);
}

/** Path of a file in the cluster PKI directory, e.g. pkiPath('ca.crt'), pkiPath('serving.key'). */
export function pkiPath(file: string): string {
  return path.join(provided('pkiDir'), file);
}

/** A DNS-1123 name unique across parallel test files: `<prefix>-<10 random chars>`. */
export function uniqueName(prefix: string): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50);
  return `${clean || 'x'}-${randomBytes(8).toString('hex').slice(0, 10)}`;
}

export interface TestNamespace {
  name: string;
  /** Deletes the namespace (without waiting for finalization); safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * Creates a fresh namespace and waits until its `default` ServiceAccount exists (pods need it).
 * For suite-level use (beforeAll/afterAll); inside a test prefer withNamespace().
 */
export async function createNamespace(prefix = 'it'): Promise<TestNamespace> {
  const api = coreApi();
  const name = uniqueName(prefix);
  await api.createNamespace({
    body: { metadata: { name, labels: { 'nodeload.test/integration': 'true' } } },
  });
  await waitForDefaultServiceAccount(provided('kubeconfig'), name, 60_000);
  let disposed = false;
  return {
    name,
    async dispose() {
      if (disposed) return;
      disposed = true;
      try {
        await api.deleteNamespace({ name });
      } catch (err) {
        if (!isApiException(err, 404))
          throw new Error(`deleting namespace ${name}: ${describeApiError(err)}`);
      }
    },
  };
}

/** Creates a fresh namespace for the current test; it is deleted when the test finishes. Returns its name. */
export async function withNamespace(prefix = 'it'): Promise<string> {
  const ns = await createNamespace(prefix);
  onTestFinished(() => ns.dispose());
  return ns.name;
}

/** Runs the built kubectl against the test cluster; resolves with stdout, rejects with stderr on failure. */
export async function kubectl(
  args: string[],
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  const bin = provided('kubectlPath');
  return await new Promise((resolve, reject) => {
    const child = execFile(
      bin,
      [`--kubeconfig=${provided('kubeconfig')}`, ...args],
      { timeout: opts.timeoutMs ?? 30_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`kubectl ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
        else resolve(stdout);
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/**
 * Polls fn until it returns a value other than undefined/false (which is returned), or throws after timeoutMs
 * with the description and the last error/value. Errors thrown by fn count as "not yet".
 */
export async function waitFor<T>(
  description: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined && value !== false) return value;
      last = `last value: ${String(value)}`;
    } catch (err) {
      last = `last error: ${describeApiError(err)}`;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${description} (${last})`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The pod, or undefined once it is gone. */
export async function readPod(namespace: string, name: string): Promise<V1Pod | undefined> {
  try {
    return await coreApi().readNamespacedPod({ namespace, name });
  } catch (err) {
    if (isApiException(err, 404)) return undefined;
    throw err;
  }
}

/**
 * Creates a pod no scheduler serves and binds it to `node` through the pods/binding subresource, as a
 * scheduler would: load on a node that the test controls exactly.
 */
export async function createBoundPod(
  namespace: string,
  name: string,
  node: string,
  requests: { cpu: string; memory: string },
  labels: Record<string, string> = {},
): Promise<void> {
  const core = coreApi();
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, labels },
      spec: {
        schedulerName: 'nodeload-it-manual',
        containers: [{ name: 'app', image: 'registry.invalid/app:1', resources: { requests } }],
      },
    },
  });
  await core.createNamespacedPodBinding({
    name,
    namespace,
    body: {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name },
      target: { apiVersion: 'v1', kind: 'Node', name: node },
    },
  });
}

/**
 * A test file's teardown, in the order that lets everything go: pods first (pods on a deleted KWOK node
 * would wait for the pod GC and hold the namespace in Terminating), then the nodes, the namespace and
 * any extra namespaces (e.g. a leader-election Lease's); missing ones are fine.
 */
export async function removeTestResources(r: {
  namespace?: TestNamespace;
  nodes?: readonly string[];
  extraNamespaces?: readonly (string | undefined)[];
}): Promise<void> {
  if (r.namespace) {
    await coreApi().deleteCollectionNamespacedPod({ namespace: r.namespace.name, gracePeriodSeconds: 0 });
  }
  if (r.nodes?.length) await deleteFakeNodes(provided('kubeconfig'), [...r.nodes]);
  await r.namespace?.dispose();
  for (const name of r.extraNamespaces ?? []) {
    if (!name) continue;
    try {
      await coreApi().deleteNamespace({ name });
    } catch (err) {
      if (!isApiException(err, 404)) throw new Error(`deleting ${name}: ${describeApiError(err)}`);
    }
  }
}

/**
 * Creates a NodeLoadRule and waits until `known` (a gateway's cache) has it: the scheduler must know the
 * rule before the pods it covers arrive.
 */
export async function createNodeLoadRule(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  known: (key: string) => boolean,
): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace,
      body: { apiVersion: `${RULE_GROUP}/${RULE_VERSION}`, kind: 'NodeLoadRule', metadata: { name }, spec },
    });
  await waitFor(`rule ${namespace}/${name} in the gateway cache`, () => known(`${namespace}/${name}`));
}

/**
 * The numbered pods of a burst (`${app}-000`, …, label app=`app`) for a scheduler, held to a pool of fake
 * nodes by a node label: what the tests that run a gateway process create.
 */
export function burstPod(
  i: number,
  o: {
    app: string;
    schedulerName: string;
    pool: { label: string; value: string };
    requests: { cpu: string; memory: string };
    terminationGracePeriodSeconds?: number;
  },
): V1Pod {
  return {
    metadata: { name: `${o.app}-${String(i).padStart(3, '0')}`, labels: { app: o.app } },
    spec: {
      schedulerName: o.schedulerName,
      nodeSelector: { [o.pool.label]: o.pool.value },
      ...(o.terminationGracePeriodSeconds === undefined
        ? {}
        : { terminationGracePeriodSeconds: o.terminationGracePeriodSeconds }),
      containers: [{ name: 'c', image: 'registry.invalid/x:1', resources: { requests: o.requests } }],
    },
  };
}

/** Creates pods `from` … `to − 1` of `pod`, `inFlight` creates at a time. */
export async function createPods(
  namespace: string,
  from: number,
  to: number,
  pod: (i: number) => V1Pod,
  inFlight: number,
): Promise<void> {
  const core = coreApi();
  for (let i = from; i < to; i += inFlight)
    await Promise.all(
      Array.from({ length: Math.min(inFlight, to - i) }, (_, j) =>
        core.createNamespacedPod({ namespace, body: pod(i + j) }),
      ),
    );
}

/**
 * Registers the aggregated API of a gateway running on this machine (local control plane, tests,
 * demo): renders manifests/aggregated/local.yaml for a port and CA — an ExternalName Service
 * kube-system/nodeload-api → localhost and the APIService v1alpha1.nodeload.example.com — and
 * creates or replaces both. The APIService is cluster-wide: only one gateway can back it at a time.
 * In-cluster deployments apply manifests/aggregated/in-cluster.yaml and rbac.yaml instead.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  ApiregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
  loadAllYaml,
  RbacAuthorizationV1Api,
  type V1APIService,
  type V1APIServiceCondition,
  type V1ClusterRoleBinding,
  type V1RoleBinding,
  type V1Service,
} from '@kubernetes/client-node';
import { APISERVICE_NAME } from './api.js';

/** Resolved from this module: src/aggregated (tsx) and dist/aggregated (build) are both two levels below the repo root. */
export const LOCAL_APISERVICE_PATH = fileURLToPath(
  new URL('../../manifests/aggregated/local.yaml', import.meta.url),
);

export interface LocalApiServiceOptions {
  /** The gateway's kube-facing HTTPS port. */
  port: number;
  /** PEM of the CA that signed the serving certificate (DNS SAN nodeload-api.kube-system.svc). */
  caPem: string;
  templatePath?: string;
}

export interface LocalApiService {
  service: V1Service;
  apiService: V1APIService;
}

export function renderLocalApiService(opts: LocalApiServiceOptions): LocalApiService {
  if (!Number.isInteger(opts.port) || opts.port <= 0 || opts.port > 65535) {
    throw new Error(`invalid aggregated API port ${opts.port}`);
  }
  const path = opts.templatePath ?? LOCAL_APISERVICE_PATH;
  const values: Record<string, string> = {
    PORT: String(opts.port),
    CA_BUNDLE: Buffer.from(opts.caPem).toString('base64'),
  };
  // Comments mention the placeholders; only the documents' values are substituted.
  const text = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => {
      const v = values[name];
      if (v === undefined) throw new Error(`${path}: unknown placeholder ${whole}`);
      return v;
    });
  const docs = loadAllYaml(text).filter(Boolean) as (V1Service | V1APIService)[];
  const service = docs.find((d) => d.kind === 'Service') as V1Service | undefined;
  const apiService = docs.find((d) => d.kind === 'APIService') as V1APIService | undefined;
  if (!service || !apiService) throw new Error(`${path} must hold one Service and one APIService`);
  return { service, apiService };
}

/** Who the gateway authenticates to the API server as (its kubeconfig's user, or its ServiceAccount). */
export interface GatewaySubject {
  kind: 'User' | 'ServiceAccount';
  name: string;
  /** ServiceAccounts only. */
  namespace?: string;
}

export interface DelegationRbac {
  /** system:auth-delegator: create TokenReviews and SubjectAccessReviews. */
  clusterRoleBinding: V1ClusterRoleBinding;
  /** extension-apiserver-authentication-reader: read the front-proxy CA ConfigMap in kube-system. */
  roleBinding: V1RoleBinding;
}

export function renderDelegationRbac(subject: GatewaySubject, name = 'nodeload-gateway'): DelegationRbac {
  const subjects = [
    subject.kind === 'ServiceAccount'
      ? { kind: 'ServiceAccount', name: subject.name, namespace: subject.namespace ?? 'default' }
      : { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: subject.name },
  ];
  const labels = { 'app.kubernetes.io/name': 'nodeload', 'app.kubernetes.io/component': 'aggregated-api' };
  return {
    clusterRoleBinding: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${name}:system:auth-delegator`, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects,
    },
    roleBinding: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `${name}-auth-reader`, namespace: 'kube-system', labels },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'extension-apiserver-authentication-reader',
      },
      subjects,
    },
  };
}

function isNotFound(err: unknown): boolean {
  return err instanceof ApiException && err.code === 404;
}

/** Replaces the object (carrying over its resourceVersion) or creates it when absent. */
async function upsert<T extends { metadata?: { resourceVersion?: string } }>(
  desired: T,
  read: () => Promise<T>,
  create: (body: T) => Promise<unknown>,
  replace: (body: T) => Promise<unknown>,
): Promise<void> {
  let current: T;
  try {
    current = await read();
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await create(desired);
    return;
  }
  await replace({
    ...desired,
    metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion },
  });
}

export async function registerLocalApiService(
  kc: KubeConfig,
  opts: LocalApiServiceOptions,
): Promise<LocalApiService> {
  const rendered = renderLocalApiService(opts);
  const core = kc.makeApiClient(CoreV1Api);
  const registration = kc.makeApiClient(ApiregistrationV1Api);
  const { service, apiService } = rendered;
  const svcName = service.metadata?.name ?? '';
  const namespace = service.metadata?.namespace ?? 'kube-system';
  await upsert(
    service,
    () => core.readNamespacedService({ name: svcName, namespace }),
    (body) => core.createNamespacedService({ namespace, body }),
    (body) => core.replaceNamespacedService({ name: svcName, namespace, body }),
  );
  const name = apiService.metadata?.name ?? APISERVICE_NAME;
  await upsert(
    apiService,
    () => registration.readAPIService({ name }),
    (body) => registration.createAPIService({ body }),
    (body) => registration.replaceAPIService({ name, body }),
  );
  return rendered;
}

/** Deletes the APIService first (so the aggregator stops routing), then the Service; absent ones are fine. */
export async function unregisterLocalApiService(
  kc: KubeConfig,
  opts: { templatePath?: string } = {},
): Promise<void> {
  const { service, apiService } = renderLocalApiService({ port: 1, caPem: '', ...opts });
  const ignoreMissing = (err: unknown) => {
    if (!isNotFound(err)) throw err;
  };
  await kc
    .makeApiClient(ApiregistrationV1Api)
    .deleteAPIService({ name: apiService.metadata?.name ?? APISERVICE_NAME })
    .catch(ignoreMissing);
  await kc
    .makeApiClient(CoreV1Api)
    .deleteNamespacedService({
      name: service.metadata?.name ?? '',
      namespace: service.metadata?.namespace ?? 'kube-system',
    })
    .catch(ignoreMissing);
}

/** Grants a gateway that is not cluster-admin what an aggregated API server needs. */
export async function applyDelegationRbac(
  kc: KubeConfig,
  subject: GatewaySubject,
  name?: string,
): Promise<void> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const { clusterRoleBinding, roleBinding } = renderDelegationRbac(subject, name);
  const crbName = clusterRoleBinding.metadata?.name ?? '';
  await upsert(
    clusterRoleBinding,
    () => rbac.readClusterRoleBinding({ name: crbName }),
    (body) => rbac.createClusterRoleBinding({ body }),
    (body) => rbac.replaceClusterRoleBinding({ name: crbName, body }),
  );
  const rbName = roleBinding.metadata?.name ?? '';
  const namespace = roleBinding.metadata?.namespace ?? 'kube-system';
  await upsert(
    roleBinding,
    () => rbac.readNamespacedRoleBinding({ name: rbName, namespace }),
    (body) => rbac.createNamespacedRoleBinding({ namespace, body }),
    (body) => rbac.replaceNamespacedRoleBinding({ name: rbName, namespace, body }),
  );
}

export function availableCondition(apiService: V1APIService): V1APIServiceCondition | undefined {
  return apiService.status?.conditions?.find((c) => c.type === 'Available');
}

/**
 * Waits until the aggregator's availability check passes (it GETs /apis/<group>/<version> through the
 * Service); the error names the last reason, e.g. FailedDiscoveryCheck with the HTTP status.
 */
export async function waitForApiServiceAvailable(
  kc: KubeConfig,
  opts: { name?: string; timeoutMs?: number; intervalMs?: number } = {},
): Promise<V1APIService> {
  const registration = kc.makeApiClient(ApiregistrationV1Api);
  const name = opts.name ?? APISERVICE_NAME;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let last = 'not read yet';
  for (;;) {
    try {
      const current = await registration.readAPIService({ name });
      const cond = availableCondition(current);
      if (cond?.status === 'True') return current;
      last = cond ? `${cond.reason ?? ''}: ${cond.message ?? ''}` : 'no Available condition yet';
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) throw new Error(`APIService ${name} not Available: ${last}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 500));
  }
}

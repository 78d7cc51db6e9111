/**
 * Registers the aggregated API of a gateway running on this machine (local control plane, tests,
 * demo): renders manifests/overlays/local/apiservice.yaml for a port and CA — an ExternalName Service
 * kube-system/nodeload-api → localhost and the APIService v1alpha1.nodeload.example.com — and
 * creates or replaces both. The APIService is cluster-wide: only one gateway can back it at a time.
 * In-cluster deployments use manifests/base/apiservice.yaml (kustomize base, Helm chart) instead.
 */
import {
  ApiregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1APIService,
  type V1APIServiceCondition,
  type V1Service,
} from '@kubernetes/client-node';
import { APISERVICE_NAME } from '../../src/aggregated/api.js';
import {
  createOrReplace,
  ignoreNotFound,
  type LocalEndpoint,
  manifestPath,
  renderTemplate,
} from './manifests.js';

export interface LocalApiServiceOptions extends LocalEndpoint {
  templatePath?: string;
}

export interface LocalApiService {
  service: V1Service;
  apiService: V1APIService;
}

export function renderLocalApiService(opts: LocalApiServiceOptions): LocalApiService {
  const path = opts.templatePath ?? manifestPath('overlays/local/apiservice.yaml');
  const docs = renderTemplate(path, opts, 'aggregated API') as (V1Service | V1APIService)[];
  const service = docs.find((d) => d.kind === 'Service') as V1Service | undefined;
  const apiService = docs.find((d) => d.kind === 'APIService') as V1APIService | undefined;
  if (!service || !apiService) throw new Error(`${path} must hold one Service and one APIService`);
  return { service, apiService };
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
  await createOrReplace(service, {
    read: () => core.readNamespacedService({ name: svcName, namespace }),
    create: (body) => core.createNamespacedService({ namespace, body }),
    replace: (body) => core.replaceNamespacedService({ name: svcName, namespace, body }),
  });
  const name = apiService.metadata?.name ?? APISERVICE_NAME;
  await createOrReplace(apiService, {
    read: () => registration.readAPIService({ name }),
    create: (body) => registration.createAPIService({ body }),
    replace: (body) => registration.replaceAPIService({ name, body }),
  });
  return rendered;
}

/** Deletes the APIService first (so the aggregator stops routing), then the Service; absent ones are fine. */
export async function unregisterLocalApiService(
  kc: KubeConfig,
  opts: { templatePath?: string } = {},
): Promise<void> {
  const { service, apiService } = renderLocalApiService({ port: 1, caPem: '', ...opts });
  await kc
    .makeApiClient(ApiregistrationV1Api)
    .deleteAPIService({ name: apiService.metadata?.name ?? APISERVICE_NAME })
    .catch(ignoreNotFound);
  await kc
    .makeApiClient(CoreV1Api)
    .deleteNamespacedService({
      name: service.metadata?.name ?? '',
      namespace: service.metadata?.namespace ?? 'kube-system',
    })
    .catch(ignoreNotFound);
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

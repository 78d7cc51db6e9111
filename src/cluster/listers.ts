/**
 * How the cache's kinds are listed from the API server (typed clients, paginated), and whether
 * metrics.k8s.io is served. The informers watch the same paths; these supply their lists.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PolicyV1Api,
  ResourceV1Api,
  StorageV1Api,
} from '@kubernetes/client-node';
import type { ListFn, ListResult } from './informer.js';
import { httpStatusOf, type KubeObject } from './kube-object.js';

export type ResourceName =
  | 'nodes'
  | 'pods'
  | 'namespaces'
  | 'nodeloadrules'
  | 'nodemetrics'
  | StorageResourceName
  | WorkloadResourceName;

/** What PodTopologySpread's default selector reads (their selectors only); watched with the storage kinds. */
export type WorkloadResourceName = 'services' | 'replicationcontrollers' | 'replicasets' | 'statefulsets';

/**
 * What the volume and preemption plugins (and the webhook's gate: DeviceClasses) read; watched when the
 * cache is asked for storage.
 */
export type StorageResourceName =
  | 'persistentvolumeclaims'
  | 'persistentvolumes'
  | 'storageclasses'
  | 'csinodes'
  | 'csidrivers'
  | 'csistoragecapacities'
  | 'volumeattachments'
  | 'deviceclasses'
  | 'poddisruptionbudgets';

/** Where a custom resource kind lives (its conversion is the caller's business). */
export interface CustomResourceLocation {
  group: string;
  version: string;
  plural: string;
}

const CORE_PATHS = {
  nodes: '/api/v1/nodes',
  pods: '/api/v1/pods',
  namespaces: '/api/v1/namespaces',
  persistentvolumeclaims: '/api/v1/persistentvolumeclaims',
  persistentvolumes: '/api/v1/persistentvolumes',
  storageclasses: '/apis/storage.k8s.io/v1/storageclasses',
  csinodes: '/apis/storage.k8s.io/v1/csinodes',
  csidrivers: '/apis/storage.k8s.io/v1/csidrivers',
  csistoragecapacities: '/apis/storage.k8s.io/v1/csistoragecapacities',
  volumeattachments: '/apis/storage.k8s.io/v1/volumeattachments',
  deviceclasses: '/apis/resource.k8s.io/v1/deviceclasses',
  poddisruptionbudgets: '/apis/policy/v1/poddisruptionbudgets',
  nodemetrics: '/apis/metrics.k8s.io/v1beta1/nodes',
  services: '/api/v1/services',
  replicationcontrollers: '/api/v1/replicationcontrollers',
  replicasets: '/apis/apps/v1/replicasets',
  statefulsets: '/apis/apps/v1/statefulsets',
} as const;

const METRICS_GROUP = 'metrics.k8s.io';
const METRICS_VERSION = 'v1beta1';
const PAGE_SIZE = 500;

interface Page {
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
  items?: unknown[];
}

/** Follows `continue` tokens; a token that expires mid-way fails the list and the informer retries it. */
export async function listAllPages(
  fetchPage: (cont: string | undefined) => Promise<Page>,
): Promise<ListResult> {
  const items: unknown[] = [];
  let cont: string | undefined;
  let resourceVersion: string | undefined;
  do {
    const page = await fetchPage(cont);
    for (const item of page.items ?? []) items.push(item);
    resourceVersion = page.metadata?.resourceVersion;
    // Typed lists carry `_continue` (client-node renames it), raw JSON lists `continue`.
    cont = page.metadata?._continue || page.metadata?.continue || undefined;
  } while (cont);
  return { metadata: { resourceVersion }, items };
}

/** A list of every page, each fetched with PAGE_SIZE and the previous page's `continue` token. */
function paged(fetchPage: (o: { limit: number; _continue: string | undefined }) => Promise<Page>): ListFn {
  return () => listAllPages((cont) => fetchPage({ limit: PAGE_SIZE, _continue: cont }));
}

/** A NodeMetrics sample changes when its time, window or usage does; it carries no resourceVersion. */
export function metricsVersion(obj: KubeObject): string {
  return JSON.stringify([obj.timestamp, obj.window, obj.usage]);
}

/**
 * API clients are made on first use: makeApiClient throws without a current cluster, and unit tests
 * (which replace the informers) have none.
 */
export class ApiListers {
  private core: CoreV1Api | undefined;
  private customClient: CustomObjectsApi | undefined;
  private storage: StorageV1Api | undefined;
  private policy: PolicyV1Api | undefined;
  private resource: ResourceV1Api | undefined;
  private apps: AppsV1Api | undefined;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly custom: CustomResourceLocation,
  ) {}

  path(name: ResourceName): string {
    if (name !== 'nodeloadrules') return CORE_PATHS[name];
    const { group, version, plural } = this.custom;
    return `/apis/${group}/${version}/${plural}`;
  }

  list(name: ResourceName): ListFn {
    switch (name) {
      case 'nodes':
        return paged((o) => this.coreApi().listNode(o));
      case 'pods':
        return paged((o) => this.coreApi().listPodForAllNamespaces(o));
      case 'namespaces':
        return paged((o) => this.coreApi().listNamespace(o));
      case 'persistentvolumeclaims':
        return paged((o) => this.coreApi().listPersistentVolumeClaimForAllNamespaces(o));
      case 'persistentvolumes':
        return paged((o) => this.coreApi().listPersistentVolume(o));
      case 'storageclasses':
        return paged((o) => this.storageApi().listStorageClass(o));
      case 'csinodes':
        return paged((o) => this.storageApi().listCSINode(o));
      case 'csidrivers':
        return paged((o) => this.storageApi().listCSIDriver(o));
      case 'csistoragecapacities':
        return paged((o) => this.storageApi().listCSIStorageCapacityForAllNamespaces(o));
      case 'deviceclasses':
        return paged((o) => this.resourceApi().listDeviceClass(o));
      case 'volumeattachments':
        return paged((o) => this.storageApi().listVolumeAttachment(o));
      case 'poddisruptionbudgets':
        return paged((o) => this.policyApi().listPodDisruptionBudgetForAllNamespaces(o));
      case 'services':
        return paged((o) => this.coreApi().listServiceForAllNamespaces(o));
      case 'replicationcontrollers':
        return paged((o) => this.coreApi().listReplicationControllerForAllNamespaces(o));
      case 'replicasets':
        return paged((o) => this.appsApi().listReplicaSetForAllNamespaces(o));
      case 'statefulsets':
        return paged((o) => this.appsApi().listStatefulSetForAllNamespaces(o));
      case 'nodeloadrules':
        return paged((o) => {
          const { group, version, plural } = this.custom;
          return this.customApi().listClusterCustomObject({ group, version, plural, ...o });
        });
      case 'nodemetrics':
        // metrics-server does not paginate.
        return async () => {
          const list = (await this.customApi().listClusterCustomObject({
            group: METRICS_GROUP,
            version: METRICS_VERSION,
            plural: 'nodes',
          })) as Page;
          return { metadata: { resourceVersion: list.metadata?.resourceVersion }, items: list.items ?? [] };
        };
    }
  }

  /**
   * Whether metrics.k8s.io/v1beta1 serves nodes. 404: nobody serves the group. 503: the APIService is
   * registered but its backend is down — that still counts as served, so samples go stale and the
   * stale-metrics policy decides (a metrics-server outage must not silently turn fail-closed into
   * requests-based scheduling). Other errors throw (the caller keeps its previous answer).
   */
  async metricsServed(): Promise<boolean> {
    try {
      const list = await this.customApi().getAPIResources({ group: METRICS_GROUP, version: METRICS_VERSION });
      return (list.resources ?? []).some((r) => r.name === 'nodes');
    } catch (err) {
      const status = httpStatusOf(err);
      if (status === 404) return false;
      if (status === 503) return true;
      throw err;
    }
  }

  private coreApi(): CoreV1Api {
    this.core ??= this.kubeConfig.makeApiClient(CoreV1Api);
    return this.core;
  }

  private storageApi(): StorageV1Api {
    this.storage ??= this.kubeConfig.makeApiClient(StorageV1Api);
    return this.storage;
  }

  private policyApi(): PolicyV1Api {
    this.policy ??= this.kubeConfig.makeApiClient(PolicyV1Api);
    return this.policy;
  }

  private resourceApi(): ResourceV1Api {
    this.resource ??= this.kubeConfig.makeApiClient(ResourceV1Api);
    return this.resource;
  }

  private appsApi(): AppsV1Api {
    this.apps ??= this.kubeConfig.makeApiClient(AppsV1Api);
    return this.apps;
  }

  private customApi(): CustomObjectsApi {
    this.customClient ??= this.kubeConfig.makeApiClient(CustomObjectsApi);
    return this.customClient;
  }
}

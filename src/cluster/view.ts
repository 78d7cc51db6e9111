/**
 * What a reader of the shared cluster cache sees: its change topics, and ClusterView, the one read-only
 * view of the cache. They live apart from the cache (cache.ts) so that the cache can declare that it
 * implements the view without an import cycle, and so that readers and their test fakes depend on this
 * contract only, not on the informers behind it.
 */
import type { Subscribable } from '../events/bus.js';
import type { ByNamespaceView } from './by-namespace.js';
import type { KubeObject } from './kube-object.js';
import type {
  ClaimInfo,
  CsiDriverInfo,
  CsiNodeInfo,
  CsiStorageCapacityInfo,
  DeviceClassInfo,
  DisruptionBudgetInfo,
  NamespaceInfo,
  NodeInfo,
  NodeMetricsInfo,
  PodInfo,
  StorageClassInfo,
  VolumeAttachmentInfo,
  VolumeInfo,
  WorkloadSelectorInfo,
} from './model.js';

export type ChangeType = 'add' | 'update' | 'delete';

/** `old` is absent on add, `new` on delete. */
export interface Change<T> {
  type: ChangeType;
  old?: T;
  new?: T;
}

/** What the cache needs of a namespaced custom object once converted: its identity and version. */
export interface NamespacedObject {
  namespace: string;
  name: string;
  resourceVersion: string;
}

export interface RuleEntry<R extends NamespacedObject = NamespacedObject> {
  rule: R;
  /** The object as the API server sent it (the operator reads and patches `.status`). */
  raw: KubeObject;
}

export type ClusterTopics<R extends NamespacedObject = NamespacedObject> = {
  node: Change<NodeInfo>;
  pod: Change<PodInfo>;
  namespace: Change<NamespaceInfo>;
  claim: Change<ClaimInfo>;
  volume: Change<VolumeInfo>;
  storageClass: Change<StorageClassInfo>;
  csiNode: Change<CsiNodeInfo>;
  csiDriver: Change<CsiDriverInfo>;
  csiStorageCapacity: Change<CsiStorageCapacityInfo>;
  volumeAttachment: Change<VolumeAttachmentInfo>;
  deviceClass: Change<DeviceClassInfo>;
  disruptionBudget: Change<DisruptionBudgetInfo>;
  service: Change<WorkloadSelectorInfo>;
  replicationController: Change<WorkloadSelectorInfo>;
  replicaSet: Change<WorkloadSelectorInfo>;
  statefulSet: Change<WorkloadSelectorInfo>;
  rule: Change<RuleEntry<R>>;
  metrics: Change<NodeMetricsInfo>;
  /** metrics.k8s.io became served or stopped being served (LoadOptions.metricsServed changes). */
  metricsServed: { served: boolean };
  /** Every initial sync is done (emitted once). */
  synced: undefined;
};

/**
 * The one read-only view of the shared cluster cache: what every reader is handed (the load tracker,
 * the scheduler, the operator, the webhook, the aggregated API, the GraphQL sources). ClusterCache
 * implements it; unit tests hand in test/kit/fake-cluster.ts's FakeCluster. Only the composition root
 * holds the ClusterCache itself, to start and stop it. `R` is the custom resource served as `rules`
 * (NodeLoadRule in the gateway); readers that ignore rules take the default.
 *
 * The maps are live and must not be mutated. The bus can only be subscribed to: the cache alone emits.
 */
export interface ClusterView<R extends NamespacedObject = NamespacedObject> {
  readonly bus: Subscribable<ClusterTopics<R>>;
  /** The cache's clock (readers computing ages from its data use the same one). */
  readonly now: () => number;
  readonly nodes: ReadonlyMap<string, NodeInfo>;
  /** By namespace/name. */
  readonly pods: ReadonlyMap<string, PodInfo>;
  /** By namespace/name. */
  readonly rules: ReadonlyMap<string, RuleEntry<R>>;
  /** Namespace labels, for namespaceSelectors. */
  readonly namespaces: ReadonlyMap<string, NamespaceInfo>;
  // The storage kinds and PodDisruptionBudgets (the scheduler's volume and preemption plugins read
  // them): empty unless the cache was built with `storage: true`.
  /** PVCs by namespace/name. */
  readonly claims: ReadonlyMap<string, ClaimInfo>;
  /** PVs by name. */
  readonly volumes: ReadonlyMap<string, VolumeInfo>;
  readonly storageClasses: ReadonlyMap<string, StorageClassInfo>;
  readonly csiNodes: ReadonlyMap<string, CsiNodeInfo>;
  /** CSIDrivers by name. */
  readonly csiDrivers: ReadonlyMap<string, CsiDriverInfo>;
  /** CSIStorageCapacities by namespace/name. */
  readonly csiStorageCapacities: ReadonlyMap<string, CsiStorageCapacityInfo>;
  /** VolumeAttachments by name. */
  readonly volumeAttachments: ReadonlyMap<string, VolumeAttachmentInfo>;
  /** DeviceClasses by name (the webhook's gate: extended resources served by DRA). */
  readonly deviceClasses: ReadonlyMap<string, DeviceClassInfo>;
  /** By namespace/name. */
  readonly disruptionBudgets: ReadonlyMap<string, DisruptionBudgetInfo>;
  // What PodTopologySpread's default selector reads (also with `storage: true`), by namespace/name.
  readonly services: ByNamespaceView<WorkloadSelectorInfo>;
  readonly replicationControllers: ReadonlyMap<string, WorkloadSelectorInfo>;
  readonly replicaSets: ReadonlyMap<string, WorkloadSelectorInfo>;
  readonly statefulSets: ReadonlyMap<string, WorkloadSelectorInfo>;
  /** Node metrics by node name (metrics.k8s.io, polled). */
  readonly metrics: ReadonlyMap<string, NodeMetricsInfo>;
  /** Whether metrics.k8s.io serves node metrics (the `metricsServed` topic says when it changes). */
  readonly metricsServed: boolean;
  /** Every pod bound to the node, terminal and deleting ones included (the load model filters). */
  podsOnNode(node: string): ReadonlyMap<string, PodInfo>;
  /** Pods not bound to a node that still want one (not terminal, not being deleted). */
  unscheduledPods(): Iterable<PodInfo>;
  /** Resolves once the cache has synced (ClusterCache.ready says what that takes). */
  ready(): Promise<void>;
  /** Whether ready() has resolved. */
  isReady(): boolean;
}

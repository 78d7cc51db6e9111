/**
 * The kinds the shared cache watches only when built with `storage: true` — what the scheduler's volume,
 * preemption and spreading plugins and the webhook's gate read — as one table: for each, the map its plain
 * data lives in, how an API object converts, how it is keyed and which topic announces its changes. The
 * cache (cache.ts) turns each row into an informer and a store; readers see the maps through ClusterView.
 */
import { ByNamespace } from './by-namespace.js';
import {
  toClaimInfo,
  toCsiDriverInfo,
  toCsiNodeInfo,
  toCsiStorageCapacityInfo,
  toDeviceClassInfo,
  toDisruptionBudgetInfo,
  toStorageClassInfo,
  toVolumeAttachmentInfo,
  toVolumeInfo,
} from './convert-storage.js';
import { toLabelSelectorInfo, toMapSelectorInfo } from './convert-workloads.js';
import type { KubeObject } from './kube-object.js';
import type { StorageResourceName, WorkloadResourceName } from './listers.js';
import type {
  ClaimInfo,
  CsiDriverInfo,
  CsiNodeInfo,
  CsiStorageCapacityInfo,
  DeviceClassInfo,
  DisruptionBudgetInfo,
  StorageClassInfo,
  VolumeAttachmentInfo,
  VolumeInfo,
  WorkloadSelectorInfo,
} from './model.js';
import type { ClusterTopics } from './view.js';

/** The topics of the table's kinds. */
export type StoreTopic =
  | 'claim'
  | 'volume'
  | 'storageClass'
  | 'csiNode'
  | 'csiDriver'
  | 'csiStorageCapacity'
  | 'volumeAttachment'
  | 'deviceClass'
  | 'disruptionBudget'
  | 'service'
  | 'replicationController'
  | 'replicaSet'
  | 'statefulSet';

type ValueOf<K extends StoreTopic> = NonNullable<ClusterTopics[K]['new']>;

/** What every kept object has: the store keys it and skips an event that changes nothing. */
interface Kept {
  name: string;
  namespace?: string;
  resourceVersion: string;
}

/** One row: a kind, where it is kept, and how. */
export interface StoreKind<T extends Kept = Kept> {
  resource: StorageResourceName | WorkloadResourceName;
  topic: StoreTopic;
  map: Map<string, T>;
  convert(raw: KubeObject): T;
  key(o: T): string;
  /** Readiness does not wait for its first list (a kind the oldest supported API servers do not serve). */
  syncOptional?: true;
}

/** A row, type-checked here (topic, map and converter agree); the table then holds rows of any kind. */
function row<K extends StoreTopic>(
  resource: StoreKind['resource'],
  topic: K,
  map: Map<string, ValueOf<K>>,
  convert: (raw: KubeObject) => ValueOf<K>,
  key: (o: ValueOf<K>) => string,
  syncOptional = false,
): StoreKind {
  return {
    resource,
    topic,
    map,
    convert,
    key,
    ...(syncOptional ? { syncOptional: true } : {}),
  } as unknown as StoreKind;
}

function nsKey(o: { namespace?: string; name: string }): string {
  return `${o.namespace ?? ''}/${o.name}`;
}

function nameKey(o: { name: string }): string {
  return o.name;
}

export class StorageStores {
  /** PVCs by namespace/name. */
  readonly claims = new Map<string, ClaimInfo>();
  /** PVs by name. */
  readonly volumes = new Map<string, VolumeInfo>();
  readonly storageClasses = new Map<string, StorageClassInfo>();
  readonly csiNodes = new Map<string, CsiNodeInfo>();
  readonly csiDrivers = new Map<string, CsiDriverInfo>();
  /** By namespace/name. */
  readonly csiStorageCapacities = new Map<string, CsiStorageCapacityInfo>();
  readonly volumeAttachments = new Map<string, VolumeAttachmentInfo>();
  readonly deviceClasses = new Map<string, DeviceClassInfo>();
  /** By namespace/name. */
  readonly disruptionBudgets = new Map<string, DisruptionBudgetInfo>();
  /** Services' selectors by namespace/name, listed per namespace too. */
  readonly services = new ByNamespace<WorkloadSelectorInfo>();
  readonly replicationControllers = new Map<string, WorkloadSelectorInfo>();
  readonly replicaSets = new Map<string, WorkloadSelectorInfo>();
  readonly statefulSets = new Map<string, WorkloadSelectorInfo>();

  /** Every row, in the order the informers start. */
  readonly kinds: readonly StoreKind[] = [
    row('persistentvolumeclaims', 'claim', this.claims, toClaimInfo, nsKey),
    row('persistentvolumes', 'volume', this.volumes, toVolumeInfo, nameKey),
    row('storageclasses', 'storageClass', this.storageClasses, toStorageClassInfo, nameKey),
    row('csinodes', 'csiNode', this.csiNodes, toCsiNodeInfo, nameKey),
    row('csidrivers', 'csiDriver', this.csiDrivers, toCsiDriverInfo, nameKey),
    row(
      'csistoragecapacities',
      'csiStorageCapacity',
      this.csiStorageCapacities,
      toCsiStorageCapacityInfo,
      nsKey,
    ),
    row('volumeattachments', 'volumeAttachment', this.volumeAttachments, toVolumeAttachmentInfo, nameKey),
    // resource.k8s.io/v1 is served from Kubernetes 1.34 and the gateway supports 1.30: until
    // DeviceClasses list, the webhook's gate sees none and steers as before.
    row('deviceclasses', 'deviceClass', this.deviceClasses, toDeviceClassInfo, nameKey, true),
    row('poddisruptionbudgets', 'disruptionBudget', this.disruptionBudgets, toDisruptionBudgetInfo, nsKey),
    row('services', 'service', this.services, toMapSelectorInfo, nsKey),
    row(
      'replicationcontrollers',
      'replicationController',
      this.replicationControllers,
      toMapSelectorInfo,
      nsKey,
    ),
    row('replicasets', 'replicaSet', this.replicaSets, toLabelSelectorInfo, nsKey),
    row('statefulsets', 'statefulSet', this.statefulSets, toLabelSelectorInfo, nsKey),
  ];
}

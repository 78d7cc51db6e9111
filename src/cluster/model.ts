/**
 * The plain data the pure core works on. Informers and the webhook convert API objects into these
 * at the boundary (see convert.ts), so the core never sees client-node classes, Dates-vs-strings,
 * or quantities as strings.
 */

import type { MigratedVolume } from './csi-migration.js';

/** CPU in millicores, memory in bytes. */
export interface CpuMem {
  cpuMilli: number;
  memoryBytes: number;
}

export interface NodeResources extends CpuMem {
  pods: number;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal' | string;
  value?: string;
  effect?: string;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | string;
  values?: string[];
}

/** One term of requiredDuringSchedulingIgnoredDuringExecution; terms are ORed, requirements ANDed. */
export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/**
 * Every resource by name, in canonical units: cpu in millicores, memory / ephemeral-storage /
 * hugepages-* in bytes, pods and extended resources (nvidia.com/gpu, …) as counts.
 */
export type ResourceList = Record<string, number>;

/** A container image present on a node (status.images), for ImageLocality. */
export interface NodeImage {
  names: string[];
  sizeBytes: number;
}

export interface NodeInfo {
  name: string;
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  taints: Taint[];
  unschedulable: boolean;
  ready: boolean;
  capacity: NodeResources;
  allocatable: NodeResources;
  /** Every allocatable resource (cpu, memory, pods, ephemeral-storage, hugepages-*, extended ones). */
  allocatableResources: ResourceList;
  images: NodeImage[];
  /** status.declaredFeatures: the features the node's kubelet declares (NodeDeclaredFeatures). */
  declaredFeatures: string[];
  creationTimestamp: string;
}

/** A host port a container asks for (hostNetwork pods: every containerPort, defaulted by the API). */
export interface HostPort {
  /** '' and '0.0.0.0' both mean every address. */
  hostIP: string;
  protocol: string;
  port: number;
}

/** One PodAffinityTerm as the API carries it (matchLabelKeys already merged by the API server). */
export interface PodAffinityTerm {
  /** Absent selects no pod (an empty selector selects every pod). */
  labelSelector?: LabelSelector;
  namespaces: string[];
  /** Absent: only `namespaces` (or the pod's own namespace when both are empty); {} = every namespace. */
  namespaceSelector?: LabelSelector;
  topologyKey: string;
  matchLabelKeys: string[];
  mismatchLabelKeys: string[];
}

export interface WeightedPodAffinityTerm {
  weight: number;
  term: PodAffinityTerm;
}

/** spec.affinity.podAffinity / podAntiAffinity. */
export interface PodAffinityRules {
  required: PodAffinityTerm[];
  preferred: WeightedPodAffinityTerm[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway' | string;
  labelSelector?: LabelSelector;
  minDomains?: number;
  /** Default Honor. */
  nodeAffinityPolicy: 'Honor' | 'Ignore' | string;
  /** Default Ignore. */
  nodeTaintsPolicy: 'Honor' | 'Ignore' | string;
  matchLabelKeys: string[];
}

/** What the scheduler's volume plugins need of a pod volume. */
export interface PodVolume {
  name: string;
  /** persistentVolumeClaim.claimName, or `<pod>-<volume>` for a generic ephemeral volume. */
  claimName?: string;
  ephemeral?: boolean;
  readOnly?: boolean;
  /** In-tree disks VolumeRestrictions compares directly (e.g. "gce-pd:my-disk", "aws-ebs:vol-1"). */
  disk?: string;
  /** An inline in-tree volume's CSI driver and volumeHandle (NodeVolumeLimits counts it there). */
  migrated?: MigratedVolume;
}

export interface PodInfo {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Empty string while unbound. */
  nodeName: string;
  schedulerName: string;
  phase: string;
  priority: number;
  /** Sum of container requests (max'ed with init containers, plus overhead), as kube-scheduler counts them. */
  requests: CpuMem;
  limits: CpuMem;
  /** True when the pod declares no CPU and no memory request at all. */
  noRequests: boolean;
  ownerKind: string;
  ownerName: string;
  /**
   * The pod's controller (the ownerReference with `controller: true`, exact apiVersion) when it is one of
   * the kinds whose selector kube-scheduler's default spreading reads (helper.DefaultSelector); its name
   * is `ownerName`.
   */
  selectorController?: SelectorControllerKind;
  isDaemonSetPod: boolean;
  /** spec.schedulingGates is not empty: no scheduler may place the pod yet. */
  schedulingGated: boolean;
  /** Succeeded/Failed pods no longer count against a node. */
  terminal: boolean;
  deleting: boolean;
  /**
   * Being deleted by a scheduler's preemption (its DisruptionTarget condition is True with reason
   * PreemptionByScheduler): a preemptor nominated to its node waits for it rather than preempting again.
   */
  terminatingByPreemption?: true;
  nodeSelector: Record<string, string>;
  requiredNodeAffinity: NodeSelectorTerm[];
  preferredNodeAffinity: PreferredSchedulingTerm[];
  tolerations: Toleration[];
  /**
   * Every resource the pod requests, as kube-scheduler counts them: app containers plus restartable
   * init containers (sidecars), max'ed with each regular init container running beside the sidecars
   * declared before it; pod-level spec.resources replaces cpu/memory/hugepages; overhead is added.
   */
  resourceRequests: ResourceList;
  hostPorts: HostPort[];
  podAffinity?: PodAffinityRules;
  podAntiAffinity?: PodAffinityRules;
  topologySpreadConstraints: TopologySpreadConstraint[];
  volumes: PodVolume[];
  /** spec.resourceClaims is not empty (Dynamic Resource Allocation). */
  hasResourceClaims: boolean;
  /** Container images (init containers included), for ImageLocality. */
  images: string[];
  /**
   * Node features the pod needs (NodeDeclaredFeatures' inference for scheduling): a container restart rule
   * that restarts all containers, host network in a user namespace. Absent: none.
   */
  requiredFeatures?: string[];
  /** Image volumes' references (spec.volumes[].image.reference), which ImageLocality counts too; absent: none. */
  volumeImages?: string[];
  /** status.nominatedNodeName: where preemption made room for this pod. */
  nominatedNodeName: string;
  /** spec.preemptionPolicy (default PreemptLowerPriority). */
  preemptionPolicy: string;
  creationTimestamp: string;
  /** When the pod was bound (PodScheduled=True transition), if known. */
  scheduledAt?: string;
  /** PodScheduled condition as last written (reason/message), for pending pods. */
  scheduledCondition?: { status: string; reason?: string; message?: string; observedGeneration?: number };
  /** metadata.generation (the API server counts spec changes); kube-scheduler writes it in its conditions. */
  generation?: number;
}

/** A namespace's labels, for namespaceSelector in pod affinity terms. */
export interface NamespaceInfo {
  name: string;
  resourceVersion: string;
  labels: Record<string, string>;
}

export interface NodeMetricsInfo {
  name: string;
  /** ISO time of the sample. */
  timestamp: string;
  /** Window in seconds the sample was averaged over. */
  windowSeconds: number;
  usage: CpuMem;
}

export function podKey(p: { namespace: string; name: string }): string {
  return `${p.namespace}/${p.name}`;
}

/** A PersistentVolumeClaim as the volume plugins need it. */
export interface ClaimInfo {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** Pending / Bound / Lost. */
  phase: string;
  /** spec.volumeName: the PV it is bound (or being bound) to; '' while unbound. */
  volumeName: string;
  /** spec.storageClassName; undefined = the default class applies, '' = no class. */
  storageClassName?: string;
  accessModes: string[];
  /** spec.resources.requests.storage, in bytes. */
  requestBytes: number;
  selector?: LabelSelector;
  volumeMode: string;
  /** spec.volumeAttributesClassName ('' = none): a PV must name the same class to bind it. */
  volumeAttributesClassName: string;
  annotations: Record<string, string>;
  deleting: boolean;
}

/** A PersistentVolume as the volume plugins need it. */
export interface VolumeInfo {
  name: string;
  uid: string;
  resourceVersion: string;
  /** Available / Bound / Released / Failed / Pending. */
  phase: string;
  claimRef?: { namespace: string; name: string; uid: string };
  /** The beta annotation volume.beta.kubernetes.io/storage-class if set, else spec.storageClassName. */
  storageClassName: string;
  capacityBytes: number;
  accessModes: string[];
  volumeMode: string;
  /** spec.volumeAttributesClassName ('' = none). */
  volumeAttributesClassName: string;
  labels: Record<string, string>;
  /** spec.nodeAffinity.required.nodeSelectorTerms (empty: any node). */
  nodeAffinity: NodeSelectorTerm[];
  /** spec.csi.driver, when a CSI volume. */
  csiDriver?: string;
  /** A stable identity of the backing disk (CSI volumeHandle, in-tree disk name). */
  handle?: string;
  /** An in-tree source's CSI driver and volumeHandle (csi-migration.ts): NodeVolumeLimits counts it there. */
  migrated?: MigratedVolume;
  deleting: boolean;
}

export interface StorageClassInfo {
  name: string;
  resourceVersion: string;
  provisioner: string;
  /** Immediate (default) or WaitForFirstConsumer. */
  volumeBindingMode: string;
  isDefault: boolean;
  /** allowedTopologies as node selector terms (empty: anywhere). */
  allowedTopologies: NodeSelectorTerm[];
}

/** CSINode: per driver, how many volumes the node can attach (undefined = no limit). */
export interface CsiNodeInfo {
  name: string;
  resourceVersion: string;
  drivers: { name: string; allocatableCount?: number }[];
}

/** CSIDriver: whether the driver opts into storage capacity tracking (spec.storageCapacity). */
export interface CsiDriverInfo {
  name: string;
  resourceVersion: string;
  storageCapacity: boolean;
}

/**
 * CSIStorageCapacity: how large a volume of one StorageClass the driver can still provision for the nodes
 * its topology selects (VolumeBinding's capacity check).
 */
export interface CsiStorageCapacityInfo {
  namespace: string;
  name: string;
  resourceVersion: string;
  storageClassName: string;
  /** Undefined: no node has access (upstream treats a nil nodeTopology as unavailable). */
  nodeTopology?: LabelSelector;
  /** maximumVolumeSize when set (more precise), else capacity; undefined: neither, so nothing fits. */
  limitBytes?: number;
}

/**
 * VolumeAttachment: a volume attached (or being attached) to a node by a CSI driver. NodeVolumeLimits
 * counts it against the node's limit even when no pod there uses the volume any more (a detach pending).
 */
export interface VolumeAttachmentInfo {
  name: string;
  resourceVersion: string;
  nodeName: string;
  /** spec.attacher: the CSI driver. */
  attacher: string;
  /** spec.source.persistentVolumeName; absent for an inline (migrated) volume, which is not counted. */
  persistentVolumeName?: string;
}

/**
 * DeviceClass (resource.k8s.io): what the webhook's gate reads to tell which extended resources Dynamic
 * Resource Allocation serves (upstream's ExtendedResourceCache).
 */
export interface DeviceClassInfo {
  name: string;
  resourceVersion: string;
  /** metadata.creationTimestamp in ms (0 when absent): of two classes naming one resource, the newer wins. */
  createdAt: number;
  /** spec.extendedResourceName. */
  extendedResourceName?: string;
}

export interface DisruptionBudgetInfo {
  namespace: string;
  name: string;
  resourceVersion: string;
  selector?: LabelSelector;
  /** status.disruptionsAllowed. */
  disruptionsAllowed: number;
  /**
   * The names in status.disruptedPods (absent when none): pods whose eviction the API server admitted
   * and which are not deleted yet. Preemption does not take the budget again for them.
   */
  disruptedPods?: readonly string[];
}

/** Controllers whose selector PodTopologySpread's default constraints use (v1 RC, apps/v1 RS and StatefulSet). */
export type SelectorControllerKind = 'ReplicationController' | 'ReplicaSet' | 'StatefulSet';

/**
 * A Service, ReplicationController, ReplicaSet or StatefulSet as PodTopologySpread's default selector
 * reads it: only its selector.
 */
export interface WorkloadSelectorInfo {
  namespace: string;
  name: string;
  resourceVersion: string;
  /**
   * Undefined selects nothing (a Service without one, a nil LabelSelector); a Service's or an RC's map
   * is its `matchLabels`.
   */
  selector?: LabelSelector;
}

// The differential harness's scenario format: plain data, one file per plugin area under scenarios/.
// A scenario is run twice in one private control plane — once by the stock kube-scheduler (the oracle)
// and once by nodeload — each time on fresh KWOK nodes in fresh namespaces (see isolate.ts), and the
// final cluster state of every run is judged by checker.ts.
import type { V1PodSpec, V1Taint } from '@kubernetes/client-node';

/** Every object of a run carries this label with the run id (nodes, namespaces, cluster-scoped kinds). */
export const RUN_LABEL = 'nodeload.test/run';

export type Engine = 'kube-scheduler' | 'nodeload';
export const ENGINES: readonly Engine[] = ['kube-scheduler', 'nodeload'];

/** The schedulerName each engine serves. */
export const SCHEDULER_NAMES: Record<Engine, string> = {
  'kube-scheduler': 'default-scheduler',
  nodeload: 'nodeload-scheduler',
};

export interface NodeDef {
  /** Logical name; the run's node is `<runId>-<name>` (kubernetes.io/hostname follows). */
  name: string;
  labels?: Record<string, string>;
  taints?: V1Taint[];
  /**
   * Allocatable (= capacity) per resource name: cpu, memory, pods, ephemeral-storage, hugepages-2Mi,
   * example.com/gpu... Defaults: cpu 4, memory 8Gi, pods 110, ephemeral-storage 100Gi.
   */
  allocatable?: Record<string, string>;
  /** spec.unschedulable (cordoned). */
  unschedulable?: boolean;
  /** status.declaredFeatures (NodeDeclaredFeatures): what the node's kubelet says it supports. */
  declaredFeatures?: string[];
  /** status.images (ImageLocality): the images the node's kubelet reports it holds. */
  images?: NodeImageDef[];
}

export interface NodeImageDef {
  names: string[];
  sizeBytes: number;
}

export interface NamespaceDef {
  /** Logical name; the run's namespace is `<runId>-<name>`. */
  name: string;
  labels?: Record<string, string>;
}

export interface PodDef {
  /** Pod name (unique within the scenario). */
  name: string;
  /** Logical namespace (default `main`). */
  namespace?: string;
  labels?: Record<string, string>;
  /**
   * A full pod spec written with logical names: node names (nodeName, matchFields metadata.name,
   * kubernetes.io/hostname values), logical namespaces in affinity terms. schedulerName is set per engine.
   */
  spec: V1PodSpec;
}

/** An existing pod: created already bound (spec.nodeName = its logical node), never scheduled. */
export interface ExistingPodDef extends PodDef {
  node: string;
  /**
   * metadata.finalizers: a pod preempted with one stays terminating (KWOK's delete waits for it), so its
   * preemptor stays nominated while it holds the node. Removed at tear-down.
   */
  finalizers?: string[];
}

/** A NodeLoadRule (example.com/v1), created in the nodeload run only. allowedNodes are logical names. */
export interface RuleDef {
  name: string;
  namespace?: string;
  spec: {
    maxCPU?: number;
    maxMemory?: number;
    allowedNodes?: string[];
    podSelector?: { matchLabels?: Record<string, string> };
    nodeSelector?: { matchLabels?: Record<string, string> };
    burst?: { maxPlacements: number; windowSeconds: number };
  };
}

/**
 * A StorageClass (cluster-scoped, named `<runId>-<name>`). `provisioner`: 'none' (static PVs only:
 * kubernetes.io/no-provisioner, the default), 'dynamic' (the run's test provisioner creates a PV on the
 * node the scheduler selects, as a CSI external-provisioner would), or a CSI driver name taken as is.
 */
export interface StorageClassDef {
  name: string;
  provisioner?: 'none' | 'dynamic' | string;
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
  /** allowedTopologies as label → values (one term), values of zone/region/hostname mapped per run. */
  allowedTopologies?: Record<string, string[]>;
}

/** A PersistentVolume (cluster-scoped, named `<runId>-<name>`). */
export interface VolumeDef {
  name: string;
  /** Logical StorageClass name ('' or absent: none). */
  storageClass?: string;
  /** Default 5Gi. */
  capacity?: string;
  /** Default ReadWriteOnce. */
  accessModes?: string[];
  /** Required node affinity: the logical node(s) it is reachable from (a local PV). */
  nodes?: string[];
  /** Required node affinity on topology.kubernetes.io/zone. */
  zones?: string[];
  /** Labels (zone/region values mapped per run): what VolumeZone reads. */
  labels?: Record<string, string>;
  /** A CSI volume of this driver (else a hostPath volume). */
  csiDriver?: string;
  /** An in-tree AWS EBS volume (awsElasticBlockStore), which kube-scheduler counts as ebs.csi.aws.com. */
  inTreeEbs?: boolean;
  /** Pre-bound to this claim of the `main` namespace (or `namespace/name`). */
  claim?: string;
}

/** A PersistentVolumeClaim (namespaced; `main` unless `namespace`). */
export interface ClaimDef {
  name: string;
  namespace?: string;
  /** Logical StorageClass name; '' for none. */
  storageClass?: string;
  /** Default 1Gi. */
  size?: string;
  accessModes?: string[];
  /** Pre-bound to this logical PV: setUp waits for the claim to be Bound before any pod is created. */
  volume?: string;
}

/** A PriorityClass (cluster-scoped, named `<runId>-<name>`); pods name it in spec.priorityClassName. */
export interface PriorityClassDef {
  name: string;
  value: number;
  preemptionPolicy?: 'PreemptLowerPriority' | 'Never';
}

/** A PodDisruptionBudget; setUp waits for the disruption controller to have computed its status. */
export interface DisruptionBudgetDef {
  name: string;
  namespace?: string;
  matchLabels: Record<string, string>;
  minAvailable?: number;
  maxUnavailable?: number;
  /**
   * Existing pods whose eviction the API server has admitted but which are not deleted yet
   * (status.disruptedPods): written once the disruption controller has counted every pod healthy; it
   * keeps them off the healthy count for two minutes (DeletionTimeout).
   */
  disruptedPods?: string[];
}

/** A CSINode for a logical node: attachable volumes per driver (NodeVolumeLimits). */
export interface CsiNodeDef {
  node: string;
  drivers: Record<string, number>;
}

/**
 * A VolumeAttachment of a logical PV (a CSI one) to a logical node, as an attach/detach controller leaves
 * it; no pod need use the volume (NodeVolumeLimits counts it all the same).
 */
export interface VolumeAttachmentDef {
  node: string;
  volume: string;
  /** Default: the PV's CSI driver. */
  attacher?: string;
}

/**
 * A Service (headless: the selector is all that matters): PodTopologySpread's default constraints
 * spread the pods it selects.
 */
export interface ServiceDef {
  name: string;
  namespace?: string;
  selector: Record<string, string>;
}

/** A CSIDriver: 'dynamic' is the run's test provisioner (what its 'dynamic' StorageClasses name). */
export interface CsiDriverDef {
  name: 'dynamic' | string;
  storageCapacity: boolean;
}

/** A CSIStorageCapacity (namespace `main`): room for volumes of a class on the logical nodes named. */
export interface StorageCapacityDef {
  name: string;
  storageClass: string;
  nodes: string[];
  capacity: string;
  maximumVolumeSize?: string;
}

/** Storage and priority objects of a scenario, created before the existing pods. */
export interface ScenarioObjects {
  csiDrivers?: CsiDriverDef[];
  storageCapacities?: StorageCapacityDef[];
  services?: ServiceDef[];
  storageClasses?: StorageClassDef[];
  persistentVolumes?: VolumeDef[];
  persistentVolumeClaims?: ClaimDef[];
  priorityClasses?: PriorityClassDef[];
  podDisruptionBudgets?: DisruptionBudgetDef[];
  csiNodes?: CsiNodeDef[];
  volumeAttachments?: VolumeAttachmentDef[];
}

/** What one engine must produce. Pod names as in the scenario; node names logical. */
export interface Expectation {
  /** Exactly these pods end Unschedulable (every other incoming pod bound). */
  unschedulable?: string[];
  /** Pod → the logical nodes it may be bound to. */
  placements?: Record<string, string[]>;
  /** How many incoming pods end bound. */
  boundCount?: number;
  /** Exactly these existing pods end preempted (deleted); absent: not checked. */
  victims?: string[];
}

export interface Scenario {
  /** Unique, used as the `it` name. */
  name: string;
  /** Plugin area, e.g. 'NodeResourcesFit'. */
  area: string;
  /** What is being exercised and why the outcome is what it is (kube-scheduler's facts). */
  description: string;
  /**
   * true: the outcome does not depend on the order pods are scheduled in, so all incoming pods are created
   * at once and the Unschedulable set must equal kube-scheduler's exactly. false: pods are created one by
   * one, each waited for (bound or Unschedulable) before the next; sets are compared only with `compare`.
   */
  orderIndependent: boolean;
  /**
   * How the engines' outcomes are compared. Default: 'unschedulable-set' when orderIndependent, else
   * 'unschedulable-count'. 'none' for scenarios whose outcome depends on scores (only hard constraints
   * are then checked).
   */
  compare?: 'unschedulable-set' | 'unschedulable-count' | 'none';
  /**
   * A pod both engines leave Unschedulable must carry the same PodScheduled message, word for word — the
   * filter reasons and the PostFilter sentences a user reads in `kubectl describe` — but for what other
   * runs' nodes put in it (counts, and the reasons those nodes give: compare.ts messageShape). false: not
   * compared (none needs it today; scenarios with expectDifference compare nothing).
   */
  sameMessages?: boolean;
  nodes: NodeDef[];
  /** Extra namespaces (the `main` one always exists). */
  namespaces?: NamespaceDef[];
  existingPods?: ExistingPodDef[];
  /** Incoming pods, in creation order. */
  pods: PodDef[];
  rules?: RuleDef[];
  /** RuntimeClasses (cluster-scoped, named `<runId>-<name>`): the way a pod gets spec.overhead. */
  runtimeClasses?: Array<{ name: string; overhead: Record<string, string> }>;
  objects?: ScenarioObjects;
  /**
   * Node label values of these keys are prefixed with the run id so domains never overlap across runs
   * (default: topology.kubernetes.io/zone and topology.kubernetes.io/region).
   */
  prefixValuesOf?: string[];
  /**
   * Label keys replaced by a run-unique key everywhere (nodes and pods): for PodTopologySpread with
   * nodeAffinityPolicy: Ignore, which counts domains on every node in the cluster having the key.
   */
  privateKeys?: string[];
  /**
   * A pod nominated by preemption (status.nominatedNodeName) whose PodScheduled is False counts as decided:
   * for scenarios whose victims are held by finalizers, so that their preemptors stay nominated.
   */
  nominationDecides?: boolean;
  /** The outcome both engines must produce (checked against kube-scheduler too: validates the scenario). */
  expect?: Expectation;
  /** A load-aware scenario where nodeload must differ from kube-scheduler, in a documented way. */
  expectDifference?: {
    why: string;
    /** nodeload's expected outcome; replaces the comparison with kube-scheduler's. */
    nodeload: Expectation;
  };
}

/** The placement of one incoming pod after a run. */
export interface PodOutcome {
  pod: string;
  /** Logical node name, when bound. */
  node?: string;
  /** PodScheduled=False reason/message, when not bound. */
  unschedulable?: { reason: string; message: string };
  /** status.nominatedNodeName (logical), when set and not bound. */
  nominated?: string;
}

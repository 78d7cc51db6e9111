/**
 * The plain data the pure core works on. Informers and the webhook convert API objects into these
 * at the boundary (see convert.ts), so the core never sees client-node classes, Dates-vs-strings,
 * or quantities as strings.
 */

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
  creationTimestamp: string;
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
  isDaemonSetPod: boolean;
  /** spec.schedulingGates is not empty: no scheduler may place the pod yet. */
  schedulingGated: boolean;
  /** Succeeded/Failed pods no longer count against a node. */
  terminal: boolean;
  deleting: boolean;
  nodeSelector: Record<string, string>;
  requiredNodeAffinity: NodeSelectorTerm[];
  tolerations: Toleration[];
  creationTimestamp: string;
  /** When the pod was bound (PodScheduled=True transition), if known. */
  scheduledAt?: string;
  /** PodScheduled condition as last written (reason/message), for pending pods. */
  scheduledCondition?: { status: string; reason?: string; message?: string };
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

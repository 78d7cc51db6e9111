/**
 * API objects → the core's plain data. Objects arrive in two shapes (client-node deserialises list
 * results into classes with Date fields; watch events and AdmissionReviews are raw JSON), so every
 * accessor here tolerates both.
 */
import type {
  CpuMem,
  LabelSelector,
  NodeInfo,
  NodeMetricsInfo,
  NodeResources,
  NodeSelectorTerm,
  PodInfo,
  Taint,
  Toleration,
} from './model.js';
import { bytes, cpuMilli, parseQuantity } from './quantity.js';

// biome-ignore lint/suspicious/noExplicitAny: API objects are untyped JSON at this boundary.
type Json = any;

export function isoTime(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'string') return v;
  return '';
}

function strMap(v: unknown): Record<string, string> {
  return v && typeof v === 'object' ? { ...(v as Record<string, string>) } : {};
}

function resources(list: Json): NodeResources {
  return { cpuMilli: cpuMilli(list?.cpu), memoryBytes: bytes(list?.memory), pods: bytes(list?.pods) };
}

export function toNodeInfo(node: Json): NodeInfo {
  const conditions: Json[] = node?.status?.conditions ?? [];
  const ready = conditions.some((c) => c?.type === 'Ready' && c?.status === 'True');
  return {
    name: node?.metadata?.name ?? '',
    uid: node?.metadata?.uid ?? '',
    resourceVersion: node?.metadata?.resourceVersion ?? '',
    labels: strMap(node?.metadata?.labels),
    taints: ((node?.spec?.taints ?? []) as Json[]).map(
      (t): Taint => ({ key: String(t?.key ?? ''), value: t?.value, effect: String(t?.effect ?? '') }),
    ),
    unschedulable: node?.spec?.unschedulable === true,
    ready,
    capacity: resources(node?.status?.capacity),
    allocatable: resources(node?.status?.allocatable ?? node?.status?.capacity),
    creationTimestamp: isoTime(node?.metadata?.creationTimestamp),
  };
}

function containerSum(containers: Json[] | undefined, field: 'requests' | 'limits'): CpuMem {
  const sum = { cpuMilli: 0, memoryBytes: 0 };
  for (const c of containers ?? []) {
    sum.cpuMilli += cpuMilli(c?.resources?.[field]?.cpu);
    sum.memoryBytes += bytes(c?.resources?.[field]?.memory);
  }
  return sum;
}

/**
 * Effective pod resources as kube-scheduler computes them: max(sum of app containers, each init
 * container) plus pod overhead. Restartable (sidecar) init containers are counted with the app
 * containers for simplicity.
 */
function podResources(spec: Json, field: 'requests' | 'limits'): CpuMem {
  const apps = containerSum(spec?.containers, field);
  const sidecars = containerSum(
    ((spec?.initContainers ?? []) as Json[]).filter((c) => c?.restartPolicy === 'Always'),
    field,
  );
  const total = {
    cpuMilli: apps.cpuMilli + sidecars.cpuMilli,
    memoryBytes: apps.memoryBytes + sidecars.memoryBytes,
  };
  for (const c of (spec?.initContainers ?? []) as Json[]) {
    if (c?.restartPolicy === 'Always') continue;
    total.cpuMilli = Math.max(total.cpuMilli, cpuMilli(c?.resources?.[field]?.cpu));
    total.memoryBytes = Math.max(total.memoryBytes, bytes(c?.resources?.[field]?.memory));
  }
  if (field === 'requests' && spec?.overhead) {
    total.cpuMilli += cpuMilli(spec.overhead.cpu);
    total.memoryBytes += bytes(spec.overhead.memory);
  }
  return total;
}

export function toPodInfo(pod: Json): PodInfo {
  const spec = pod?.spec ?? {};
  const meta = pod?.metadata ?? {};
  const owner =
    ((meta.ownerReferences ?? []) as Json[]).find((o) => o?.controller) ?? meta.ownerReferences?.[0];
  const phase = String(pod?.status?.phase ?? 'Pending');
  const scheduled = ((pod?.status?.conditions ?? []) as Json[]).find((c) => c?.type === 'PodScheduled');
  const requests = podResources(spec, 'requests');
  const hasAnyRequest = [...(spec.containers ?? []), ...(spec.initContainers ?? [])].some(
    (c: Json) => c?.resources?.requests?.cpu !== undefined || c?.resources?.requests?.memory !== undefined,
  );
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const info: PodInfo = {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    uid: meta.uid ?? '',
    resourceVersion: meta.resourceVersion ?? '',
    labels: strMap(meta.labels),
    annotations: strMap(meta.annotations),
    nodeName: spec.nodeName ?? '',
    schedulerName: spec.schedulerName ?? 'default-scheduler',
    phase,
    priority: typeof spec.priority === 'number' ? spec.priority : 0,
    requests,
    limits: podResources(spec, 'limits'),
    noRequests: !hasAnyRequest,
    ownerKind: owner?.kind ?? '',
    ownerName: owner?.name ?? '',
    isDaemonSetPod: owner?.kind === 'DaemonSet',
    schedulingGated: Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0,
    terminal: phase === 'Succeeded' || phase === 'Failed',
    deleting: Boolean(meta.deletionTimestamp),
    nodeSelector: strMap(spec.nodeSelector),
    requiredNodeAffinity: ((required?.nodeSelectorTerms ?? []) as Json[]).map(
      (t): NodeSelectorTerm => ({ matchExpressions: t?.matchExpressions, matchFields: t?.matchFields }),
    ),
    tolerations: ((spec.tolerations ?? []) as Json[]).map(
      (t): Toleration => ({ key: t?.key, operator: t?.operator, value: t?.value, effect: t?.effect }),
    ),
    creationTimestamp: isoTime(meta.creationTimestamp),
  };
  if (scheduled) {
    info.scheduledCondition = {
      status: scheduled.status,
      reason: scheduled.reason,
      message: scheduled.message,
    };
    if (scheduled.status === 'True') info.scheduledAt = isoTime(scheduled.lastTransitionTime) || undefined;
  }
  return info;
}

/** metrics.k8s.io/v1beta1 NodeMetrics → plain data. `window` is a duration string such as "20.023s". */
export function toNodeMetricsInfo(m: Json): NodeMetricsInfo {
  const window = String(m?.window ?? '0s');
  return {
    name: m?.metadata?.name ?? '',
    timestamp: isoTime(m?.timestamp),
    windowSeconds: parseDurationSeconds(window),
    usage: { cpuMilli: cpuMilli(m?.usage?.cpu), memoryBytes: bytes(m?.usage?.memory) },
  };
}

export function parseDurationSeconds(d: string): number {
  let total = 0;
  for (const m of d.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 'ms' ? n / 1000 : n;
  }
  return total;
}

export function toLabelSelector(v: Json): LabelSelector | undefined {
  if (!v || typeof v !== 'object') return undefined;
  return { matchLabels: v.matchLabels, matchExpressions: v.matchExpressions };
}

export { parseQuantity };

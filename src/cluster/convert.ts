/**
 * API objects → the core's plain data. Objects arrive in two shapes (client-node deserialises list
 * results into classes with Date fields; watch events and AdmissionReviews are raw JSON), so every
 * accessor here tolerates both.
 */

import { migratedVolume } from './csi-migration.js';
import type {
  CpuMem,
  HostPort,
  LabelSelector,
  NamespaceInfo,
  NodeImage,
  NodeInfo,
  NodeMetricsInfo,
  NodeResources,
  NodeSelectorTerm,
  PodAffinityRules,
  PodAffinityTerm,
  PodInfo,
  PodVolume,
  PreferredSchedulingTerm,
  ResourceList,
  SelectorControllerKind,
  Taint,
  Toleration,
  TopologySpreadConstraint,
} from './model.js';
import { podResourceList } from './pod-requests.js';
import { bytes, cpuMilli, toResourceList } from './quantity.js';

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

// Shared empties: most pods have no ports, affinity, spread or volumes; one frozen array each.
const NONE: readonly never[] = Object.freeze([]);
function none<T>(): T[] {
  return NONE as unknown as T[];
}

function images(list: Json): NodeImage[] {
  if (!Array.isArray(list) || list.length === 0) return none();
  return (list as Json[]).map((i) => ({
    names: Array.isArray(i?.names) ? i.names.map(String) : [],
    sizeBytes: Number(i?.sizeBytes) || 0,
  }));
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
    allocatableResources: toResourceList(node?.status?.allocatable ?? node?.status?.capacity),
    images: images(node?.status?.images),
    declaredFeatures: strings(node?.status?.declaredFeatures),
    creationTimestamp: isoTime(node?.metadata?.creationTimestamp),
  };
}

function cpuMem(list: ResourceList): CpuMem {
  return { cpuMilli: list['cpu'] ?? 0, memoryBytes: list['memory'] ?? 0 };
}

function selectorOf(v: Json): LabelSelector | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const sel: LabelSelector = {};
  if (v.matchLabels && typeof v.matchLabels === 'object') sel.matchLabels = strMap(v.matchLabels);
  if (Array.isArray(v.matchExpressions)) {
    sel.matchExpressions = (v.matchExpressions as Json[]).map((e) => ({
      key: String(e?.key ?? ''),
      operator: String(e?.operator ?? ''),
      values: Array.isArray(e?.values) ? e.values.map(String) : [],
    }));
  }
  return sel;
}

function strings(v: Json): string[] {
  return Array.isArray(v) && v.length > 0 ? v.map(String) : none();
}

function affinityTerm(t: Json): PodAffinityTerm {
  const term: PodAffinityTerm = {
    namespaces: strings(t?.namespaces),
    topologyKey: String(t?.topologyKey ?? ''),
    matchLabelKeys: strings(t?.matchLabelKeys),
    mismatchLabelKeys: strings(t?.mismatchLabelKeys),
  };
  const labelSelector = selectorOf(t?.labelSelector);
  if (labelSelector) term.labelSelector = labelSelector;
  const namespaceSelector = selectorOf(t?.namespaceSelector);
  if (namespaceSelector) term.namespaceSelector = namespaceSelector;
  return term;
}

function affinityRules(a: Json): PodAffinityRules | undefined {
  const required = (a?.requiredDuringSchedulingIgnoredDuringExecution ?? []) as Json[];
  const preferred = (a?.preferredDuringSchedulingIgnoredDuringExecution ?? []) as Json[];
  if (required.length === 0 && preferred.length === 0) return undefined;
  return {
    required: required.map(affinityTerm),
    preferred: preferred.map((w) => ({
      weight: Number(w?.weight) || 0,
      term: affinityTerm(w?.podAffinityTerm),
    })),
  };
}

function nodeSelectorTerm(t: Json): NodeSelectorTerm {
  return { matchExpressions: t?.matchExpressions, matchFields: t?.matchFields };
}

function preferredNodeTerms(na: Json): PreferredSchedulingTerm[] {
  const list = (na?.preferredDuringSchedulingIgnoredDuringExecution ?? []) as Json[];
  if (list.length === 0) return none();
  return list.map((p) => ({ weight: Number(p?.weight) || 0, preference: nodeSelectorTerm(p?.preference) }));
}

function spreadConstraints(list: Json): TopologySpreadConstraint[] {
  if (!Array.isArray(list) || list.length === 0) return none();
  return (list as Json[]).map((c) => {
    const out: TopologySpreadConstraint = {
      maxSkew: Number(c?.maxSkew) || 0,
      topologyKey: String(c?.topologyKey ?? ''),
      whenUnsatisfiable: String(c?.whenUnsatisfiable ?? 'DoNotSchedule'),
      nodeAffinityPolicy: String(c?.nodeAffinityPolicy ?? 'Honor'),
      nodeTaintsPolicy: String(c?.nodeTaintsPolicy ?? 'Ignore'),
      matchLabelKeys: strings(c?.matchLabelKeys),
    };
    const sel = selectorOf(c?.labelSelector);
    if (sel) out.labelSelector = sel;
    if (typeof c?.minDomains === 'number') out.minDomains = c.minDomains;
    return out;
  });
}

/** Host ports of app containers and restartable init containers, as NodePorts collects them. */
function hostPorts(spec: Json): HostPort[] {
  const out: HostPort[] = [];
  const containers = [
    ...((spec?.containers ?? []) as Json[]),
    ...((spec?.initContainers ?? []) as Json[]).filter((c) => c?.restartPolicy === 'Always'),
  ];
  for (const c of containers) {
    for (const p of (c?.ports ?? []) as Json[]) {
      const port = Number(p?.hostPort) || 0;
      if (port <= 0) continue;
      out.push({ hostIP: String(p?.hostIP ?? ''), protocol: String(p?.protocol || 'TCP'), port });
    }
  }
  return out.length ? out : none();
}

/** In-tree disks VolumeRestrictions compares by identity. */
function diskOf(v: Json): string | undefined {
  if (v?.gcePersistentDisk?.pdName) return `gce-pd:${v.gcePersistentDisk.pdName}`;
  if (v?.awsElasticBlockStore?.volumeID) return `aws-ebs:${v.awsElasticBlockStore.volumeID}`;
  // Two iSCSI volumes are the same disk when their IQNs are (VolumeRestrictions' isVolumeConflict).
  if (v?.iscsi?.iqn) return `iscsi:${v.iscsi.iqn}`;
  if (v?.rbd?.image) return `rbd:${(v.rbd.monitors ?? []).join(',')}:${v.rbd.pool ?? 'rbd'}:${v.rbd.image}`;
  return undefined;
}

function podVolumes(podName: string, spec: Json): PodVolume[] {
  const list = (spec?.volumes ?? []) as Json[];
  const out: PodVolume[] = [];
  for (const v of list) {
    const name = String(v?.name ?? '');
    if (v?.persistentVolumeClaim) {
      out.push({
        name,
        claimName: String(v.persistentVolumeClaim.claimName ?? ''),
        readOnly: v.persistentVolumeClaim.readOnly === true,
      });
    } else if (v?.ephemeral) {
      out.push({ name, claimName: `${podName}-${name}`, ephemeral: true });
    } else {
      const disk = diskOf(v);
      const migrated = migratedVolume(v);
      if (disk || migrated) {
        const ro =
          v.gcePersistentDisk?.readOnly ??
          v.awsElasticBlockStore?.readOnly ??
          v.iscsi?.readOnly ??
          v.rbd?.readOnly;
        out.push({
          name,
          ...(disk ? { disk } : {}),
          readOnly: ro === true,
          ...(migrated ? { migrated } : {}),
        });
      }
    }
  }
  return out.length ? out : none();
}

/**
 * The node features a pod needs to run, as component-helpers' nodedeclaredfeatures infers them for
 * scheduling (v1.36): RestartAllContainersOnContainerExits for a container or init container with a
 * restartPolicyRules action RestartAllContainers; UserNamespacesHostNetworkSupport for hostNetwork with
 * hostUsers false. (Its other features concern pod updates, not placement.)
 */
function requiredFeatures(spec: Json): string[] | undefined {
  const out: string[] = [];
  const containers = [...((spec?.containers ?? []) as Json[]), ...((spec?.initContainers ?? []) as Json[])];
  const restartsAll = containers.some(
    (c) =>
      Array.isArray(c?.restartPolicyRules) &&
      (c.restartPolicyRules as Json[]).some((r) => r?.action === 'RestartAllContainers'),
  );
  if (restartsAll) out.push('RestartAllContainersOnContainerExits');
  if (spec?.hostNetwork === true && spec?.hostUsers === false) out.push('UserNamespacesHostNetworkSupport');
  return out.length > 0 ? out : undefined;
}

/** upstream's podTerminatingByPreemption, less the deletion: the first DisruptionTarget condition decides. */
function disruptedByPreemption(conditions: Json): boolean {
  if (!Array.isArray(conditions)) return false;
  const target = (conditions as Json[]).find((c) => c?.type === 'DisruptionTarget');
  return target?.status === 'True' && target?.reason === 'PreemptionByScheduler';
}

/** The references of image volumes (KEP-4639), or undefined when the pod has none. */
function volumeImages(spec: Json): string[] | undefined {
  const out: string[] = [];
  for (const v of (spec?.volumes ?? []) as Json[]) {
    const ref = v?.image?.reference;
    if (typeof ref === 'string' && ref !== '') out.push(ref);
  }
  return out.length > 0 ? out : undefined;
}

function containerImages(spec: Json): string[] {
  const out: string[] = [];
  for (const c of [...((spec?.initContainers ?? []) as Json[]), ...((spec?.containers ?? []) as Json[])]) {
    if (c?.image) out.push(String(c.image));
  }
  return out;
}

/** The GroupVersionKinds helper.DefaultSelector reads a controller of (matched exactly, as upstream). */
const SELECTOR_CONTROLLERS: ReadonlyMap<string, SelectorControllerKind> = new Map([
  ['v1/ReplicationController', 'ReplicationController'],
  ['apps/v1/ReplicaSet', 'ReplicaSet'],
  ['apps/v1/StatefulSet', 'StatefulSet'],
]);

function selectorControllerOf(owner: Json): { selectorController?: SelectorControllerKind } {
  if (owner?.controller !== true) return {};
  const kind = SELECTOR_CONTROLLERS.get(`${owner.apiVersion}/${owner.kind}`);
  return kind ? { selectorController: kind } : {};
}

export function toPodInfo(pod: Json): PodInfo {
  const spec = pod?.spec ?? {};
  const meta = pod?.metadata ?? {};
  const owner =
    ((meta.ownerReferences ?? []) as Json[]).find((o) => o?.controller) ?? meta.ownerReferences?.[0];
  const phase = String(pod?.status?.phase ?? 'Pending');
  const scheduled = ((pod?.status?.conditions ?? []) as Json[]).find((c) => c?.type === 'PodScheduled');
  const resourceRequests = podResourceList(spec, 'requests', pod?.status);
  const requests = cpuMem(resourceRequests);
  const hasAnyRequest =
    spec.resources?.requests?.cpu !== undefined ||
    spec.resources?.requests?.memory !== undefined ||
    [...(spec.containers ?? []), ...(spec.initContainers ?? [])].some(
      (c: Json) => c?.resources?.requests?.cpu !== undefined || c?.resources?.requests?.memory !== undefined,
    );
  const affinity = spec.affinity ?? {};
  const required = affinity.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
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
    limits: cpuMem(podResourceList(spec, 'limits')),
    noRequests: !hasAnyRequest,
    ownerKind: owner?.kind ?? '',
    ownerName: owner?.name ?? '',
    ...selectorControllerOf(owner),
    isDaemonSetPod: owner?.kind === 'DaemonSet',
    schedulingGated: Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0,
    terminal: phase === 'Succeeded' || phase === 'Failed',
    deleting: Boolean(meta.deletionTimestamp),
    nodeSelector: strMap(spec.nodeSelector),
    requiredNodeAffinity: ((required?.nodeSelectorTerms ?? []) as Json[]).map(nodeSelectorTerm),
    preferredNodeAffinity: preferredNodeTerms(affinity.nodeAffinity),
    tolerations: ((spec.tolerations ?? []) as Json[]).map(
      (t): Toleration => ({ key: t?.key, operator: t?.operator, value: t?.value, effect: t?.effect }),
    ),
    resourceRequests,
    hostPorts: hostPorts(spec),
    topologySpreadConstraints: spreadConstraints(spec.topologySpreadConstraints),
    volumes: podVolumes(meta.name ?? '', spec),
    hasResourceClaims: Array.isArray(spec.resourceClaims) && spec.resourceClaims.length > 0,
    images: containerImages(spec),
    nominatedNodeName: String(pod?.status?.nominatedNodeName ?? ''),
    preemptionPolicy: String(spec.preemptionPolicy ?? 'PreemptLowerPriority'),
    creationTimestamp: isoTime(meta.creationTimestamp),
  };
  if (meta.deletionTimestamp && disruptedByPreemption(pod?.status?.conditions))
    info.terminatingByPreemption = true;
  if (typeof meta.generation === 'number' && meta.generation > 0) info.generation = meta.generation;
  const features = requiredFeatures(spec);
  if (features) info.requiredFeatures = features;
  const imageVolumes = volumeImages(spec);
  if (imageVolumes) info.volumeImages = imageVolumes;
  const podAffinity = affinityRules(affinity.podAffinity);
  if (podAffinity) info.podAffinity = podAffinity;
  const podAntiAffinity = affinityRules(affinity.podAntiAffinity);
  if (podAntiAffinity) info.podAntiAffinity = podAntiAffinity;
  if (scheduled) {
    info.scheduledCondition = {
      status: scheduled.status,
      reason: scheduled.reason,
      message: scheduled.message,
    };
    if (typeof scheduled.observedGeneration === 'number')
      info.scheduledCondition.observedGeneration = scheduled.observedGeneration;
    if (scheduled.status === 'True') info.scheduledAt = isoTime(scheduled.lastTransitionTime) || undefined;
  }
  return info;
}

export function toNamespaceInfo(ns: Json): NamespaceInfo {
  return {
    name: ns?.metadata?.name ?? '',
    resourceVersion: ns?.metadata?.resourceVersion ?? '',
    labels: strMap(ns?.metadata?.labels),
  };
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

/**
 * The selector PodTopologySpread's default constraints count with (upstream's helper.DefaultSelector,
 * v1.36): what the Services, ReplicationControllers, ReplicaSets and StatefulSets that select the pod
 * select.
 *
 *   selector = ⋀ { s.selector : Service s in the pod's namespace, s has a selector, s.selector ⊆ pod.labels }
 *            ∧ (controller C of the pod, by its controller ownerReference with exact apiVersion/kind:
 *               v1 ReplicationController → its selector map; apps/v1 ReplicaSet or StatefulSet → every
 *               requirement of its LabelSelector; C absent from the cache → nothing)
 *   empty selector (no requirement at all) → the pod gets no default constraints.
 *
 * A Deployment's pod is selected by its ReplicaSet (whose selector carries pod-template-hash) and,
 * usually, a Service; a bare or Job pod only by Services. The owner need not be in the cache for the
 * Services' part to apply, as upstream.
 */
import { ByNamespace } from '../../cluster/by-namespace.js';
import { selectorMatches } from '../../cluster/labels.js';
import type {
  LabelSelector,
  LabelSelectorRequirement,
  PodInfo,
  WorkloadSelectorInfo,
} from '../../cluster/model.js';
import type { ClusterView } from '../../cluster/view.js';

/** The shared cache's selector-bearing kinds, by namespace/name (Services also per namespace). */
export type WorkloadSelectors = Pick<
  ClusterView,
  'services' | 'replicationControllers' | 'replicaSets' | 'statefulSets'
>;

const NO_SELECTORS: ReadonlyMap<string, WorkloadSelectorInfo> = new Map<string, WorkloadSelectorInfo>();

export const NO_WORKLOADS: WorkloadSelectors = {
  services: new ByNamespace<WorkloadSelectorInfo>(),
  replicationControllers: NO_SELECTORS,
  replicaSets: NO_SELECTORS,
  statefulSets: NO_SELECTORS,
};

/** A LabelSelector's requirements: matchLabels as `key In (value)`, then matchExpressions. */
function requirementsOf(sel: LabelSelector): LabelSelectorRequirement[] {
  const out: LabelSelectorRequirement[] = [];
  for (const key in sel.matchLabels ?? {}) {
    out.push({ key, operator: 'In', values: [sel.matchLabels?.[key] as string] });
  }
  for (const req of sel.matchExpressions ?? []) out.push(req);
  return out;
}

/** The default selector of `pod`, or undefined when it is empty (no default constraints). */
export function defaultSelectorOf(pod: PodInfo, workloads: WorkloadSelectors): LabelSelector | undefined {
  // Every Service and the RC select the pod, so their maps cannot disagree on a key: merging is safe.
  const matchLabels: Record<string, string> = {};
  let labelled = false;
  for (const service of workloads.services.inNamespace(pod.namespace)) {
    const sel = service.selector;
    if (!sel || !selectorMatches(sel, pod.labels)) continue;
    for (const key in sel.matchLabels ?? {}) {
      matchLabels[key] = sel.matchLabels?.[key] as string;
      labelled = true;
    }
  }
  let matchExpressions: LabelSelectorRequirement[] = [];
  const key = `${pod.namespace}/${pod.ownerName}`;
  switch (pod.selectorController) {
    case 'ReplicationController': {
      const rc = workloads.replicationControllers.get(key)?.selector?.matchLabels ?? {};
      for (const k in rc) {
        matchLabels[k] = rc[k] as string;
        labelled = true;
      }
      break;
    }
    case 'ReplicaSet':
    case 'StatefulSet': {
      const owners = pod.selectorController === 'ReplicaSet' ? workloads.replicaSets : workloads.statefulSets;
      const sel = owners.get(key)?.selector;
      // A nil LabelSelector selects nothing and adds no requirement (LabelSelectorAsSelector → Nothing).
      if (sel) matchExpressions = requirementsOf(sel);
      break;
    }
    default:
      break;
  }
  if (!labelled && matchExpressions.length === 0) return undefined;
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(matchLabels).sort()) sorted[k] = matchLabels[k] as string;
  return { matchLabels: sorted, matchExpressions };
}

/**
 * Node predicates as kube-scheduler evaluates them: taints against tolerations (TaintToleration) and
 * nodeSelector plus required node affinity, matchExpressions and matchFields (NodeAffinity).
 */
import type {
  NodeInfo,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  PodInfo,
  Taint,
  Toleration,
} from '../cluster/model.js';

export const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

/** core/v1 Toleration.ToleratesTaint. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  const op = t.operator || 'Equal';
  if (op === 'Exists') return true;
  if (op !== 'Equal') return false;
  // An empty key with Equal is invalid in the API; it tolerates nothing.
  if (!t.key) return false;
  return (t.value ?? '') === (taint.value ?? '');
}

/** The first NoSchedule/NoExecute taint no toleration covers. */
export function untoleratedTaint(taints: Taint[], tolerations: Toleration[]): Taint | undefined {
  // Plain loops: TaintToleration's Filter calls this for every node of every cycle.
  for (const taint of taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    let tolerated = false;
    for (const t of tolerations) {
      if (toleratesTaint(t, taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) return taint;
  }
  return undefined;
}

/** Whether some toleration covers a taint with this key and effect (any value). */
export function toleratesTaintKey(tolerations: Toleration[], key: string, effect: string): boolean {
  return tolerations.some((t) => toleratesTaint(t, { key, effect }));
}

function parseInteger(v: string | undefined): number | undefined {
  if (v === undefined || !/^-?\d+$/.test(v)) return undefined;
  return Number(v);
}

function requirementMatches(req: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const have = parseInteger(value);
      const want = parseInteger(values[0]);
      if (have === undefined || want === undefined || values.length !== 1) return false;
      return req.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

export function termMatches(term: NodeSelectorTerm, node: NodeInfo): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  // An empty term selects no node (nodeaffinity.NodeSelector semantics).
  if (exprs.length === 0 && fields.length === 0) return false;
  return (
    exprs.every((r) =>
      requirementMatches(r, Object.hasOwn(node.labels, r.key) ? node.labels[r.key] : undefined),
    ) &&
    // metadata.name is the only field the API accepts; anything else matches nothing.
    fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, node.name))
  );
}

/** nodeSelector AND any of the required node affinity terms. */
export function nodeAffinityMatches(pod: PodInfo, node: NodeInfo): boolean {
  // Called for every node a cycle filters: no entries arrays, no closure (allocation profile, README).
  const selector = pod.nodeSelector;
  for (const k in selector) {
    if (node.labels[k] !== selector[k] || !Object.hasOwn(node.labels, k)) return false;
  }
  const terms = pod.requiredNodeAffinity;
  if (terms.length === 0) return true;
  for (const t of terms) if (termMatches(t, node)) return true;
  return false;
}

/**
 * Services, ReplicationControllers, ReplicaSets and StatefulSets → their selectors, the one thing the
 * scheduler reads of them (PodTopologySpread's default constraints: helper.DefaultSelector). Like
 * convert.ts, every accessor tolerates both typed-client classes and raw JSON.
 */
import { toLabelSelector } from './convert-storage.js';
import type { WorkloadSelectorInfo } from './model.js';

// biome-ignore lint/suspicious/noExplicitAny: API objects are untyped JSON at this boundary.
type Json = any;

function identity(o: Json): Omit<WorkloadSelectorInfo, 'selector'> {
  const meta = o?.metadata ?? {};
  return {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    resourceVersion: meta.resourceVersion ?? '',
  };
}

/**
 * A Service's or a ReplicationController's `spec.selector`, a plain map: as `matchLabels`. A Service
 * without one selects nothing (GetPodServices skips it, "nil selectors match nothing, not everything").
 */
export function toMapSelectorInfo(o: Json): WorkloadSelectorInfo {
  const map = o?.spec?.selector;
  const info = identity(o);
  if (!map || typeof map !== 'object') return info;
  const matchLabels: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) matchLabels[k] = String(v);
  return { ...info, selector: { matchLabels } };
}

/** A ReplicaSet's or a StatefulSet's `spec.selector`, a metav1.LabelSelector. */
export function toLabelSelectorInfo(o: Json): WorkloadSelectorInfo {
  const selector = toLabelSelector(o?.spec?.selector);
  const info = identity(o);
  return selector ? { ...info, selector } : info;
}

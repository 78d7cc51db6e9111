/** WorkloadSelectors for plugin tests, from plain lists (resourceVersion filled in). */
import { ByNamespace } from '../../cluster/by-namespace.js';
import type { LabelSelector, WorkloadSelectorInfo } from '../../cluster/model.js';
import type { WorkloadSelectors } from './default-selector.js';

export interface WorkloadDef {
  namespace: string;
  name: string;
  selector?: LabelSelector;
}

function byKey<M extends Map<string, WorkloadSelectorInfo>>(map: M, defs: readonly WorkloadDef[] = []): M {
  for (const d of defs) map.set(`${d.namespace}/${d.name}`, { ...d, resourceVersion: '1' });
  return map;
}

export function workloadSelectors(o: {
  services?: readonly WorkloadDef[];
  replicationControllers?: readonly WorkloadDef[];
  replicaSets?: readonly WorkloadDef[];
  statefulSets?: readonly WorkloadDef[];
}): WorkloadSelectors {
  return {
    services: byKey(new ByNamespace<WorkloadSelectorInfo>(), o.services),
    replicationControllers: byKey(new Map(), o.replicationControllers),
    replicaSets: byKey(new Map(), o.replicaSets),
    statefulSets: byKey(new Map(), o.statefulSets),
  };
}

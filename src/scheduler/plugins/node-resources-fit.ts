/**
 * NodeResourcesFit (PreFilter + Filter): every resource the pod requests must fit in what the node has
 * left. PreFilter takes the pod's effective requests (PodInfo.resourceRequests: containers, sidecars,
 * init containers, pod-level resources, overhead); Filter, per resource r with request > 0:
 *   fails ⇔ request[r] > allocatable[r] − Σ requested[r] of the pods on the node (assumed ones included)
 * plus the pod count: fails ⇔ pods on node + 1 > allocatable pods. A resource the node does not list
 * has allocatable 0. Unresolvable when the request exceeds the node's whole allocatable (preemption
 * cannot help).
 */

import { draBackedRequests } from '../../cluster/device-classes.js';
import type { DeviceClassInfo, PodInfo } from '../../cluster/model.js';
import { formatCpu, formatMemory } from '../../cluster/quantity.js';
import type { FilterPlugin, PreFilterPlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { PLUGIN } from './names.js';

export interface NodeResourcesFitArgs {
  /** Extended resources to ignore (NodeResourcesFitArgs.ignoredResources). */
  ignoredResources?: string[];
  /** Resource groups to ignore by prefix before "/" (ignoredResourceGroups). */
  ignoredResourceGroups?: string[];
}

const STATE = 'NodeResourcesFit/requests';

function format(resource: string, v: number): string {
  if (resource === 'cpu') return formatCpu(v);
  if (resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-'))
    return formatMemory(v);
  return String(v);
}

function code(resource: string): string {
  if (resource === 'cpu') return 'InsufficientCPU';
  if (resource === 'memory') return 'InsufficientMemory';
  return 'InsufficientResource';
}

const NO_CLASSES: ReadonlyMap<string, DeviceClassInfo> = new Map();

/** A resource to check: [name, request, whether a DeviceClass backs it (DRA may serve it instead)]. */
type Check = [resource: string, request: number, draBacked: boolean];

/**
 * `deviceClasses` (the shared cache's): an extended resource a DeviceClass backs is not checked on a node
 * whose allocatable lacks it, as upstream's shouldDelegateResourceToDRA (DRAExtendedResource, beta and on
 * in v1.36) — DynamicResources gives that node its reason.
 */
export function nodeResourcesFit(
  args: NodeResourcesFitArgs = {},
  deviceClasses: ReadonlyMap<string, DeviceClassInfo> = NO_CLASSES,
): PreFilterPlugin & FilterPlugin {
  const ignored = new Set(args.ignoredResources ?? []);
  const ignoredGroups = new Set(args.ignoredResourceGroups ?? []);
  // Only extended resources can be ignored (upstream's IsExtendedResourceName): cpu, memory,
  // ephemeral-storage, hugepages-* and kubernetes.io/* are always checked.
  const isIgnored = (r: string) => {
    const slash = r.indexOf('/');
    if (slash <= 0 || r.includes('kubernetes.io/')) return false;
    return ignored.has(r) || ignoredGroups.has(r.slice(0, slash));
  };
  /** The resources to check for the pod — once per cycle, not per node. */
  const wanted = (pod: PodInfo): Check[] => {
    const out: Check[] = [];
    const req = pod.resourceRequests;
    const backed = draBackedRequests(deviceClasses, req);
    for (const r in req) {
      const want = req[r] as number;
      if (want > 0 && r !== 'pods' && !isIgnored(r)) out.push([r, want, backed.some(([b]) => b === r)]);
    }
    return out;
  };
  return {
    name: PLUGIN.NodeResourcesFit,
    preFilter(state, ctx) {
      state.write(STATE, wanted(ctx.pod));
      return undefined;
    },
    filter(state, ctx, n, verdict) {
      const node = n.node;
      if (!node) return;
      const alloc = node.allocatableResources;
      const allowedPods = alloc['pods'] ?? node.allocatable.pods;
      if (n.podCount + 1 > allowedPods) {
        addReason(verdict, {
          plugin: PLUGIN.NodeResourcesFit,
          code: 'TooManyPods',
          reason: 'Too many pods',
          detail: `${n.podCount} pods of ${allowedPods} allowed`,
        });
      }
      const checks = state.read<Check[]>(STATE) ?? wanted(ctx.pod);
      for (let i = 0; i < checks.length; i++) {
        const [r, want, draBacked] = checks[i] as Check;
        const total = alloc[r] ?? 0;
        if (draBacked && !(total > 0)) continue;
        const free = total - (n.requested[r] ?? 0);
        if (want <= free) continue;
        addReason(verdict, {
          plugin: PLUGIN.NodeResourcesFit,
          code: code(r),
          reason: `Insufficient ${r}`,
          detail: `requests ${format(r, want)}, free ${format(r, Math.max(0, free))} of ${format(r, total)}`,
          ...(want > total ? { unresolvable: true } : {}),
        });
      }
    },
  };
}

/**
 * DynamicResources, as far as nodeload goes: it does not allocate devices (Dynamic Resource Allocation),
 * so it refuses what only an allocation could place instead of binding a pod without its devices — the
 * kubelet could not start it. The webhook never hands nodeload such a pod (src/webhook/gate.ts); this
 * catches one that names nodeload-scheduler itself.
 *   PreFilter rejects ⇔ spec.resourceClaims ≠ ∅      (UnschedulableAndUnresolvable: no node, no eviction helps)
 *   Filter fails n ⇔ the pod requests an extended resource r > 0 that a DeviceClass backs and n's
 *     allocatable has no r (upstream's NodeResourcesFit delegates exactly those to DynamicResources, which
 *     would allocate r's devices there; NodeResourcesFit skips them, so this is the node's reason).
 *   PostFilter (nothing to deallocate: nodeload allocates nothing) says what upstream's says when it
 *     frees nothing, so the FailedScheduling message reads as kube-scheduler's: "no new claims to
 *     deallocate" for a pod without claims, "still not schedulable" for one with DRA-backed extended
 *     resources; the runtime joins it with DefaultPreemption's sentence, which follows. When an earlier
 *     PreFilter rejected the pod unresolvably, upstream's PreFilter loop never reached this plugin, its
 *     PostFilter fails to read its state (framework.ErrNotFound), and that Error ends PostFilter:
 *     kube-scheduler's message ends "… not found." and no preemption is tried; so here too.
 * Upstream's plugin sits before DefaultPreemption in the default profile (applyDynamicResources).
 */
import { draBackedRequests } from '../../cluster/device-classes.js';
import type { DeviceClassInfo } from '../../cluster/model.js';
import type { FilterPlugin, PostFilterPlugin, PreFilterPlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { PLUGIN } from './names.js';

export const ERR_RESOURCE_CLAIMS =
  'pod has ResourceClaims, which nodeload-scheduler does not allocate (schedule it with kube-scheduler)';
/** Upstream's PostFilter statuses when it has no claim to deallocate. */
export const NO_CLAIMS_TO_DEALLOCATE = 'no new claims to deallocate';
export const STILL_NOT_SCHEDULABLE = 'still not schedulable';
/** framework.ErrNotFound's text: the plugin's PreFilter state was never written. */
export const STATE_NOT_FOUND = 'not found';
export const ERR_DRA_EXTENDED_RESOURCE =
  'node(s) would serve an extended resource through Dynamic Resource Allocation, which nodeload-scheduler does not allocate (schedule the pod with kube-scheduler)';

const STATE = 'DynamicResources/extendedResources';
const NO_CLASSES: ReadonlyMap<string, DeviceClassInfo> = new Map();

/** `deviceClasses`: the shared cache's DeviceClasses (read-only), which tell DRA-backed extended resources. */
export function dynamicResources(
  deviceClasses: ReadonlyMap<string, DeviceClassInfo> = NO_CLASSES,
): PreFilterPlugin & FilterPlugin & PostFilterPlugin {
  return {
    name: PLUGIN.DynamicResources,
    preFilter(state, ctx) {
      if (ctx.pod.hasResourceClaims)
        return {
          reject: {
            code: 'ResourceClaimsUnsupported',
            reason: ERR_RESOURCE_CLAIMS,
            detail: 'spec.resourceClaims is set: Dynamic Resource Allocation is not implemented by nodeload',
            unresolvable: true,
          },
        };
      const backed = draBackedRequests(deviceClasses, ctx.pod.resourceRequests);
      if (backed.length === 0) return { skip: true };
      state.write(STATE, backed);
      return undefined;
    },
    filter(state, _ctx, n, verdict) {
      const backed = state.read<[string, string][]>(STATE);
      const alloc = n.node?.allocatableResources;
      if (!backed || !alloc) return;
      for (const [r, cls] of backed) {
        if ((alloc[r] ?? 0) > 0) continue;
        addReason(verdict, {
          plugin: PLUGIN.DynamicResources,
          code: 'ExtendedResourceNeedsDRA',
          reason: ERR_DRA_EXTENDED_RESOURCE,
          detail: `the node has no ${r} in its allocatable; DeviceClass ${cls} would allocate it through Dynamic Resource Allocation`,
          unresolvable: true,
        });
        return;
      }
    },
    postFilter(state, ctx, _failed, handle) {
      if (!handle.preFilterRan(PLUGIN.DynamicResources)) return { message: STATE_NOT_FOUND, error: true };
      // A pod with claims was refused in PreFilter: upstream would try to free one, nodeload holds none.
      if (ctx.pod.hasResourceClaims) return undefined;
      return { message: state.read(STATE) ? STILL_NOT_SCHEDULABLE : NO_CLAIMS_TO_DEALLOCATE };
    },
  };
}

/**
 * DynamicResources, as far as nodeload goes: it does not allocate ResourceClaims (Dynamic Resource
 * Allocation), so PreFilter refuses a pod that has any instead of binding it without its devices — the
 * kubelet could not start it. The webhook never hands nodeload such a pod (src/webhook/gate.ts); this
 * catches one that names nodeload-scheduler itself.
 *   rejects ⇔ spec.resourceClaims ≠ ∅      (UnschedulableAndUnresolvable: no node and no eviction helps)
 * Upstream's plugin sits before DefaultPreemption in the default profile (applyDynamicResources).
 */
import type { PreFilterPlugin } from '../framework/types.js';
import { PLUGIN } from './names.js';

export const ERR_RESOURCE_CLAIMS =
  'pod has ResourceClaims, which nodeload-scheduler does not allocate (schedule it with kube-scheduler)';

export function dynamicResources(): PreFilterPlugin {
  return {
    name: PLUGIN.DynamicResources,
    preFilter: (_state, ctx) =>
      ctx.pod.hasResourceClaims
        ? {
            reject: {
              code: 'ResourceClaimsUnsupported',
              reason: ERR_RESOURCE_CLAIMS,
              detail:
                'spec.resourceClaims is set: Dynamic Resource Allocation is not implemented by nodeload',
              unresolvable: true,
            },
          }
        : { skip: true },
  };
}

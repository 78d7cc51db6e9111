/**
 * NodeDeclaredFeatures (PreFilter + Filter; in kube-scheduler's default profile since v1.36, where its
 * gate is beta and on): a pod that needs a node feature goes only to nodes whose kubelet declares it in
 * status.declaredFeatures — a node still on an older kubelet cannot run it as the pod expects.
 *   fails ⇔ ∃ f ∈ required(pod): f ∉ node.status.declaredFeatures        (unresolvable: eviction won't help)
 * required(pod) is inferred from the spec (src/cluster/convert.ts, as component-helpers does):
 * RestartAllContainersOnContainerExits, UserNamespacesHostNetworkSupport. PreFilter skips pods needing none.
 */
import type { FilterPlugin, PreFilterPlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { PLUGIN } from './names.js';

export function nodeDeclaredFeatures(): PreFilterPlugin & FilterPlugin {
  return {
    name: PLUGIN.NodeDeclaredFeatures,
    preFilter: (_state, ctx) => (ctx.pod.requiredFeatures ? undefined : { skip: true }),
    filter(_state, ctx, n, verdict) {
      const declared = n.node?.declaredFeatures ?? [];
      const missing = (ctx.pod.requiredFeatures ?? []).filter((f) => !declared.includes(f));
      if (missing.length === 0) return;
      addReason(verdict, {
        plugin: PLUGIN.NodeDeclaredFeatures,
        code: 'NodeDeclaredFeatures',
        reason: "node(s) didn't match Pod's required features",
        detail: `the node does not declare ${missing.join(', ')} (status.declaredFeatures)`,
        unresolvable: true,
      });
    },
  };
}

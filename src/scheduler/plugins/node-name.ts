/**
 * NodeName (Filter): a pod that names its node fits only there.   fails ⇔ pod.nodeName ≠ "" ∧ pod.nodeName ≠ node
 * (Pods with spec.nodeName never enter nodeload's queue; the plugin keeps the contract explicit.)
 */
import type { FilterPlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { PLUGIN } from './names.js';

export function nodeName(): FilterPlugin {
  return {
    name: PLUGIN.NodeName,
    filter(_state, ctx, n, verdict) {
      if (!ctx.pod.nodeName || ctx.pod.nodeName === n.name) return;
      addReason(verdict, {
        plugin: PLUGIN.NodeName,
        code: 'NodeNameMismatch',
        reason: "node(s) didn't match the requested node name",
        detail: `pod asks for node ${ctx.pod.nodeName}`,
        unresolvable: true,
      });
    },
  };
}

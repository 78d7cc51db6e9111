/**
 * NodeUnschedulable (Filter): a cordoned node (spec.unschedulable) takes only pods tolerating
 * node.kubernetes.io/unschedulable:NoSchedule.   fails ⇔ node.unschedulable ∧ ¬tolerates(unschedulable:NoSchedule)
 */
import type { FilterPlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { toleratesTaintKey, UNSCHEDULABLE_TAINT } from '../predicates.js';
import { PLUGIN } from './names.js';

export function nodeUnschedulable(): FilterPlugin {
  return {
    name: PLUGIN.NodeUnschedulable,
    filter(_state, ctx, n, verdict) {
      if (!n.node?.unschedulable) return;
      if (toleratesTaintKey(ctx.pod.tolerations, UNSCHEDULABLE_TAINT, 'NoSchedule')) return;
      addReason(verdict, {
        plugin: PLUGIN.NodeUnschedulable,
        code: 'NodeUnschedulable',
        reason: 'node(s) were unschedulable',
        detail: 'spec.unschedulable is true (cordoned)',
        unresolvable: true,
      });
    },
  };
}

/**
 * TaintToleration.
 *   Filter: fails ⇔ some NoSchedule/NoExecute taint of the node is tolerated by no toleration of the pod.
 *   Score:  count of the node's PreferNoSchedule taints not tolerated by the pod's tolerations whose
 *           effect is PreferNoSchedule or empty; NormalizeScore reversed (fewer → 100).
 */
import type { Taint, Toleration } from '../../cluster/model.js';
import type { FilterPlugin, PreScorePlugin, ScorePlugin } from '../framework/types.js';
import { addReason, type FilterReason } from '../framework/verdict.js';
import { toleratesTaint, untoleratedTaint } from '../predicates.js';
import { PLUGIN } from './names.js';
import { defaultNormalize } from './score-normalize.js';

const STATE = 'TaintToleration/preferNoSchedule';

/**
 * One reason per taint object, shared by every verdict naming it: a node's taints stay the same
 * objects until the node changes, and a tainted node fails every cycle that examines it (when part of a
 * large cluster is NotReady, most of the nodes a cycle examines). Building the two strings per node per
 * cycle, and hashing them afresh where reasons are grouped, was a tenth of a 5,000-node cycle.
 */
const reasons = new WeakMap<Taint, FilterReason>();

export const ERR_UNTOLERATED_TAINT = 'node(s) had untolerated taint(s)';

function taintReason(taint: Taint): FilterReason {
  let r = reasons.get(taint);
  if (!r) {
    r = Object.freeze({
      plugin: PLUGIN.TaintToleration,
      code: 'TaintNotTolerated',
      // v1.36's text, the same for every taint (the detail names it).
      reason: ERR_UNTOLERATED_TAINT,
      detail: `taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect} not tolerated`,
      unresolvable: true,
    });
    reasons.set(taint, r);
  }
  return r;
}

export function taintToleration(): FilterPlugin & PreScorePlugin & ScorePlugin {
  return {
    name: PLUGIN.TaintToleration,
    filter(_state, ctx, n, verdict) {
      const taint = n.node ? untoleratedTaint(n.node.taints, ctx.pod.tolerations) : undefined;
      if (taint) addReason(verdict, taintReason(taint));
    },
    preScore(state, ctx) {
      const soft = ctx.pod.tolerations.filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
      state.write(STATE, soft);
      return undefined;
    },
    score(state, _ctx, n) {
      const soft = state.read<Toleration[]>(STATE) ?? [];
      let count = 0;
      for (const taint of n.node?.taints ?? []) {
        if (taint.effect !== 'PreferNoSchedule') continue;
        if (!soft.some((t) => toleratesTaint(t, taint))) count++;
      }
      return count;
    },
    normalizeScore(_state, _ctx, scores) {
      defaultNormalize(scores, true);
    },
  };
}

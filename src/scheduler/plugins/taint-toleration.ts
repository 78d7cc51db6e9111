/**
 * TaintToleration.
 *   Filter: fails ⇔ some NoSchedule/NoExecute taint of the node is tolerated by no toleration of the pod.
 *   Score:  count of the node's PreferNoSchedule taints not tolerated by the pod's tolerations whose
 *           effect is PreferNoSchedule or empty; NormalizeScore reversed (fewer → 100).
 */
import type { Toleration } from '../../cluster/model.js';
import type { FilterPlugin, PreScorePlugin, ScorePlugin } from '../framework/types.js';
import { toleratesTaint, untoleratedTaint } from '../predicates.js';
import { PLUGIN } from './names.js';
import { defaultNormalize } from './score-normalize.js';

const STATE = 'TaintToleration/preferNoSchedule';

export function taintToleration(): FilterPlugin & PreScorePlugin & ScorePlugin {
  return {
    name: PLUGIN.TaintToleration,
    filter(_state, ctx, n, verdict) {
      const taint = n.node ? untoleratedTaint(n.node.taints, ctx.pod.tolerations) : undefined;
      if (!taint) return;
      verdict.reasons.push({
        plugin: PLUGIN.TaintToleration,
        code: 'TaintNotTolerated',
        reason: `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`,
        detail: `taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect} not tolerated`,
        unresolvable: true,
      });
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

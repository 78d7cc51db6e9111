/**
 * NodeAffinity.
 *   Filter: fails ⇔ ¬(nodeSelector ⊆ node.labels ∧ (no required terms ∨ ∃ term matching the node)),
 *           or the profile's addedAffinity (NodeAffinityArgs) does not match.
 *   Score:  Σ weight of the preferred terms matching the node (the pod's and the profile's);
 *           NormalizeScore: × 100 / max.
 */
import type { NodeInfo, NodeSelectorTerm, PreferredSchedulingTerm } from '../../cluster/model.js';
import type { FilterPlugin, PreScorePlugin, ScorePlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { nodeAffinityMatches, termMatches } from '../predicates.js';
import { PLUGIN } from './names.js';
import { defaultNormalize } from './score-normalize.js';

export interface NodeAffinityArgs {
  addedAffinity?: { required?: NodeSelectorTerm[]; preferred?: PreferredSchedulingTerm[] };
}

function preferredScore(terms: readonly PreferredSchedulingTerm[], node: NodeInfo): number {
  let sum = 0;
  for (const t of terms) if (t.weight !== 0 && termMatches(t.preference, node)) sum += t.weight;
  return sum;
}

export function nodeAffinity(args: NodeAffinityArgs = {}): FilterPlugin & PreScorePlugin & ScorePlugin {
  const addedRequired = args.addedAffinity?.required ?? [];
  const addedPreferred = args.addedAffinity?.preferred ?? [];
  return {
    name: PLUGIN.NodeAffinity,
    filter(_state, ctx, n, verdict) {
      const node = n.node;
      if (!node) return;
      if (addedRequired.length > 0 && !addedRequired.some((t) => termMatches(t, node))) {
        addReason(verdict, {
          plugin: PLUGIN.NodeAffinity,
          code: 'EnforcedNodeAffinityMismatch',
          reason: "node(s) didn't match scheduler-enforced node affinity",
          detail: 'the profile’s addedAffinity does not match the node',
          unresolvable: true,
        });
      }
      if (!nodeAffinityMatches(ctx.pod, node)) {
        addReason(verdict, {
          plugin: PLUGIN.NodeAffinity,
          code: 'NodeAffinityMismatch',
          reason: "node(s) didn't match Pod's node affinity/selector",
          detail: 'nodeSelector or required node affinity does not match the node',
          unresolvable: true,
        });
      }
    },
    preScore(_state, ctx) {
      return ctx.pod.preferredNodeAffinity.length === 0 && addedPreferred.length === 0 ? 'skip' : undefined;
    },
    score(_state, ctx, n) {
      if (!n.node) return 0;
      return preferredScore(ctx.pod.preferredNodeAffinity, n.node) + preferredScore(addedPreferred, n.node);
    },
    normalizeScore(_state, _ctx, scores) {
      defaultNormalize(scores, false);
    },
  };
}

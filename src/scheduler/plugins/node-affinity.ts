/**
 * NodeAffinity.
 *   PreFilter: skips Filter without nodeSelector, required terms and addedAffinity; when every required
 *           term names nodes by `metadata.name In`, only those can fit: nodeNames = ∪ over terms of
 *           (∩ of the term's metadata.name In lists) — upstream's PreFilterResult, whose other nodes the
 *           framework never filters ("node(s) didn't satisfy plugin(s) [NodeAffinity]"); an empty union
 *           rejects the pod, "pod affinity terms conflict".
 *   Filter: fails ⇔ ¬(nodeSelector ⊆ node.labels ∧ (no required terms ∨ ∃ term matching the node)),
 *           or the profile's addedAffinity (NodeAffinityArgs) does not match.
 *   Score:  Σ weight of the preferred terms matching the node (the pod's and the profile's);
 *           NormalizeScore: × 100 / max.
 */
import type { NodeInfo, NodeSelectorTerm, PreferredSchedulingTerm } from '../../cluster/model.js';
import type { FilterPlugin, PreFilterPlugin, PreScorePlugin, ScorePlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { nodeAffinityMatches, termMatches } from '../predicates.js';
import { PLUGIN } from './names.js';
import { defaultNormalize } from './score-normalize.js';

export interface NodeAffinityArgs {
  addedAffinity?: { required?: NodeSelectorTerm[]; preferred?: PreferredSchedulingTerm[] };
}

export const ERR_TERMS_CONFLICT = 'pod affinity terms conflict';

/** The nodes the required terms name by `metadata.name In`, or undefined when a term names none. */
export function nodeNamesOf(terms: readonly NodeSelectorTerm[]): Set<string> | undefined {
  if (terms.length === 0) return undefined;
  let union: Set<string> | undefined;
  for (const t of terms) {
    let names: Set<string> | undefined;
    for (const r of t.matchFields ?? []) {
      if (r.key !== 'metadata.name' || r.operator !== 'In') continue;
      const listed = new Set(r.values ?? []);
      // A term's requirements are ANDed.
      names = names ? new Set([...names].filter((n) => listed.has(n))) : listed;
    }
    // A term without one admits every node: the terms are ORed.
    if (!names) return undefined;
    union = union ? new Set([...union, ...names]) : names;
  }
  return union;
}

function preferredScore(terms: readonly PreferredSchedulingTerm[], node: NodeInfo): number {
  let sum = 0;
  for (const t of terms) if (t.weight !== 0 && termMatches(t.preference, node)) sum += t.weight;
  return sum;
}

export function nodeAffinity(
  args: NodeAffinityArgs = {},
): PreFilterPlugin & FilterPlugin & PreScorePlugin & ScorePlugin {
  const addedRequired = args.addedAffinity?.required ?? [];
  const addedPreferred = args.addedAffinity?.preferred ?? [];
  return {
    name: PLUGIN.NodeAffinity,
    preFilter(_state, ctx) {
      const pod = ctx.pod;
      if (pod.requiredNodeAffinity.length === 0) {
        if (addedRequired.length > 0) return undefined;
        for (const _ in pod.nodeSelector) return undefined;
        return { skip: true };
      }
      const nodeNames = nodeNamesOf(pod.requiredNodeAffinity);
      if (!nodeNames) return undefined;
      if (nodeNames.size > 0) return { nodeNames };
      return {
        reject: {
          code: 'NodeAffinityTermsConflict',
          reason: ERR_TERMS_CONFLICT,
          detail:
            'every required node affinity term names nodes by metadata.name, and no name is in all of a term’s lists',
          unresolvable: true,
        },
      };
    },
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

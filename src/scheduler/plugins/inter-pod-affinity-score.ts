/**
 * InterPodAffinity's PreScore sums (the formula is in inter-pod-affinity.ts): topology key → value → Σ
 * weights, from the incoming pod's preferred terms × the snapshot's matching pods per node, and from the
 * placed pods' terms selecting it × their count per domain (the snapshot's term index) — never a walk
 * over every pod.
 */

import type { TermGroup, TermKind } from '../framework/term-index.js';
import type { CycleContext } from '../framework/types.js';
import { existingTermMatches, IncomingTerm, matcherOfAll } from './inter-pod-affinity-terms.js';

/** topologyKey → value → Σ weights, or 'skip' when nothing was counted (or nothing can be). */
export function scoresByTopology(
  ctx: CycleContext,
  hardWeight: number,
  ignoreExisting: boolean,
): Map<string, Map<string, number>> | 'skip' {
  const pod = ctx.pod;
  const snapshot = ctx.snapshot;
  const prefAffinity = pod.podAffinity?.preferred ?? [];
  const prefAnti = pod.podAntiAffinity?.preferred ?? [];
  const hasPref = prefAffinity.length > 0 || prefAnti.length > 0;
  if (ignoreExisting && !hasPref) return 'skip';
  const lookup = (ns: string) => ctx.namespaceLabels(ns);
  const nsLabels = ctx.namespaceLabels(pod.namespace) ?? {};
  const byKey = new Map<string, Map<string, number>>();
  let counted = false;
  const add = (key: string, v: string, w: number) => {
    let values = byKey.get(key);
    if (!values) {
      values = new Map();
      byKey.set(key, values);
    }
    values.set(v, (values.get(v) ?? 0) + w);
    counted = true;
  };
  // The pod's preferred terms: w per matching existing pod, from the snapshot's per-node counts.
  const namespaces = () => snapshot.namespacesWithPods();
  const own = (terms: typeof prefAffinity, sign: number) => {
    for (const w of terms) {
      const t = new IncomingTerm(w.term, pod.namespace, lookup, w.weight);
      const m = matcherOfAll([t], namespaces);
      if (!m) continue;
      for (const [name, c] of snapshot.podCounts(m)) {
        const v = snapshot.get(name)?.node?.labels[t.topologyKey];
        if (v !== undefined) add(t.topologyKey, v, sign * t.weight * c);
      }
    }
  };
  own(prefAffinity, 1);
  own(prefAnti, -1);
  // Existing pods' terms selecting the pod: each distinct term once, weight × its count per domain.
  const existing = (kind: TermKind, weight: (g: TermGroup) => number) => {
    for (const g of snapshot.termGroups(kind)) {
      if (!existingTermMatches(g.term, g.ownerNamespace, pod, nsLabels)) continue;
      const w = weight(g);
      for (const [v, d] of g.domains) add(g.term.topologyKey, v, w * d.count);
    }
  };
  if (hardWeight > 0) existing('requiredAffinity', () => hardWeight);
  existing('preferredAffinity', (g) => g.weight);
  existing('preferredAntiAffinity', (g) => -g.weight);
  return counted ? byKey : 'skip';
}

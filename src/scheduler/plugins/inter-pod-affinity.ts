/**
 * InterPodAffinity, as kube-scheduler v1.36 runs it in the default profile (InterPodAffinityHostnameFastPath
 * is alpha, off by default, from 1.37 — the general algorithm below is v1.36's). Term semantics (selectors,
 * namespaces, matchLabelKeys) are in inter-pod-affinity-terms.ts. P = the incoming pod, nodes = the
 * snapshot's nodes, pair(k, n) = "k=<n's label k>" (no pair when n lacks label k).
 *
 *   PreFilter:
 *     existingAnti[pair] = #{(E, t) : E on any node n, t ∈ E.required anti-affinity, t selects P (P's namespace
 *                           labels), n has t.key}                                  keyed pair(t.key, n)
 *     affinity[pair]     = #{(E, t) : E on any node n, E matches ALL of P's required affinity terms, t one of them,
 *                           n has t.key}                                             keyed pair(t.key, n)
 *     anti[pair]         = #{(E, t) : E on any node n, t ∈ P's required anti-affinity terms selects E, n has t.key}
 *     skip ⇔ existingAnti = ∅ ∧ P has no required affinity and no required anti-affinity term.
 *     Cost: not a walk over the cluster's pods. existingAnti reads the snapshot's term index (each distinct
 *     term of the placed pods once, with its count per domain: framework/term-index.ts); affinity and anti
 *     read the snapshot's matching-pod counts per node for P's terms (framework/pod-counts.ts), after
 *     resolving each term's namespaceSelector to the namespaces that hold pods — so
 *     cost ∝ distinct existing anti-affinity terms + domains they count in + nodes holding pods P's terms select.
 *   Filter(n), first failure wins, as upstream returns:
 *     1. affinity (UnschedulableAndUnresolvable): fails ⇔ ∃t: n lacks t.key, or
 *          (∃t: affinity[pair(t.key, n)] ≤ 0) ∧ ¬(affinity = ∅ ∧ P matches all its own required affinity terms)
 *        — the "first pod of a group" may go to any node carrying every topology key.
 *     2. P's anti-affinity (Unschedulable): fails ⇔ ∃t ∈ P's anti terms: n has t.key ∧ anti[pair(t.key, n)] > 0
 *     3. existing pods' anti-affinity (Unschedulable): fails ⇔ ∃ label k of n: existingAnti[pair(k, n)] > 0
 *   PreScore (skip ⇔ ignorePreferredTermsOfExistingPods ∧ P has no preferred (anti-)affinity term, or nothing
 *     was counted): over every pod E counted on a node n that has t.key:
 *       score[t.key][n's value] += w      for P's preferred affinity term (t, w) selecting E
 *                               −= w      for P's preferred anti-affinity term (t, w) selecting E
 *                               += hardPodAffinityWeight  for E's required affinity term t selecting P (weight > 0)
 *                               += w      for E's preferred affinity term (t, w) selecting P
 *                               −= w      for E's preferred anti-affinity term (t, w) selecting P
 *     (ignorePreferredTermsOfExistingPods only skips; when P has preferred terms, E's terms still count.)
 *     Read as PreFilter does: P's terms × matching pods per node, E's terms × their count per domain.
 *   Score(n) = Σ_k score[k][n's label k];  NormalizeScore: d = max − min over the scored nodes,
 *     s ← d > 0 ? ⌊100 × (s − min) / d⌋ : 0.
 * PreFilterExtensions: addPod (with cloneState) counts a pod nominated to a node in Filter's first pass there
 * (framework/runtime.ts); removePod uncounts one.
 */
import { type PodInfo, podKey } from '../../cluster/model.js';
import type {
  CycleContext,
  CycleState,
  FilterPlugin,
  FilterReason,
  NodeSnapshot,
  PreFilterPlugin,
  PreFilterResult,
  PreScorePlugin,
  ScorePlugin,
  Snapshot,
} from '../framework/types.js';
import { addReason, type NodeVerdict } from '../framework/verdict.js';
import { scoresByTopology } from './inter-pod-affinity-score.js';
import {
  bump,
  describeSelector,
  existingTermMatches,
  type IncomingTerm,
  incomingTerms,
  matcherOfAll,
  matchesAll,
  pair,
} from './inter-pod-affinity-terms.js';
import { PLUGIN } from './names.js';
import { MAX_NODE_SCORE } from './score-normalize.js';

export const REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";
export const REASON_AFFINITY = "node(s) didn't match pod affinity rules";
export const REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules";

export const FILTER_STATE_KEY = PLUGIN.InterPodAffinity;
export const SCORE_STATE_KEY = `${PLUGIN.InterPodAffinity}/score`;

export interface InterPodAffinityArgs {
  /** Weight of existing pods' required affinity terms toward the incoming pod in Score (0–100, default 1). */
  hardPodAffinityWeight?: number;
  ignorePreferredTermsOfExistingPods?: boolean;
}

/** A pod that made a pair's count positive, for the explanation. */
interface Witness {
  pod: string;
  term: string;
}

export interface InterPodAffinityFilterState {
  pod: PodInfo;
  nsLabels: Record<string, string>;
  affinity: IncomingTerm[];
  anti: IncomingTerm[];
  /** P matches all of its own required affinity terms. */
  selfMatch: boolean;
  affinityCounts: Map<string, number>;
  antiCounts: Map<string, number>;
  existingAntiCounts: Map<string, number>;
  /** Topology keys with an existingAntiCounts entry: Filter looks only these up on the node. */
  existingAntiKeys: Set<string>;
  antiWitness: Map<string, Witness>;
  /** Pair → a node whose pods made antiCounts positive: the witness is looked up there when needed. */
  antiSources: Map<string, string>;
  existingWitness: Map<string, Witness>;
}

export interface InterPodAffinityScoreState {
  /** topologyKey → value → Σ weights. */
  byKey: Map<string, Map<string, number>>;
}

function witness(map: Map<string, Witness>, key: string, pod: PodInfo, term: string, delta: number): void {
  const k = podKey(pod);
  if (delta > 0) {
    if (!map.has(key)) map.set(key, { pod: k, term });
  } else if (map.get(key)?.pod === k) map.delete(key);
}

/** existingAnti += delta for E's required anti-affinity terms selecting P. */
function countExistingAnti(
  s: InterPodAffinityFilterState,
  e: PodInfo,
  labels: Record<string, string>,
  delta: number,
): void {
  for (const t of e.podAntiAffinity?.required ?? []) {
    const v = labels[t.topologyKey];
    if (v === undefined || !existingTermMatches(t, e.namespace, s.pod, s.nsLabels)) continue;
    const k = pair(t.topologyKey, v);
    bump(s.existingAntiCounts, k, delta);
    s.existingAntiKeys.add(t.topologyKey);
    witness(s.existingWitness, k, e, describeSelector(t.labelSelector), delta);
  }
}

/** affinity / anti += delta for E against P's required terms. */
function countIncoming(
  s: InterPodAffinityFilterState,
  e: PodInfo,
  labels: Record<string, string>,
  delta: number,
): void {
  if (matchesAll(s.affinity, e)) {
    for (const t of s.affinity) {
      const v = labels[t.topologyKey];
      if (v !== undefined) bump(s.affinityCounts, pair(t.topologyKey, v), delta);
    }
  }
  for (const t of s.anti) {
    const v = labels[t.topologyKey];
    if (v === undefined || !t.matches(e)) continue;
    const k = pair(t.topologyKey, v);
    bump(s.antiCounts, k, delta);
    witness(s.antiWitness, k, e, t.description, delta);
    if (delta < 0) s.antiSources.delete(k);
  }
}

function positive(counts: Map<string, number>, key: string): boolean {
  return (counts.get(key) ?? 0) > 0;
}

/** Why the node fails P's required affinity, or undefined. */
function affinityProblem(s: InterPodAffinityFilterState, labels: Record<string, string>): string | undefined {
  let empty: string | undefined;
  for (const t of s.affinity) {
    const v = labels[t.topologyKey];
    if (v === undefined) {
      return `node has no label ${t.topologyKey}, the topology key of required affinity term ${t.description}`;
    }
    const k = pair(t.topologyKey, v);
    if (empty === undefined && !positive(s.affinityCounts, k)) empty = `${k} (term ${t.description})`;
  }
  if (empty === undefined) return undefined;
  if (s.affinityCounts.size === 0) {
    if (s.selfMatch) return undefined;
    const terms = s.affinity.map((t) => t.description).join('; ');
    return `no pod matches all required affinity terms (${terms}) and the pod does not match them itself`;
  }
  return `no pod matching all required affinity terms runs in topology ${empty}`;
}

/** The first pod on the node PreFilter saw contributing to pair `k` that term `t` selects. */
function antiWitness(
  s: InterPodAffinityFilterState,
  snapshot: Snapshot,
  t: IncomingTerm,
  k: string,
): Witness | undefined {
  let w = s.antiWitness.get(k);
  const source = s.antiSources.get(k);
  if (w || source === undefined) return w;
  for (const [key, e] of snapshot.get(source)?.pods ?? []) {
    if (!t.matches(e)) continue;
    w = { pod: key, term: t.description };
    s.antiWitness.set(k, w);
    break;
  }
  return w;
}

function antiProblem(
  s: InterPodAffinityFilterState,
  snapshot: Snapshot,
  labels: Record<string, string>,
): string | undefined {
  if (s.antiCounts.size === 0) return undefined;
  for (const t of s.anti) {
    const v = labels[t.topologyKey];
    if (v === undefined) continue;
    const k = pair(t.topologyKey, v);
    if (!positive(s.antiCounts, k)) continue;
    const w = antiWitness(s, snapshot, t, k);
    return `pod ${w?.pod ?? '(removed)'} on topology ${k} matches anti-affinity term ${w?.term ?? t.description}`;
  }
  return undefined;
}

function existingAntiProblem(
  s: InterPodAffinityFilterState,
  labels: Record<string, string>,
): string | undefined {
  if (s.existingAntiCounts.size === 0) return undefined;
  for (const key of s.existingAntiKeys) {
    const v = labels[key];
    if (v === undefined) continue;
    const k = pair(key, v);
    if (!positive(s.existingAntiCounts, k)) continue;
    const w = s.existingWitness.get(k);
    return `pod ${w?.pod ?? '(removed)'} on topology ${k} has required anti-affinity term ${w?.term ?? '?'} matching this pod`;
  }
  return undefined;
}

function reason(code: string, text: string, detail: string, unresolvable: boolean): FilterReason {
  const r: FilterReason = { plugin: PLUGIN.InterPodAffinity, code, reason: text, detail };
  if (unresolvable) r.unresolvable = true;
  return r;
}

export interface InterPodAffinityPlugin extends PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin {
  /** PreFilterExtensions.AddPod: counts `pod` (nominated to `node`) on `node` as if it were there. */
  addPod(state: CycleState, ctx: CycleContext, pod: PodInfo, node: NodeSnapshot): void;
  cloneState(from: CycleState, to: CycleState): void;
  /** PreFilterExtensions.RemovePod: uncounts `pod` (a victim) from `node`. */
  removePod(state: CycleState, ctx: CycleContext, pod: PodInfo, node: NodeSnapshot): void;
  normalizeScore(state: CycleState, ctx: CycleContext, scores: Float64Array): void;
}

export function interPodAffinity(args: InterPodAffinityArgs = {}): InterPodAffinityPlugin {
  const hardWeight = args.hardPodAffinityWeight ?? 1;
  if (!Number.isInteger(hardWeight) || hardWeight < 0 || hardWeight > 100) {
    throw new RangeError(`hardPodAffinityWeight: must be an integer in 0–100, got ${hardWeight}`);
  }
  const ignoreExisting = args.ignorePreferredTermsOfExistingPods ?? false;

  function update(state: CycleState, pod: PodInfo, node: NodeSnapshot, delta: number): void {
    const s = state.read<InterPodAffinityFilterState>(FILTER_STATE_KEY);
    const labels = node.node?.labels;
    if (!s || !labels) return;
    countExistingAnti(s, pod, labels, delta);
    countIncoming(s, pod, labels, delta);
  }

  return {
    name: PLUGIN.InterPodAffinity,

    preFilter(state: CycleState, ctx: CycleContext): PreFilterResult | undefined {
      const pod = ctx.pod;
      const snapshot = ctx.snapshot;
      const nsLabels = (ns: string) => ctx.namespaceLabels(ns);
      const s: InterPodAffinityFilterState = {
        pod,
        nsLabels: ctx.namespaceLabels(pod.namespace) ?? {},
        affinity: incomingTerms(pod.podAffinity?.required, pod, nsLabels),
        anti: incomingTerms(pod.podAntiAffinity?.required, pod, nsLabels),
        selfMatch: false,
        affinityCounts: new Map(),
        antiCounts: new Map(),
        existingAntiCounts: new Map(),
        existingAntiKeys: new Set(),
        antiWitness: new Map(),
        antiSources: new Map(),
        existingWitness: new Map(),
      };
      // Existing pods' required anti-affinity: each distinct term once, with its counts per domain.
      for (const g of snapshot.termGroups('requiredAntiAffinity')) {
        if (!existingTermMatches(g.term, g.ownerNamespace, pod, s.nsLabels)) continue;
        const key = g.term.topologyKey;
        s.existingAntiKeys.add(key);
        for (const [v, d] of g.domains) {
          const k = pair(key, v);
          bump(s.existingAntiCounts, k, d.count);
          if (!s.existingWitness.has(k)) {
            const first = d.pods.keys().next().value as string;
            s.existingWitness.set(k, { pod: first, term: describeSelector(g.term.labelSelector) });
          }
        }
      }
      // The pod's own terms against the existing pods: matching pods per node, kept by the snapshot.
      const namespaces = () => snapshot.namespacesWithPods();
      const all = matcherOfAll(s.affinity, namespaces);
      if (all) {
        for (const [name, c] of snapshot.podCounts(all)) {
          const labels = snapshot.get(name)?.node?.labels;
          if (!labels) continue;
          for (const t of s.affinity) {
            const v = labels[t.topologyKey];
            if (v !== undefined) bump(s.affinityCounts, pair(t.topologyKey, v), c);
          }
        }
      }
      for (const t of s.anti) {
        const m = matcherOfAll([t], namespaces);
        if (!m) continue;
        for (const [name, c] of snapshot.podCounts(m)) {
          const v = snapshot.get(name)?.node?.labels[t.topologyKey];
          if (v === undefined) continue;
          const k = pair(t.topologyKey, v);
          bump(s.antiCounts, k, c);
          if (!s.antiSources.has(k)) s.antiSources.set(k, name);
        }
      }
      const ownTerms = s.affinity.length > 0 || s.anti.length > 0;
      if (s.existingAntiCounts.size === 0 && !ownTerms) return { skip: true };
      s.selfMatch = matchesAll(s.affinity, pod);
      state.write(FILTER_STATE_KEY, s);
      return undefined;
    },

    filter(state: CycleState, ctx: CycleContext, node: NodeSnapshot, verdict: NodeVerdict): void {
      const s = state.read<InterPodAffinityFilterState>(FILTER_STATE_KEY);
      if (!s) return;
      const labels = node.node?.labels ?? {};
      const aff = affinityProblem(s, labels);
      if (aff !== undefined) {
        addReason(verdict, reason('AffinityRulesNotMatch', REASON_AFFINITY, aff, true));
        return;
      }
      const anti = antiProblem(s, ctx.snapshot, labels);
      if (anti !== undefined) {
        addReason(verdict, reason('AntiAffinityRulesNotMatch', REASON_ANTI_AFFINITY, anti, false));
        return;
      }
      const existing = existingAntiProblem(s, labels);
      if (existing !== undefined) {
        addReason(
          verdict,
          reason('ExistingAntiAffinityRulesNotMatch', REASON_EXISTING_ANTI_AFFINITY, existing, false),
        );
      }
    },

    addPod(state, _ctx, pod, node) {
      update(state, pod, node, 1);
    },

    cloneState(from, to) {
      const s = from.read<InterPodAffinityFilterState>(FILTER_STATE_KEY);
      if (!s) return;
      to.write(FILTER_STATE_KEY, {
        ...s,
        affinityCounts: new Map(s.affinityCounts),
        antiCounts: new Map(s.antiCounts),
        existingAntiCounts: new Map(s.existingAntiCounts),
        existingAntiKeys: new Set(s.existingAntiKeys),
        antiWitness: new Map(s.antiWitness),
        antiSources: new Map(s.antiSources),
        existingWitness: new Map(s.existingWitness),
      } satisfies InterPodAffinityFilterState);
    },

    removePod(state, _ctx, pod, node) {
      update(state, pod, node, -1);
    },

    preScore(state: CycleState, ctx: CycleContext): 'skip' | undefined {
      const byKey = scoresByTopology(ctx, hardWeight, ignoreExisting);
      if (byKey === 'skip') return 'skip';
      state.write(SCORE_STATE_KEY, { byKey } satisfies InterPodAffinityScoreState);
      return undefined;
    },

    score(state: CycleState, _ctx: CycleContext, node: NodeSnapshot): number {
      const s = state.read<InterPodAffinityScoreState>(SCORE_STATE_KEY);
      const labels = node.node?.labels;
      if (!s || !labels) return 0;
      let total = 0;
      for (const [key, values] of s.byKey) {
        const v = labels[key];
        if (v !== undefined) total += values.get(v) ?? 0;
      }
      return total;
    },

    normalizeScore(state: CycleState, _ctx: CycleContext, scores: Float64Array): void {
      const s = state.read<InterPodAffinityScoreState>(SCORE_STATE_KEY);
      if (!s || s.byKey.size === 0) return;
      let min = Number.POSITIVE_INFINITY;
      let max = Number.NEGATIVE_INFINITY;
      for (const x of scores) {
        if (x > max) max = x;
        if (x < min) min = x;
      }
      const diff = max - min;
      for (let i = 0; i < scores.length; i++) {
        scores[i] = diff > 0 ? Math.trunc(MAX_NODE_SCORE * (((scores[i] as number) - min) / diff)) : 0;
      }
    },
  };
}

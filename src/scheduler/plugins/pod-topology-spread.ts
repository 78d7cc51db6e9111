/**
 * PodTopologySpread, as kube-scheduler v1.36 runs it in the default profile.
 *
 * Constraints: the pod's own topologySpreadConstraints; when it has none at all, the default constraints
 *   (System defaulting: hostname maxSkew 3 + zone maxSkew 5, both ScheduleAnyway; List: args.defaultConstraints).
 *   Default constraints get the selector helper.DefaultSelector builds from the Services,
 *   ReplicationControllers, ReplicaSets and StatefulSets selecting the pod (default-selector.ts, from the
 *   shared cache's copies of them), and no constraint at all when that is empty.
 *   Default constraints always use that selector (upstream overwrites the selector, so their matchLabelKeys
 *   are ignored too). Selector of a pod constraint: labelSelector with `key In (pod's value)` ANDed for every
 *   matchLabelKeys key the pod has — the API server has merged these since v1.34
 *   (MatchLabelKeysInPodTopologySpreadSelectorMerge) and the v1.36 scheduler still merges them, which is
 *   idempotent. A nil labelSelector selects nothing (matchLabelKeys are not merged into it); an empty `{}`
 *   one counts no existing pod in v1.36 (countPodsMatchSelector's `selector.Empty()` short-circuit, fixed
 *   upstream after 1.36 by kubernetes#141340) while the incoming pod still matches it.
 * Counted pods: on the node, same namespace as the incoming pod, not terminating (deletionTimestamp), selected.
 * Eligible node for constraint c: has every constraint's topologyKey ∧ (c.nodeAffinityPolicy = Ignore ∨
 *   nodeSelector/required affinity match) ∧ (c.nodeTaintsPolicy = Ignore ∨ no untolerated NoSchedule/NoExecute).
 *
 *   PreFilter (DoNotSchedule constraints; none → skip):
 *     count[c][v] = Σ counted pods over eligible nodes with label c.key = v;   min[c] = min_v count[c][v]
 *     over the eligible domains D[c] (0 while some domain has no matching pod; ∞ when D[c] = ∅).
 *     Cost: the counted pods per node come from the snapshot's counts for c's selector (only nodes holding
 *     matching pods are read: framework/pod-counts.ts); D[c] is cached per node generation and pod shape
 *     (node affinity, tolerations) in pod-topology-spread-constraints.ts.
 *   Filter: node lacks c.key → "missing required label" (unresolvable); otherwise, with
 *     globalMin = |{v}| < c.minDomains (default 1) ? 0 : min[c],  self = pod matches c's selector ? 1 : 0,
 *     skew = count[c][node.labels[c.key]] + self − globalMin;   fails ⇔ skew > c.maxSkew (first constraint wins).
 *   PreScore (ScheduleAnyway constraints; none → 'skip'): requireAll = pod has own constraints ∨ not System;
 *     ignored = feasible nodes lacking a key (only when requireAll); domains[c] = {labels[c.key] ?? ''} of the
 *     other feasible nodes (hostname: one per node, counted on that node alone, policies not applied);
 *     count[c][v] = Σ counted pods over all eligible nodes (requireAll → having all keys) whose v ∈ domains[c]
 *                   (again read from the snapshot's counts: cost ∝ feasible nodes + nodes holding matching pods);
 *     weight[c] = ln(|domains[c]| + 2), hostname: ln(#feasible − #ignored + 2).
 *   Score(n) = ignored ? 0 : round(Σ_{c: n has c.key} count[c][n's value] × weight[c] + (c.maxSkew − 1)).
 *   NormalizeScore: over non-ignored nodes, s = max = 0 ? 100 : ⌊100 × (max + min − s) / max⌋; ignored → 0.
 */
import type { PodInfo, TopologySpreadConstraint } from '../../cluster/model.js';
import type {
  CycleContext,
  CycleState,
  FilterPlugin,
  NodeSnapshot,
  PreFilterPlugin,
  PreScorePlugin,
  ScorePlugin,
} from '../framework/types.js';
import { addReason, type NodeVerdict } from '../framework/verdict.js';
import { NO_WORKLOADS, type WorkloadSelectors } from './default-selector.js';
import { PLUGIN } from './names.js';
import {
  type Constraint,
  constraintsOf,
  EligibleDomains,
  hasAllKeys,
  Inclusion,
  LABEL_HOSTNAME,
  LABEL_ZONE,
  labelOf,
  matchingPerNode,
} from './pod-topology-spread-constraints.js';
import { MAX_NODE_SCORE } from './score-normalize.js';

export { LABEL_HOSTNAME, LABEL_ZONE };

export const REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const REASON_NODE_LABEL_NOT_MATCH = `${REASON_CONSTRAINTS_NOT_MATCH} (missing required label)`;

function softDefault(topologyKey: string, maxSkew: number): TopologySpreadConstraint {
  return {
    maxSkew,
    topologyKey,
    whenUnsatisfiable: 'ScheduleAnyway',
    nodeAffinityPolicy: 'Honor',
    nodeTaintsPolicy: 'Ignore',
    matchLabelKeys: [],
  };
}

/** kube-scheduler's systemDefaultConstraints. */
export const SYSTEM_DEFAULT_CONSTRAINTS: readonly TopologySpreadConstraint[] = [
  softDefault(LABEL_HOSTNAME, 3),
  softDefault(LABEL_ZONE, 5),
];

export interface PodTopologySpreadArgs {
  /** Used with defaultingType 'List' (upstream rejects them with 'System'; here they are ignored). */
  defaultConstraints?: TopologySpreadConstraint[];
  /** Default 'System', as in kube-scheduler's default configuration. */
  defaultingType?: 'System' | 'List';
}

const FILTER_STATE = `${PLUGIN.PodTopologySpread}/preFilter`;
const SCORE_STATE = `${PLUGIN.PodTopologySpread}/preScore`;

interface FilterState {
  constraints: Constraint[];
  /** Per constraint: topology value → matching pods over its eligible nodes (domains with none absent). */
  counts: Map<string, number>[];
  /** Per constraint: how many eligible domains there are. */
  domains: number[];
  /** Per constraint: the smallest count over the eligible domains (Infinity when there is none). */
  min: number[];
  /** Per constraint: the incoming pod matches its selector. */
  self: boolean[];
}

interface ScoreState {
  constraints: Constraint[];
  /** The nodes PreScore saw, in the order Score/NormalizeScore see them. */
  nodes: readonly NodeSnapshot[];
  ignored: Set<string>;
  /** Per constraint: topology value (node name for hostname) → matching pods. */
  counts: Map<string, number>[];
  weights: number[];
}

export type PodTopologySpreadPlugin = PreFilterPlugin &
  FilterPlugin &
  PreScorePlugin &
  ScorePlugin &
  Required<Pick<ScorePlugin, 'normalizeScore'>>;

/** The smallest count over `domains` eligible domains: 0 while one has no matching pod, ∞ when none. */
function minimumOf(counts: ReadonlyMap<string, number>, domains: number): number {
  let low = domains > counts.size ? 0 : Number.POSITIVE_INFINITY;
  for (const x of counts.values()) if (x < low) low = x;
  return low;
}

/**
 * Upstream's updateWithPod: `pod` counts on `n` when it is in the incoming pod's namespace, n has every
 * constraint's key, and per constraint the selector picks it and n passes the incoming pod's inclusion
 * policies. Its domain's count moves by `delta`; the minimum follows (a rise matters only to a domain
 * that held it). As upstream, neither direction looks at deletionTimestamp, though PreFilter counts no
 * terminating pod, nor at countPodsMatchSelector's empty-selector short-circuit (a `{}` selector counts
 * an added pod though it counts no placed one).
 */
function updateWithPod(state: CycleState, ctx: CycleContext, pod: PodInfo, n: NodeSnapshot, delta: 1 | -1) {
  const s = state.read<FilterState>(FILTER_STATE);
  const node = n.node;
  if (!s || !node || pod.namespace !== ctx.pod.namespace || !hasAllKeys(node.labels, s.constraints)) return;
  const inclusion = new Inclusion(ctx.pod, node);
  for (let i = 0; i < s.constraints.length; i++) {
    const c = s.constraints[i] as Constraint;
    if (!c.selector.matches(pod) || !inclusion.admits(c)) continue;
    const counts = s.counts[i] as Map<string, number>;
    const v = node.labels[c.key] as string;
    const before = counts.get(v) ?? 0;
    counts.set(v, before + delta);
    const min = s.min[i] as number;
    if (delta < 0 ? before + delta < min : before === min)
      s.min[i] = minimumOf(counts, s.domains[i] as number);
  }
}

/**
 * `workloads`: the Services, ReplicationControllers, ReplicaSets and StatefulSets default constraints
 * take their selector from (none: no pod gets default constraints).
 */
export function podTopologySpread(
  args: PodTopologySpreadArgs = {},
  workloads: WorkloadSelectors = NO_WORKLOADS,
): PodTopologySpreadPlugin {
  const systemDefaulted = (args.defaultingType ?? 'System') === 'System';
  const defaults = systemDefaulted ? SYSTEM_DEFAULT_CONSTRAINTS : (args.defaultConstraints ?? []);
  const eligibleDomains = new EligibleDomains();

  function reject(verdict: NodeVerdict, code: string, reason: string, detail: string, unresolvable: boolean) {
    addReason(verdict, { plugin: PLUGIN.PodTopologySpread, code, reason, detail, unresolvable });
  }

  return {
    name: PLUGIN.PodTopologySpread,

    preFilter(state, ctx) {
      const pod = ctx.pod;
      const snapshot = ctx.snapshot;
      const constraints = constraintsOf(pod, 'DoNotSchedule', defaults, workloads);
      if (constraints.length === 0) return { skip: true };
      const counts: Map<string, number>[] = [];
      const domains: number[] = [];
      const min: number[] = [];
      for (const c of constraints) {
        const eligible = eligibleDomains.of(snapshot, pod, constraints, c);
        // Only nodes holding matching pods can add to a count: read those from the snapshot's counts.
        const m = new Map<string, number>();
        for (const [name, k] of matchingPerNode(snapshot, c.selector, pod.namespace)) {
          const node = snapshot.get(name)?.node;
          if (!node || !hasAllKeys(node.labels, constraints) || !new Inclusion(pod, node).admits(c)) continue;
          const v = node.labels[c.key] as string;
          m.set(v, (m.get(v) ?? 0) + k);
        }
        counts.push(m);
        domains.push(eligible.size);
        min.push(minimumOf(m, eligible.size));
      }
      const self = constraints.map((c) => c.selector.matches(pod));
      state.write(FILTER_STATE, { constraints, counts, domains, min, self } satisfies FilterState);
      return undefined;
    },

    filter(state, _ctx, n, verdict) {
      const s = state.read<FilterState>(FILTER_STATE);
      const node = n.node;
      if (!s || !node) return;
      for (let i = 0; i < s.constraints.length; i++) {
        const c = s.constraints[i] as Constraint;
        const v = labelOf(node.labels, c.key);
        if (v === undefined) {
          const detail = `node has no label ${c.key}`;
          reject(verdict, 'TopologySpreadMissingLabel', REASON_NODE_LABEL_NOT_MATCH, detail, true);
          return;
        }
        const counts = s.counts[i] as Map<string, number>;
        const domains = s.domains[i] as number;
        const fewDomains = domains < c.minDomains;
        const globalMin = fewDomains ? 0 : (s.min[i] as number);
        const self = s.self[i] ? 1 : 0;
        const matching = counts.get(v) ?? 0;
        const skew = matching + self - globalMin;
        if (skew > c.maxSkew) {
          const why = fewDomains ? ` (${domains} eligible domain(s) < minDomains ${c.minDomains})` : '';
          const detail =
            `${c.key}=${v}: ${matching} matching pods + ${self} − min ${globalMin}${why} = ${skew} ` +
            `> maxSkew ${c.maxSkew}`;
          reject(verdict, 'TopologySpreadSkew', REASON_CONSTRAINTS_NOT_MATCH, detail, false);
          return;
        }
      }
    },

    // A pod nominated to `n` (priority ≥ the incoming pod's) counts there for the first of Filter's two
    // passes on n, and a preemption dry run's victim put back counts again: upstream's updateWithPod(+1).
    addPod(state, ctx, pod, n) {
      updateWithPod(state, ctx, pod, n, 1);
    },

    // A victim a preemption dry run takes off `n` no longer counts: updateWithPod(−1).
    removePod(state, ctx, pod, n) {
      updateWithPod(state, ctx, pod, n, -1);
    },

    cloneState(from, to) {
      const s = from.read<FilterState>(FILTER_STATE);
      if (!s) return;
      to.write(FILTER_STATE, { ...s, counts: s.counts.map((m) => new Map(m)), min: s.min.slice() });
    },

    preScore(state, ctx, nodes) {
      const snapshot = ctx.snapshot;
      if (snapshot.size === 0) return 'skip';
      const pod = ctx.pod;
      const constraints = constraintsOf(pod, 'ScheduleAnyway', defaults, workloads);
      if (constraints.length === 0) return 'skip';
      // Only the pod's own (or List) constraints require every key: System defaults still spread by
      // hostname across nodes without a zone label.
      const requireAll = pod.topologySpreadConstraints.length > 0 || !systemDefaulted;
      const matching = constraints.map((c) => matchingPerNode(snapshot, c.selector, pod.namespace));
      const ignored = new Set<string>();
      const counts = constraints.map(() => new Map<string, number>());
      for (const n of nodes) {
        const labels = n.node?.labels ?? {};
        if (requireAll && !hasAllKeys(labels, constraints)) {
          ignored.add(n.name);
          continue;
        }
        for (let i = 0; i < constraints.length; i++) {
          const c = constraints[i] as Constraint;
          const m = counts[i] as Map<string, number>;
          if (c.hostname) m.set(n.name, (matching[i] as ReadonlyMap<string, number>).get(n.name) ?? 0);
          else m.set(labelOf(labels, c.key) ?? '', 0);
        }
      }
      const weights = constraints.map((c, i) =>
        Math.log((c.hostname ? nodes.length - ignored.size : (counts[i] as Map<string, number>).size) + 2),
      );
      // Other keys: every eligible node's matching pods count toward its domain, if a feasible node has
      // that domain — only nodes holding matching pods can add anything.
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i] as Constraint;
        if (c.hostname) continue;
        const m = counts[i] as Map<string, number>;
        for (const [name, k] of matching[i] as ReadonlyMap<string, number>) {
          const node = snapshot.get(name)?.node;
          if (!node || (requireAll && !hasAllKeys(node.labels, constraints))) continue;
          const v = labelOf(node.labels, c.key) ?? '';
          const sofar = m.get(v);
          if (sofar === undefined || !new Inclusion(pod, node).admits(c)) continue;
          m.set(v, sofar + k);
        }
      }
      state.write(SCORE_STATE, { constraints, nodes, ignored, counts, weights } satisfies ScoreState);
      return undefined;
    },

    score(state, _ctx, n) {
      const s = state.read<ScoreState>(SCORE_STATE);
      const node = n.node;
      if (!s || !node || s.ignored.has(n.name)) return 0;
      let score = 0;
      for (let i = 0; i < s.constraints.length; i++) {
        const c = s.constraints[i] as Constraint;
        const v = labelOf(node.labels, c.key);
        if (v === undefined) continue;
        const cnt = (s.counts[i] as Map<string, number>).get(c.hostname ? n.name : v) ?? 0;
        score += cnt * (s.weights[i] as number) + (c.maxSkew - 1);
      }
      return Math.round(score);
    },

    normalizeScore(state, _ctx, scores) {
      const s = state.read<ScoreState>(SCORE_STATE);
      if (!s) return;
      const aligned = s.nodes.length === scores.length;
      const ignored = (i: number) => aligned && s.ignored.has((s.nodes[i] as NodeSnapshot).name);
      let min = Number.POSITIVE_INFINITY;
      let max = 0;
      for (let i = 0; i < scores.length; i++) {
        if (ignored(i)) continue;
        const v = scores[i] as number;
        if (v < min) min = v;
        if (v > max) max = v;
      }
      for (let i = 0; i < scores.length; i++) {
        if (ignored(i)) scores[i] = 0;
        else if (max === 0) scores[i] = MAX_NODE_SCORE;
        else scores[i] = Math.floor((MAX_NODE_SCORE * (max + min - (scores[i] as number))) / max);
      }
    },
  };
}

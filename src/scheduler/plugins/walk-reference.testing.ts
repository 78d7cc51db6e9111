/**
 * The from-scratch answers of InterPodAffinity and PodTopologySpread, for the equivalence test: each
 * formula of the plugins' header comments evaluated by walking every node and every pod of the snapshot,
 * as the plugins did before they read the snapshot's incremental counts. No cache, no index — slow and
 * obviously right, so that the cached plugins can be compared with it over random clusters.
 */
import type { PodInfo, TopologySpreadConstraint } from '../../cluster/model.js';
import type { NodeSnapshot, Snapshot } from '../framework/snapshot.js';
import { NO_WORKLOADS, type WorkloadSelectors } from './default-selector.js';
import { existingTermMatches, incomingTerms, matchesAll, pair } from './inter-pod-affinity-terms.js';
import {
  type Constraint,
  constraintsOf,
  hasAllKeys,
  Inclusion,
  labelOf,
} from './pod-topology-spread-constraints.js';

type NsLabels = (ns: string) => Record<string, string> | undefined;

function add(m: Map<string, number>, k: string, d: number): void {
  m.set(k, (m.get(k) ?? 0) + d);
}

function* placed(snapshot: Snapshot): Iterable<[NodeSnapshot, Record<string, string>, PodInfo]> {
  for (const n of snapshot.list()) {
    const labels = n.node?.labels;
    if (labels) for (const e of n.pods.values()) yield [n, labels, e];
  }
}

export interface InterPodAffinityWalk {
  /** Per node of snapshot.list(): the first failure's code ('' = passes). */
  codes: string[];
  /** PreFilter's counts per topology pair, positive ones only. */
  existingAnti: Record<string, number>;
  anti: Record<string, number>;
  affinity: Record<string, number>;
}

/** InterPodAffinity PreFilter and Filter, or 'skip'. */
export function interPodAffinityFilterByWalk(
  snapshot: Snapshot,
  pod: PodInfo,
  nsLabels: NsLabels,
): InterPodAffinityWalk | 'skip' {
  const own = nsLabels(pod.namespace) ?? {};
  const affinity = incomingTerms(pod.podAffinity?.required, pod, nsLabels);
  const anti = incomingTerms(pod.podAntiAffinity?.required, pod, nsLabels);
  const existing = new Map<string, number>();
  const aff = new Map<string, number>();
  const antiCounts = new Map<string, number>();
  for (const [, labels, e] of placed(snapshot)) {
    for (const t of e.podAntiAffinity?.required ?? []) {
      const v = labels[t.topologyKey];
      if (v !== undefined && existingTermMatches(t, e.namespace, pod, own))
        add(existing, pair(t.topologyKey, v), 1);
    }
    if (matchesAll(affinity, e)) {
      for (const t of affinity) {
        const v = labels[t.topologyKey];
        if (v !== undefined) add(aff, pair(t.topologyKey, v), 1);
      }
    }
    for (const t of anti) {
      const v = labels[t.topologyKey];
      if (v !== undefined && t.matches(e)) add(antiCounts, pair(t.topologyKey, v), 1);
    }
  }
  if (existing.size === 0 && affinity.length === 0 && anti.length === 0) return 'skip';
  const selfMatch = matchesAll(affinity, pod);
  const codes = snapshot.list().map((n) => {
    const labels = n.node?.labels ?? {};
    let missing = false;
    let empty = false;
    for (const t of affinity) {
      const v = labels[t.topologyKey];
      if (v === undefined) missing = true;
      else if ((aff.get(pair(t.topologyKey, v)) ?? 0) <= 0) empty = true;
    }
    if (missing || (empty && !(aff.size === 0 && selfMatch))) return 'AffinityRulesNotMatch';
    for (const t of anti) {
      const v = labels[t.topologyKey];
      if (v !== undefined && (antiCounts.get(pair(t.topologyKey, v)) ?? 0) > 0)
        return 'AntiAffinityRulesNotMatch';
    }
    for (const [k, v] of Object.entries(labels)) {
      if ((existing.get(pair(k, v)) ?? 0) > 0) return 'ExistingAntiAffinityRulesNotMatch';
    }
    return '';
  });
  const record = (m: Map<string, number>) => Object.fromEntries([...m].filter(([, n]) => n > 0));
  return { codes, existingAnti: record(existing), anti: record(antiCounts), affinity: record(aff) };
}

/** InterPodAffinity raw Score per node (before NormalizeScore), or 'skip'. */
export function interPodAffinityScoreByWalk(
  snapshot: Snapshot,
  pod: PodInfo,
  nsLabels: NsLabels,
  hardWeight = 1,
): number[] | 'skip' {
  const own = nsLabels(pod.namespace) ?? {};
  const score = new Map<string, number>();
  let counted = false;
  const put = (key: string, labels: Record<string, string>, w: number) => {
    const v = labels[key];
    if (v === undefined) return;
    add(score, pair(key, v), w);
    counted = true;
  };
  const terms = (list: { term: Parameters<typeof existingTermMatches>[0]; weight: number }[] | undefined) =>
    (list ?? []).map((w) => ({ t: incomingTerms([w.term], pod, nsLabels)[0], w: w.weight }));
  const prefAffinity = terms(pod.podAffinity?.preferred);
  const prefAnti = terms(pod.podAntiAffinity?.preferred);
  for (const [, labels, e] of placed(snapshot)) {
    for (const { t, w } of prefAffinity) if (t?.matches(e)) put(t.topologyKey, labels, w);
    for (const { t, w } of prefAnti) if (t?.matches(e)) put(t.topologyKey, labels, -w);
    for (const t of hardWeight > 0 ? (e.podAffinity?.required ?? []) : []) {
      if (existingTermMatches(t, e.namespace, pod, own)) put(t.topologyKey, labels, hardWeight);
    }
    for (const w of e.podAffinity?.preferred ?? []) {
      if (existingTermMatches(w.term, e.namespace, pod, own)) put(w.term.topologyKey, labels, w.weight);
    }
    for (const w of e.podAntiAffinity?.preferred ?? []) {
      if (existingTermMatches(w.term, e.namespace, pod, own)) put(w.term.topologyKey, labels, -w.weight);
    }
  }
  if (!counted) return 'skip';
  const keys = new Set([...score.keys()].map((k) => k.slice(0, k.indexOf('='))));
  return snapshot.list().map((n) => {
    let total = 0;
    for (const k of keys) {
      const v = n.node?.labels[k];
      if (v !== undefined) total += score.get(pair(k, v)) ?? 0;
    }
    return total;
  });
}

function countMatching(n: NodeSnapshot, c: Constraint, namespace: string): number {
  if (c.selector.countsNone) return 0;
  let count = 0;
  for (const p of n.pods.values())
    if (!p.deleting && p.namespace === namespace && c.selector.matches(p)) count++;
  return count;
}

export interface PodTopologySpreadWalk {
  /** Per node of snapshot.list(): the first failure's code ('' = passes). */
  codes: string[];
  /** Per constraint: matching pods per eligible domain (positive ones), eligible domains, their minimum. */
  constraints: { counts: Record<string, number>; domains: number; min: number }[];
}

/** PodTopologySpread PreFilter and Filter, or 'skip'. */
export function podTopologySpreadFilterByWalk(
  snapshot: Snapshot,
  pod: PodInfo,
  defaults: readonly TopologySpreadConstraint[],
  workloads: WorkloadSelectors = NO_WORKLOADS,
): PodTopologySpreadWalk | 'skip' {
  const cs = constraintsOf(pod, 'DoNotSchedule', defaults, workloads);
  if (cs.length === 0) return 'skip';
  const counts = cs.map((c) => {
    const m = new Map<string, number>();
    for (const n of snapshot.list()) {
      const node = n.node;
      if (!node || !hasAllKeys(node.labels, cs) || !new Inclusion(pod, node).admits(c)) continue;
      add(m, node.labels[c.key] as string, countMatching(n, c, pod.namespace));
    }
    return m;
  });
  const codes = snapshot.list().map((n) => {
    const labels = n.node?.labels ?? {};
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i] as Constraint;
      const m = counts[i] as Map<string, number>;
      const v = labelOf(labels, c.key);
      if (v === undefined) return 'TopologySpreadMissingLabel';
      const min = m.size < c.minDomains ? 0 : Math.min(...m.values());
      if ((m.get(v) ?? 0) + (c.selector.matches(pod) ? 1 : 0) - min > c.maxSkew) return 'TopologySpreadSkew';
    }
    return '';
  });
  const constraints = counts.map((m) => ({
    counts: Object.fromEntries([...m].filter(([, n]) => n > 0)),
    domains: m.size,
    min: Math.min(...m.values()),
  }));
  return { codes, constraints };
}

/** PodTopologySpread raw Score per node of `feasible` (before NormalizeScore), or 'skip'. */
export function podTopologySpreadScoreByWalk(
  snapshot: Snapshot,
  pod: PodInfo,
  feasible: readonly NodeSnapshot[],
  defaults: readonly TopologySpreadConstraint[],
  systemDefaulted: boolean,
  workloads: WorkloadSelectors = NO_WORKLOADS,
): number[] | 'skip' {
  const cs = constraintsOf(pod, 'ScheduleAnyway', defaults, workloads);
  if (snapshot.size === 0 || cs.length === 0) return 'skip';
  const requireAll = pod.topologySpreadConstraints.length > 0 || !systemDefaulted;
  const counted = (n: NodeSnapshot) => !requireAll || hasAllKeys(n.node?.labels ?? {}, cs);
  const scored = feasible.filter(counted);
  return feasible.map((n) => {
    if (!counted(n)) return 0;
    const labels = n.node?.labels ?? {};
    let score = 0;
    for (const c of cs) {
      const v = labelOf(labels, c.key);
      if (v === undefined) continue;
      let cnt = 0;
      let domains: number;
      if (c.hostname) {
        cnt = countMatching(n, c, pod.namespace);
        domains = scored.length;
      } else {
        const values = new Set(scored.map((f) => labelOf(f.node?.labels ?? {}, c.key) ?? ''));
        domains = values.size;
        for (const o of snapshot.list()) {
          const node = o.node;
          if (!node || !counted(o) || (labelOf(node.labels, c.key) ?? '') !== v) continue;
          if (new Inclusion(pod, node).admits(c)) cnt += countMatching(o, c, pod.namespace);
        }
      }
      score += cnt * Math.log(domains + 2) + (c.maxSkew - 1);
    }
    return Math.round(score);
  });
}

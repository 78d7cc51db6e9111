/**
 * Explained decisions: what the scheduler decided for one attempt and every node's verdict with the
 * numbers behind it, plus the kube-scheduler-style messages ("0/12 nodes are available: ...").
 */
import type { NodeLoadRule } from '../rules/types.js';
import { type RankedNode, rankedRow } from './framework/runtime-score.js';
import {
  type FilterReason,
  type NodeVerdict,
  primaryReasons,
  type ScoreContribution,
} from './framework/verdict.js';

export type DecisionResult = 'scheduled' | 'unschedulable' | 'error';

/**
 * Who decided: nodeload's own loop, or kube-scheduler calling nodeload as its extender (kube-scheduler's
 * plugins filtered first; the candidates are the nodes it named).
 */
export type DecisionEngine = 'native' | 'extender';

/** A node as the decision saw it: the filter verdict, plus the score when it was feasible. */
export interface Candidate extends NodeVerdict {
  /** Σ weight × normalized score over the profile's Score plugins. */
  score?: number;
  /**
   * Where each Score plugin's part of `score` is read (candidateScores): the node's row of the cycle's
   * score table, built on first read, or the parts themselves once materialized (history, Events).
   */
  scoreParts?: { readonly scores: ScoreContribution[] };
  /** 1 = chosen (or would have been); feasible nodes only. */
  rank?: number;
}

/** Each Score plugin's part of the candidate's score; undefined for infeasible nodes. */
export function candidateScores(c: Candidate): ScoreContribution[] | undefined {
  return c.scoreParts?.scores;
}

export interface DecisionRule {
  namespace: string;
  name: string;
  maxCPU: number;
  maxMemory: number;
  burst?: { maxPlacements: number; windowSeconds: number };
}

export interface PreemptionVictim {
  namespace: string;
  name: string;
  priority: number;
}

/** What DefaultPreemption (PostFilter) did for an unschedulable pod. */
export interface DecisionPreemption {
  /** The node the pod was nominated to (status.nominatedNodeName); absent when preemption found none. */
  node?: string;
  /** The pods evicted from `node` to make room, most important first. */
  victims: PreemptionVictim[];
  /** What it did, or why it could not help ("preemption: 0/3 nodes are available: …"). */
  message: string;
}

export interface Decision {
  /** Unique, stable across a restart (carried in the Event). */
  id: string;
  namespace: string;
  pod: string;
  podUid: string;
  result: DecisionResult;
  /** The chosen node (for 'error': the node the failed bind targeted). */
  node?: string;
  /** ISO time the attempt started. */
  time: string;
  /** Filter + score, in ms. */
  algorithmMs: number;
  /** The whole attempt (algorithm + bind), in ms. */
  latencyMs: number;
  /** From the pod entering the queue to this outcome, in ms. */
  e2eLatencyMs: number;
  attempts: number;
  /** The Event/condition text: "Successfully assigned ns/p to n" or "0/3 nodes are available: ...". */
  message: string;
  rules: DecisionRule[];
  totalNodes: number;
  /**
   * Nodes filtered: fewer than totalNodes when percentageOfNodesToScore stopped the search once enough
   * were feasible (absent on decisions rebuilt from older Events: all).
   */
  examinedNodes?: number;
  feasibleNodes: number;
  /** Feasible nodes best first, then the others by name. */
  candidates: Candidate[];
  /** Set when no node fit and preemption ran (carried through a restart in the Event, ≤ 50 victims). */
  preemption?: DecisionPreemption;
  /** Which gateway instance decided (the Event's reportingInstance). */
  reportingInstance: string;
  /** Absent on decisions rebuilt from Events written before engines existed: native. */
  engine?: DecisionEngine;
  /** Rebuilt from an Event after a restart: candidates may be a subset (see candidatesOmitted). */
  rebuilt?: boolean;
  candidatesOmitted?: number;
}

/** kube-scheduler's ErrNoNodesAvailable. */
export const NO_NODES_MESSAGE = 'no nodes available to schedule pods';

/**
 * "0/N nodes are available: 3 node(s) exceed rule web-tier cpu 80%, 9 node(s) not allowed by rule web-tier."
 * As kube-scheduler's FitError: per node the reasons of its first failing plugin, counted, and the
 * "<count> <reason>" strings sorted as strings. When a PreFilter rejected the pod, every node carries
 * that rejection and kube-scheduler names it once, uncounted: "0/N nodes are available: pod has unbound
 * immediate PersistentVolumeClaims." (the first rejecting plugin's, as its PreFilter loop stops there).
 */
export function unschedulableMessage(totalNodes: number, verdicts: readonly NodeVerdict[]): string {
  if (totalNodes === 0) return NO_NODES_MESSAGE;
  const head = `0/${totalNodes} nodes are available`;
  const rejected = verdicts.find((v) => v.reasons[0]?.preFilter)?.reasons ?? [];
  const first = rejected[0];
  if (first) {
    const same = rejected.filter((r) => r.preFilter && r.plugin === first.plugin).map((r) => r.reason);
    return `${head}: ${[...new Set(same)].join(', ')}.`;
  }
  const counts = new Map<string, number>();
  for (const v of verdicts) {
    if (v.feasible) continue;
    for (const reason of new Set(primaryReasons(v).map((r) => r.reason))) {
      counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
  }
  const parts = [...counts].map(([reason, n]) => `${n} ${reason}`).sort();
  return parts.length ? `${head}: ${parts.join(', ')}.` : `${head}.`;
}

export function scheduledMessage(namespace: string, pod: string, node: string): string {
  return `Successfully assigned ${namespace}/${pod} to ${node}`;
}

export function decisionRules(rules: readonly NodeLoadRule[]): DecisionRule[] {
  return rules.map((r) => ({
    namespace: r.namespace,
    name: r.name,
    maxCPU: r.spec.maxCPU,
    maxMemory: r.spec.maxMemory,
    ...(r.spec.burst ? { burst: { ...r.spec.burst } } : {}),
  }));
}

function byNode(a: { node: string }, b: { node: string }): number {
  return a.node < b.node ? -1 : a.node > b.node ? 1 : 0;
}

/**
 * Verdicts and scores → candidates, feasible ones in rank order first. The verdict objects are this
 * cycle's own, so they are extended in place rather than copied — with plain data properties only: an
 * accessor (or a closure per candidate) turned every verdict into a dictionary-mode object and kept the
 * whole cycle reachable from each one the history kept, ~1.4 KB per candidate.
 */
export function buildCandidates(verdicts: NodeVerdict[], ranked: readonly RankedNode[]): Candidate[] {
  const rankOf = rankPositions(verdicts, ranked);
  const feasible: Candidate[] = new Array(ranked.length);
  let found = 0;
  const infeasible: Candidate[] = [];
  for (let k = 0; k < verdicts.length; k++) {
    const v = verdicts[k] as NodeVerdict;
    const i = rankOf[k] as number;
    if (i < 0) {
      if (!v.feasible) infeasible.push(v);
      continue;
    }
    const s = ranked[i] as RankedNode;
    const c: Candidate = v;
    c.score = s.score;
    // The per-plugin parts are built only for candidates someone reads.
    c.scoreParts = s;
    c.rank = i + 1;
    feasible[i] = c;
    found++;
  }
  const ordered = found === ranked.length ? feasible : feasible.filter((c) => c !== undefined);
  infeasible.sort(byNode);
  for (const c of infeasible) ordered.push(c);
  return ordered;
}

/**
 * Where each verdict's node ranks (-1: not ranked). runScores' entries know their row in the feasible list
 * it ranked, which is the cycle's feasible verdicts in order, so the positions come from an array by row
 * instead of a Map by node name (the Map was 29 KiB per pod at 1,000 nodes in the allocation profile,
 * README). A ranking that does not line up with the verdicts that way is looked up by name.
 */
function rankPositions(verdicts: readonly NodeVerdict[], ranked: readonly RankedNode[]): Int32Array {
  const at = new Int32Array(verdicts.length).fill(-1);
  // Row r of runScores' entries is the r-th feasible verdict.
  const feasibleAt = new Int32Array(ranked.length);
  let feasible = 0;
  for (let k = 0; k < verdicts.length; k++) {
    if (!(verdicts[k] as NodeVerdict).feasible) continue;
    if (feasible < ranked.length) feasibleAt[feasible] = k;
    feasible++;
  }
  let lined = feasible === ranked.length;
  for (let i = 0; i < ranked.length && lined; i++) {
    const r = ranked[i] as RankedNode;
    const row = rankedRow(r);
    const k = row === undefined ? -1 : (feasibleAt[row] ?? -1);
    if (k < 0 || at[k] !== -1 || (verdicts[k] as NodeVerdict).node !== r.node) lined = false;
    else at[k] = i;
  }
  if (lined) return at;
  at.fill(-1);
  const rowOf = new Map<string, number>();
  for (let i = 0; i < ranked.length; i++) rowOf.set((ranked[i] as RankedNode).node, i);
  for (let k = 0; k < verdicts.length; k++) {
    const v = verdicts[k] as NodeVerdict;
    if (v.feasible) at[k] = rowOf.get(v.node) ?? -1;
  }
  return at;
}

/**
 * Builds the candidate's score parts and drops its reference to the cycle's score table (which holds
 * every feasible node's row), for a decision kept long after its cycle.
 */
export function settleScores(c: Candidate): void {
  if (c.scoreParts) c.scoreParts = { scores: c.scoreParts.scores };
}

/**
 * Candidates above which a pod on its way to be bound keeps only its key ones (keyCandidates; the rest
 * counted in candidatesOmitted) — kube-scheduler's minFeasibleNodesToFind, so a cluster of up to 100
 * nodes keeps every node's verdict. The bind's round trip (and the token it waits for) lasted long
 * enough under load for every examined node's verdict to be promoted to the old generation and later
 * collected by full GCs. An unschedulable pod's decision keeps them all: every node's reason is its
 * explanation.
 */
export const MAX_CANDIDATES_WHILE_BINDING = 100;

/** The decision with its key candidates only, once it has more than `max`; the same object otherwise. */
export function withKeyCandidates<T extends Pick<Decision, 'candidates' | 'candidatesOmitted'>>(
  d: T,
  max = MAX_CANDIDATES_WHILE_BINDING,
): T {
  if (d.candidates.length <= max) return d;
  const kept = keyCandidates(d.candidates);
  for (const c of kept) settleScores(c);
  return {
    ...d,
    candidates: kept,
    candidatesOmitted: (d.candidatesOmitted ?? 0) + d.candidates.length - kept.length,
  };
}

/**
 * The candidates worth keeping once a decision is old (and in its Event): the best few feasible, one per
 * distinct reason. One indexed pass reading each candidate's `feasible` and, for infeasible ones only,
 * its first reason: it runs twice per decision over every node examined, and the filter-and-closure
 * version of it was ~7 % of the scheduler's busy CPU at 1,000 nodes.
 */
export function keyCandidates(candidates: readonly Candidate[], maxFeasible = 10): Candidate[] {
  const kept: Candidate[] = [];
  const representative: Candidate[] = [];
  let seen: Set<string> | undefined;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i] as Candidate;
    if (c.feasible) {
      if (kept.length < maxFeasible) kept.push(c);
      continue;
    }
    const key = c.reasons.length > 0 ? (c.reasons[0] as FilterReason).reason : '';
    seen ??= new Set();
    if (seen.has(key)) continue;
    seen.add(key);
    representative.push(c);
  }
  for (const c of representative) kept.push(c);
  return kept;
}

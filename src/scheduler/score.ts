/**
 * Score: least loaded wins, by effective load (measured + in-flight estimates, or requests) after placing
 * the pod, CPU and memory weighted; kube-scheduler's balanced allocation breaks ties, then the node name,
 * so the same state always yields the same choice.
 */
import type { CandidateLoad, NodeVerdict } from './filter.js';

export interface ScoreWeights {
  cpu: number;
  memory: number;
}

export const DEFAULT_SCORE_WEIGHTS: ScoreWeights = { cpu: 1, memory: 1 };

export interface NodeScore {
  node: string;
  /** 0–100, higher is better: the weighted free share of allocatable after placement. */
  score: number;
  /** 0–100: how evenly CPU and memory would be used (the tie-break). */
  balanced: number;
}

function clampPercent(p: number): number {
  return Math.min(100, Math.max(0, p));
}

/** Weighted mean of (100 − load%) over CPU and memory; zero weights on both mean equal weights. */
export function leastLoadedScore(load: CandidateLoad, weights: ScoreWeights = DEFAULT_SCORE_WEIGHTS): number {
  const cpuFree = 100 - clampPercent(load.cpuPercentAfter);
  const memFree = 100 - clampPercent(load.memoryPercentAfter);
  const total = weights.cpu + weights.memory;
  if (!(total > 0)) return (cpuFree + memFree) / 2;
  return (cpuFree * weights.cpu + memFree * weights.memory) / total;
}

/** kube-scheduler's BalancedAllocation: (1 − std of the used fractions) × 100; for two resources std = |a − b| / 2. */
export function balancedScore(load: CandidateLoad): number {
  const cpu = clampPercent(load.cpuPercentAfter) / 100;
  const mem = clampPercent(load.memoryPercentAfter) / 100;
  return (1 - Math.abs(cpu - mem) / 2) * 100;
}

export function compareScores(a: NodeScore, b: NodeScore): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.balanced !== b.balanced) return b.balanced - a.balanced;
  return a.node < b.node ? -1 : a.node > b.node ? 1 : 0;
}

/** Scores of the feasible verdicts, best first. */
export function rankNodes(
  verdicts: readonly NodeVerdict[],
  weights: ScoreWeights = DEFAULT_SCORE_WEIGHTS,
): NodeScore[] {
  const scores: NodeScore[] = [];
  for (const v of verdicts) {
    if (!v.feasible || !v.load) continue;
    scores.push({ node: v.node, score: leastLoadedScore(v.load, weights), balanced: balancedScore(v.load) });
  }
  return scores.sort(compareScores);
}

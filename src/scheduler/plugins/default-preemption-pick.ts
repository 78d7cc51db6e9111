/**
 * DefaultPreemption's choice among the candidate nodes, as upstream's pickOneNodeForPreemption. Each
 * criterion keeps the nodes with the best value; the next one only breaks ties among them:
 *   1. fewest PodDisruptionBudget violations
 *   2. lowest priority of the most important victim
 *   3. smallest Σ (priority + 2³¹) over the victims (so negative priorities still add up)
 *   4. fewest victims
 *   5. latest start time of the earliest-started victim among those of the highest priority
 *   6. the first candidate (candidates come in dry-run order)
 * Victims are listed most important first.
 */
import type { PodInfo } from '../../cluster/model.js';
import { startTime } from './default-preemption-victims.js';

export interface Candidate {
  node: string;
  /** Most important first. */
  victims: PodInfo[];
  pdbViolations: number;
}

/** Upstream's GetEarliestPodStartTime: the earliest start among the victims of the highest priority. */
function earliestStartOfHighest(victims: readonly PodInfo[], now: number): number {
  let best = Number.POSITIVE_INFINITY;
  let top = Number.NEGATIVE_INFINITY;
  for (const v of victims) {
    if (v.priority > top) {
      top = v.priority;
      best = startTime(v, now);
    } else if (v.priority === top) best = Math.min(best, startTime(v, now));
  }
  return best;
}

const OFFSET = 2 ** 31;

/** Higher is better, one function per criterion. */
function criteria(now: number): ((c: Candidate) => number)[] {
  return [
    (c) => -c.pdbViolations,
    (c) => -(c.victims[0]?.priority ?? 0),
    (c) => -c.victims.reduce((s, v) => s + v.priority + OFFSET, 0),
    (c) => -c.victims.length,
    (c) => earliestStartOfHighest(c.victims, now),
  ];
}

export function pickOneNodeForPreemption(
  candidates: readonly Candidate[],
  now: number,
): Candidate | undefined {
  let left = [...candidates];
  for (const score of criteria(now)) {
    if (left.length <= 1) break;
    let max = Number.NEGATIVE_INFINITY;
    let kept: Candidate[] = [];
    for (const c of left) {
      const s = score(c);
      if (s > max) {
        max = s;
        kept = [c];
      } else if (s === max) kept.push(c);
    }
    left = kept;
  }
  return left[0];
}

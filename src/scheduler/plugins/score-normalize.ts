/**
 * kube-scheduler's DefaultNormalizeScore: scales raw scores so the highest becomes 100
 * (⌊score × 100 / max⌋, int64 as upstream: 1 of 3 is 33, reversed 67); `reverse` flips them (100 − that),
 * so fewer (taints, pods) scores higher. With max = 0 every node gets 0, or 100 when reversed.
 * The raw scores are counts and weight sums (integers), so the float quotient is exact where the ratio is
 * an integer and at least 1/max away from one where it is not: truncating it is Go's integer division.
 */
export const MAX_NODE_SCORE = 100;

export function defaultNormalize(scores: Float64Array, reverse: boolean): void {
  let max = 0;
  for (const s of scores) if (s > max) max = s;
  if (max === 0) {
    if (reverse) scores.fill(MAX_NODE_SCORE);
    return;
  }
  for (let i = 0; i < scores.length; i++) {
    const v = Math.trunc((MAX_NODE_SCORE * (scores[i] as number)) / max);
    scores[i] = reverse ? MAX_NODE_SCORE - v : v;
  }
}

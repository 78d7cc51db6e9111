/**
 * kube-scheduler's DefaultNormalizeScore: scales raw scores so the highest becomes 100
 * (score × 100 / max); `reverse` flips them (100 − that), so fewer (taints, pods) scores higher.
 * With max = 0 every node gets 0, or 100 when reversed.
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
    const v = (MAX_NODE_SCORE * (scores[i] as number)) / max;
    scores[i] = reverse ? MAX_NODE_SCORE - v : v;
  }
}

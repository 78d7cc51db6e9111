/**
 * How many feasible nodes a cycle looks for before it stops filtering, as kube-scheduler's
 * numFeasibleNodesToFind (percentageOfNodesToScore): finding the best node among a large enough sample
 * costs a fraction of filtering and scoring every node, and the rotating start spreads the samples
 * over the whole cluster from one cycle to the next.
 *
 *   numAllNodes < 100                       → every node
 *   percentage = configured, or adaptive:   max(5, 50 − numAllNodes / 125)   (integer division)
 *   numNodes   = max(100, numAllNodes × percentage / 100)
 *
 * e.g. 1,000 nodes → 42 % → 420; 5,000 nodes → 10 % → 500; 100 % (or a value ≥ 100) → every node.
 */

/** Below this many nodes every node is filtered, whatever the percentage. */
const MIN_FEASIBLE_NODES_TO_FIND = 100;
/** The adaptive percentage never goes below this. */
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

/** `percentage` 0 or undefined: adaptive. */
export function numFeasibleNodesToFind(percentage: number | undefined, numAllNodes: number): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let p = percentage ?? 0;
  if (p <= 0) p = Math.max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - Math.trunc(numAllNodes / 125));
  if (p >= 100) return numAllNodes;
  const n = Math.trunc((numAllNodes * p) / 100);
  return Math.max(n, MIN_FEASIBLE_NODES_TO_FIND);
}

import { describe, expect, it } from 'vitest';
import { numFeasibleNodesToFind } from './sampling.js';

describe('numFeasibleNodesToFind (kube-scheduler percentageOfNodesToScore)', () => {
  it.each<[number | undefined, number, number]>([
    [undefined, 0, 0],
    [undefined, 50, 50],
    [undefined, 99, 99],
    [undefined, 100, 100], // 49 % of 100 = 49 → the minimum 100
    [undefined, 1000, 420], // 50 − 8 = 42 %
    [undefined, 5000, 500], // 50 − 40 = 10 %
    [undefined, 6000, 300], // 50 − 48 = 2 % → 5 % floor
    [0, 1000, 420],
    [30, 1000, 300],
    [5, 1000, 100], // 50 → the minimum 100
    [100, 5000, 5000],
    [10, 50, 50], // small clusters: every node
  ])('percentage %s of %i nodes → %i', (percentage, all, want) => {
    expect(numFeasibleNodesToFind(percentage, all)).toBe(want);
  });
});

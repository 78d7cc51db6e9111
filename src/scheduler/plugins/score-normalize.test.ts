import { describe, expect, it } from 'vitest';
import { defaultNormalize } from './score-normalize.js';

describe('defaultNormalize', () => {
  it.each([
    { name: 'the highest becomes 100', raw: [1, 2, 4], reverse: false, want: [25, 50, 100] },
    { name: 'reversed: fewer is better', raw: [1, 2, 4], reverse: true, want: [75, 50, 0] },
    { name: 'all zero stays zero', raw: [0, 0], reverse: false, want: [0, 0] },
    { name: 'all zero reversed is 100 everywhere', raw: [0, 0], reverse: true, want: [100, 100] },
    { name: 'one node', raw: [7], reverse: false, want: [100] },
    { name: 'already at 100', raw: [100, 50], reverse: false, want: [100, 50] },
    { name: 'above 100 is scaled down', raw: [300, 150, 0], reverse: false, want: [100, 50, 0] },
    { name: 'empty', raw: [], reverse: true, want: [] },
    // Go's int64 arithmetic: 100 × 1 / 3 = 33, and reversed 100 − 33 = 67 (not 66.67 and 33.33).
    { name: 'truncated as integers', raw: [1, 2, 3], reverse: false, want: [33, 66, 100] },
    { name: 'truncated before it is reversed', raw: [1, 2, 3], reverse: true, want: [67, 34, 0] },
  ])('$name', ({ raw, reverse, want }) => {
    const scores = Float64Array.from(raw);
    defaultNormalize(scores, reverse);
    expect([...scores]).toEqual(want);
  });
});

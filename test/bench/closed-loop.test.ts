import { describe, expect, it } from 'vitest';
import { type LoopResult, okCount, pooled } from './closed-loop.js';

const run = (
  latenciesMs: number[],
  statuses: [number, number][],
  extra: Partial<LoopResult> = {},
): LoopResult => ({
  latenciesMs,
  elapsedMs: 1000,
  byStatus: new Map(statuses),
  bytes: 10 * latenciesMs.length,
  ...extra,
});

describe('pooled', () => {
  it('adds the rounds of a loop into one: latencies, times, bytes and answers by status', () => {
    const p = pooled([
      run([1, 2], [[200, 2]]),
      run([3], [[200, 1]]),
      run(
        [4, 5],
        [
          [200, 1],
          [503, 1],
        ],
      ),
    ]);
    expect(p.latenciesMs).toEqual([1, 2, 3, 4, 5]);
    expect(p.elapsedMs).toBe(3000);
    expect(p.bytes).toBe(50);
    expect(okCount(p)).toBe(4);
    expect(p.byStatus.get(503)).toBe(1);
  });

  it("keeps the first round's first failure", () => {
    const p = pooled([
      run([1], [[200, 1]]),
      run([2], [[500, 1]], { firstFailure: 'HTTP 500' }),
      run([3], [[0, 1]], { firstFailure: 'ECONNRESET' }),
    ]);
    expect(p.firstFailure).toBe('HTTP 500');
  });

  it('of no rounds is an empty loop', () => {
    expect(pooled([])).toEqual({ latenciesMs: [], elapsedMs: 0, byStatus: new Map(), bytes: 0 });
  });
});

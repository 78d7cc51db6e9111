import { describe, expect, it } from 'vitest';
import { IdleReclaimPolicy } from './idle-memory.js';

const MIB = 2 ** 20;
const opts = { idleAfterMs: 30_000, busyUtilization: 0.25, minSlackBytes: 48 * MIB };

/** Samples as [ms since start, loop utilisation, heap slack MiB]; the indices at which a reclaim is due. */
function due(samples: [number, number, number][], options = opts): number[] {
  const policy = new IdleReclaimPolicy(options, 0);
  return samples.flatMap(([t, u, slack], i) => (policy.sample(t, u, slack * MIB) ? [i] : []));
}

describe('IdleReclaimPolicy', () => {
  it.each<[string, [number, number, number][], number[]]>([
    [
      'quiet after start, with slack: once',
      [
        [10_000, 0.01, 100],
        [30_000, 0.01, 100],
        [60_000, 0.01, 100],
      ],
      [1],
    ],
    ['not before the quiet time has passed', [[29_999, 0.01, 100]], []],
    [
      'too little slack: not worth the pause, and not tried again while quiet',
      [
        [30_000, 0.01, 10],
        [35_000, 0.01, 100],
      ],
      [],
    ],
    [
      'a busy sample restarts the quiet time',
      [
        [30_000, 0.5, 100],
        [50_000, 0.01, 100],
        [60_000, 0.01, 100],
      ],
      [2],
    ],
    [
      'once per busy period: busy again, quiet again, reclaimed again',
      [
        [30_000, 0.01, 100],
        [40_000, 0.9, 100],
        [65_000, 0.01, 100],
        [70_000, 0.01, 100],
        [80_000, 0.01, 100],
      ],
      [0, 3],
    ],
    [
      'utilisation exactly at the threshold is busy',
      [
        [30_000, 0.25, 100],
        [45_000, 0.01, 100],
      ],
      [],
    ],
  ])('%s', (_what, samples, want) => {
    expect(due(samples)).toEqual(want);
  });

  it('never reclaims when turned off', () => {
    expect(due([[60_000, 0, 500]], { ...opts, idleAfterMs: 0 })).toEqual([]);
  });
});

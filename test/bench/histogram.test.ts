import { describe, expect, it } from 'vitest';
import {
  addBuckets,
  combineSumCounts,
  histogramQuantile,
  parseBuckets,
  parseSumCounts,
  subtractBuckets,
} from './histogram.js';

const PAGE = `# HELP x_seconds A histogram.
# TYPE x_seconds histogram
x_seconds_bucket{result="scheduled",le="0.001"} 6
x_seconds_bucket{result="scheduled",le="0.002"} 8
x_seconds_bucket{result="scheduled",le="0.004"} 10
x_seconds_bucket{result="scheduled",le="+Inf"} 10
x_seconds_bucket{result="error",le="0.001"} 0
x_seconds_bucket{result="error",le="0.002"} 0
x_seconds_bucket{result="error",le="0.004"} 1
x_seconds_bucket{result="error",le="+Inf"} 2
x_seconds_sum 0.01
x_seconds_count 12
y_seconds_bucket{le="0.001"} 99
`;

describe('parseBuckets', () => {
  it('sums each bound over the label sets and reads +Inf, ignoring other metrics', () => {
    expect([...parseBuckets(PAGE, 'x_seconds')]).toEqual([
      [0.001, 6],
      [0.002, 8],
      [0.004, 11],
      [Number.POSITIVE_INFINITY, 12],
    ]);
    expect([...parseBuckets(PAGE, 'y_seconds')]).toEqual([[0.001, 99]]);
    expect(parseBuckets(PAGE, 'z_seconds').size).toBe(0);
  });
});

describe('histogramQuantile', () => {
  const b = (entries: [number, number][]) => new Map(entries);
  it.each([
    {
      name: 'inside the first bucket, from 0',
      q: 0.5,
      buckets: b([
        [1, 10],
        [2, 10],
        [Infinity, 10],
      ]),
      want: 0.5,
    },
    {
      name: 'linear inside a later bucket',
      q: 0.9,
      buckets: b([
        [1, 6],
        [2, 8],
        [4, 10],
        [Infinity, 10],
      ]),
      want: 3,
    },
    {
      name: 'exactly on a bound',
      q: 0.6,
      buckets: b([
        [1, 6],
        [2, 8],
        [Infinity, 10],
      ]),
      want: 1,
    },
    {
      name: 'in +Inf: the highest finite bound',
      q: 0.99,
      buckets: b([
        [1, 5],
        [2, 8],
        [Infinity, 10],
      ]),
      want: 2,
    },
    {
      name: 'no observations',
      q: 0.99,
      buckets: b([
        [1, 0],
        [Infinity, 0],
      ]),
      want: Number.NaN,
    },
  ])('$name', ({ q, buckets, want }) => {
    expect(histogramQuantile(q, buckets)).toBe(want);
  });
});

describe('subtractBuckets and addBuckets', () => {
  it('take one phase out of cumulative counters and pool phases', () => {
    const before = new Map([
      [1, 2],
      [Number.POSITIVE_INFINITY, 3],
    ]);
    const after = new Map([
      [1, 7],
      [Number.POSITIVE_INFINITY, 10],
    ]);
    const phase = subtractBuckets(after, before);
    expect([...phase]).toEqual([
      [1, 5],
      [Number.POSITIVE_INFINITY, 7],
    ]);
    expect([...addBuckets(phase, phase)]).toEqual([
      [1, 10],
      [Number.POSITIVE_INFINITY, 14],
    ]);
  });
});

describe('parseSumCounts / combineSumCounts', () => {
  const GC = `nodeload_nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"} 1
nodeload_nodejs_gc_duration_seconds_sum{kind="minor"} 0.25
nodeload_nodejs_gc_duration_seconds_count{kind="minor"} 10
nodeload_nodejs_gc_duration_seconds_sum{kind="major"} 0.5
nodeload_nodejs_gc_duration_seconds_count{kind="major"} 2
other_sum{kind="minor"} 99
`;
  it('reads _sum and _count per label value, ignoring buckets and other metrics', () => {
    expect([...parseSumCounts(GC, 'nodeload_nodejs_gc_duration_seconds', 'kind')]).toEqual([
      ['minor', { sum: 0.25, count: 10 }],
      ['major', { sum: 0.5, count: 2 }],
    ]);
    expect(parseSumCounts(GC, 'absent', 'kind').size).toBe(0);
  });
  it('subtracts a phase’s start and pools phases, keeping label values either side has', () => {
    const after = parseSumCounts(GC, 'nodeload_nodejs_gc_duration_seconds', 'kind');
    const before = new Map([['minor', { sum: 0.05, count: 4 }]]);
    const phase = combineSumCounts(after, before, -1);
    expect(phase.get('minor')?.count).toBe(6);
    expect(phase.get('minor')?.sum).toBeCloseTo(0.2);
    expect(phase.get('major')).toEqual({ sum: 0.5, count: 2 });
    const pooled = combineSumCounts(phase, new Map([['incremental', { sum: 0.01, count: 1 }]]), 1);
    expect([...pooled.keys()]).toEqual(['minor', 'major', 'incremental']);
    expect(after.get('minor')).toEqual({ sum: 0.25, count: 10 });
  });
});

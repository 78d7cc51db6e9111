import { describe, expect, it } from 'vitest';
import { pod } from '../testing.js';
import { prioritySort } from './priority-sort.js';

const entry = (priority: number | undefined, enqueuedAt: number) => ({
  pod: pod(`p-${priority}-${enqueuedAt}`, { priority }),
  enqueuedAt,
});

describe('PrioritySort', () => {
  const { less } = prioritySort();

  it.each([
    { name: 'higher priority first', a: entry(10, 5), b: entry(1, 1), want: true },
    { name: 'lower priority after', a: entry(1, 1), b: entry(10, 5), want: false },
    { name: 'equal priority: earlier first', a: entry(5, 1), b: entry(5, 2), want: true },
    { name: 'equal priority: later after', a: entry(5, 2), b: entry(5, 1), want: false },
    { name: 'equal priority and time: not less (strict)', a: entry(5, 1), b: entry(5, 1), want: false },
    {
      name: 'unset priority is 0, below a positive one',
      a: entry(undefined, 0),
      b: entry(1, 9),
      want: false,
    },
    { name: 'negative priority after unset', a: entry(-1, 0), b: entry(undefined, 9), want: false },
  ])('$name', ({ a, b, want }) => {
    expect(less(a, b)).toBe(want);
  });

  it('sorts a queue by priority, then arrival', () => {
    const q = [entry(0, 3), entry(100, 4), entry(0, 1), entry(100, 2), entry(-5, 0)];
    q.sort((x, y) => (less(x, y) ? -1 : less(y, x) ? 1 : 0));
    expect(q.map((e) => [e.pod.priority, e.enqueuedAt])).toEqual([
      [100, 2],
      [100, 4],
      [0, 1],
      [0, 3],
      [-5, 0],
    ]);
  });
});

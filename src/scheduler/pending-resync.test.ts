import { describe, expect, it } from 'vitest';
import { podKey } from '../cluster/model.js';
import { untrackedPendingPods } from './pending-resync.js';
import { pod } from './testing.js';

describe('untrackedPendingPods', () => {
  const ours = (name: string) => pod(name);
  const theirs = pod('theirs', { schedulerName: 'default-scheduler' });
  const cases: { name: string; tracked: string[]; want: string[] }[] = [
    { name: 'every pending pod queued or binding: nothing', tracked: ['a', 'b'], want: [] },
    { name: 'one missing from both: it alone', tracked: ['a'], want: ['b'] },
    {
      name: 'none tracked: every pending pod of ours, not the other scheduler’s',
      tracked: [],
      want: ['a', 'b'],
    },
  ];
  it.each(cases)('$name', ({ tracked, want }) => {
    const pods = [ours('a'), ours('b'), theirs];
    const keys = new Set(tracked.map((n) => podKey(ours(n))));
    const found = untrackedPendingPods(pods, {
      isPendingOurs: (p) => p.schedulerName === 'nodeload-scheduler',
      isTracked: (key) => keys.has(key),
    });
    expect(found.map((p) => p.name)).toEqual(want);
  });
});

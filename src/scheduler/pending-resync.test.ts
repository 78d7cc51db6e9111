import { describe, expect, it } from 'vitest';
import { podKey } from '../cluster/model.js';
import { PendingResync } from './pending-resync.js';
import { pod } from './testing.js';

describe('PendingResync', () => {
  const ours = (name: string, uid = `uid-${name}`) => pod(name, { uid });
  const theirs = pod('theirs', { schedulerName: 'default-scheduler' });
  const view = (tracked: string[]) => ({
    isPendingOurs: (p: ReturnType<typeof pod>) => p.schedulerName === 'nodeload-scheduler',
    isTracked: (key: string) => tracked.map((n) => podKey(ours(n))).includes(key),
  });
  // Each case is two checks in a row: what each finds lost.
  const cases: {
    name: string;
    first: { pods: ReturnType<typeof pod>[]; tracked: string[] };
    second: { pods: ReturnType<typeof pod>[]; tracked: string[] };
    want: [string[], string[]];
  }[] = [
    {
      name: 'every pending pod queued or binding: nothing',
      first: { pods: [ours('a'), ours('b')], tracked: ['a', 'b'] },
      second: { pods: [ours('a'), ours('b')], tracked: ['a', 'b'] },
      want: [[], []],
    },
    {
      name: 'untracked at two checks in a row: lost at the second, the other scheduler’s pod never',
      first: { pods: [ours('a'), ours('b'), theirs], tracked: ['a'] },
      second: { pods: [ours('a'), ours('b'), theirs], tracked: ['a'] },
      want: [[], ['b']],
    },
    {
      name: 'untracked once, then queued (an event that was only late): nothing',
      first: { pods: [ours('b')], tracked: [] },
      second: { pods: [ours('b')], tracked: ['b'] },
      want: [[], []],
    },
    {
      name: 'the same name with a new uid (recreated between the checks): a new suspect, not lost',
      first: { pods: [ours('b', 'old')], tracked: [] },
      second: { pods: [ours('b', 'new')], tracked: [] },
      want: [[], []],
    },
  ];
  it.each(cases)('$name', ({ first, second, want }) => {
    const resync = new PendingResync();
    const found = [
      resync.check(first.pods, view(first.tracked)),
      resync.check(second.pods, view(second.tracked)),
    ];
    expect(found.map((pods) => pods.map((p) => p.name))).toEqual(want);
  });

  it('reset forgets the suspects', () => {
    const resync = new PendingResync();
    resync.check([ours('b')], view([]));
    resync.reset();
    expect(resync.check([ours('b')], view([]))).toEqual([]);
  });
});

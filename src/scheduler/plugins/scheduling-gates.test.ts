import { describe, expect, it } from 'vitest';
import { runPreEnqueue } from '../framework/runtime.js';
import { profileOf, specPod } from './plugin.testing.js';
import { schedulingGates } from './scheduling-gates.js';

describe('SchedulingGates', () => {
  it.each([
    { name: 'no gates', gates: undefined, want: undefined },
    { name: 'empty gates', gates: [], want: undefined },
    { name: 'one gate', gates: [{ name: 'example.com/quota' }], want: 'waiting for scheduling gates' },
    {
      name: 'several gates',
      gates: [{ name: 'a.io/x' }, { name: 'b.io/y' }],
      want: 'waiting for scheduling gates',
    },
  ])('$name', ({ gates, want }) => {
    const pod = specPod('p', gates ? { schedulingGates: gates } : {});
    expect(schedulingGates().preEnqueue(pod)).toBe(want);
    // Through the runtime, as the scheduler asks before queueing.
    expect(runPreEnqueue(profileOf(schedulingGates()), { pod })).toBe(want);
  });
});

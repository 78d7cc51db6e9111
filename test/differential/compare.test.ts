// The engines' comparison: which differences in outcome count as divergences.
import { describe, expect, it } from 'vitest';
import { compareEngines, messageShape } from './compare.js';
import type { PodOutcome, Scenario } from './types.js';

const scenario = (sameMessages: boolean): Scenario => ({
  name: 's',
  area: 'Test',
  description: '',
  orderIndependent: true,
  sameMessages,
  nodes: [],
  pods: [],
});
const stuck = (message: string): PodOutcome => ({
  pod: 'p',
  unschedulable: { reason: 'Unschedulable', message },
});
const K8S =
  '0/12 nodes are available: 1 node(s) had no available disk. no new claims to deallocate, preemption: …';

describe('compareEngines with sameMessages', () => {
  it.each([
    { what: 'the same words with other node counts', nodeload: K8S.replace('12', '9'), same: true, want: 0 },
    {
      what: 'a missing sentence',
      nodeload: K8S.replace('no new claims to deallocate, ', ''),
      same: true,
      want: 1,
    },
    { what: 'messages are not compared without the flag', nodeload: 'anything', same: false, want: 0 },
  ])('$what', ({ nodeload, same, want }) => {
    const run = (message: string) => ({ outcomes: [stuck(message)], victims: [] });
    expect(compareEngines(scenario(same), run(K8S), run(nodeload))).toHaveLength(want);
  });

  it('numbers become #', () => {
    expect(messageShape('0/12 nodes are available: 3 Insufficient cpu.')).toBe(
      '#/# nodes are available: # Insufficient cpu.',
    );
  });
});

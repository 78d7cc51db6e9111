// The engines' comparison: which differences in outcome count as divergences.
import { describe, expect, it } from 'vitest';
import { compareEngines, messageShape } from './compare.js';
import type { PodOutcome, Scenario } from './types.js';

const scenario = (sameMessages?: boolean): Scenario => ({
  name: 's',
  area: 'Test',
  description: '',
  orderIndependent: true,
  ...(sameMessages === undefined ? {} : { sameMessages }),
  nodes: [],
  pods: [],
});
const stuck = (message: string, reason = 'Unschedulable'): PodOutcome => ({
  pod: 'p',
  unschedulable: { reason, message },
});
const K8S =
  '0/12 nodes are available: 1 node(s) had no available disk. no new claims to deallocate, preemption: …';

describe('compareEngines: PodScheduled messages', () => {
  it.each([
    { what: 'the same words with other node counts', nodeload: K8S.replace('12', '9'), same: true, want: 0 },
    {
      what: "another run's tainted node, seen by one engine only",
      nodeload: K8S.replace('disk.', 'disk, 3 node(s) had untolerated taint(s).'),
      same: true,
      want: 0,
    },
    {
      what: 'an own reason missing',
      nodeload: K8S.replace(
        '1 node(s) had no available disk',
        "1 node(s) didn't match Pod's node affinity/selector",
      ),
      same: true,
      want: 1,
    },
    {
      what: 'a missing sentence',
      nodeload: K8S.replace('no new claims to deallocate, ', ''),
      same: true,
      want: 1,
    },
    {
      what: 'messages are not compared with sameMessages: false',
      nodeload: 'anything',
      same: false,
      want: 0,
    },
    { what: 'compared by default', nodeload: 'anything', same: undefined, want: 1 },
  ])('$what', ({ nodeload, same, want }) => {
    const run = (message: string) => ({ outcomes: [stuck(message)], victims: [] });
    expect(compareEngines(scenario(same), run(K8S), run(nodeload))).toHaveLength(want);
  });

  it('a nominated pod is mid-preemption: its message is not compared', () => {
    const run = (o: PodOutcome) => ({ outcomes: [o], victims: [] });
    const waiting = {
      ...stuck(`${K8S} preemption: not eligible due to a terminating pod.`),
      nominated: 'n1',
    };
    expect(compareEngines(scenario(), run(waiting), run(stuck(K8S)))).toEqual([]);
  });

  it('a pod both engines left nominated must be nominated to the same node', () => {
    const run = (o: PodOutcome) => ({ outcomes: [o], victims: [] });
    const on = (node: string) => ({ ...stuck(K8S), nominated: node });
    expect(compareEngines(scenario(), run(on('n1')), run(on('n1')))).toEqual([]);
    expect(compareEngines(scenario(), run(on('n1')), run(on('n2')))).toEqual([
      'Nominated nodes of p differ: kube-scheduler n1, nodeload n2',
    ]);
  });

  it('the condition reason counts too', () => {
    const run = (o: PodOutcome) => ({ outcomes: [o], victims: [] });
    expect(compareEngines(scenario(), run(stuck(K8S)), run(stuck(K8S, 'SchedulerError')))).toEqual([
      'Reasons of p differ: kube-scheduler Unschedulable, nodeload SchedulerError',
    ]);
  });

  it('a resource name with a dot stays one reason', () => {
    const k =
      "0/16 nodes are available: 14 node(s) didn't match Pod's node affinity/selector, 2 Insufficient example.com/gpu. preemption: x.";
    const n =
      "0/11 nodes are available: 2 Insufficient example.com/gpu, 9 node(s) didn't match Pod's node affinity/selector. preemption: x.";
    expect(messageShape(k)).toBe(messageShape(n));
    expect(messageShape(k)).toBe('#/# nodes are available: Insufficient example.com/gpu. preemption: x.');
  });

  it('a reason list becomes its sorted own reasons; other numbers become #', () => {
    expect(
      messageShape(
        "0/12 nodes are available: 3 Insufficient cpu, 9 node(s) didn't match Pod's node affinity/selector, 1 Insufficient memory. preemption: not eligible due to preemptionPolicy=Never.",
      ),
    ).toBe(
      '#/# nodes are available: Insufficient cpu, Insufficient memory. preemption: not eligible due to preemptionPolicy=Never.',
    );
  });
});

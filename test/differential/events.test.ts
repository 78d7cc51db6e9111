// The scheduler Events the harness reads and compares: what counts as the Event kube-scheduler writes.
import type { EventsV1Event, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { compareEvents, type EventRecord, type EventsOutcome, eventRecords } from './events.js';
import type { Scenario } from './types.js';

const UID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

describe('eventRecords', () => {
  it('keeps scheduler Events about pods, in logical names, with UIDs as pod names', () => {
    const event = (o: Partial<EventsV1Event>): EventsV1Event => ({
      eventTime: new Date('2026-12-07T10:00:00Z'),
      regarding: { kind: 'Pod', name: 'victim' },
      ...o,
    });
    const pods: V1Pod[] = [{ metadata: { name: 'big', uid: UID } }];
    const records = eventRecords(
      [
        event({
          type: 'Normal',
          reason: 'Preempted',
          action: 'Preempting',
          note: `Preempted by pod ${UID} on node r1-n1`,
          related: { kind: 'Pod', name: 'big' },
          series: { count: 2, lastObservedTime: new Date('2026-12-07T10:00:05Z') },
        }),
        event({ reason: 'Pulled', note: 'not the scheduler' }),
        event({ regarding: { kind: 'Node', name: 'r1-n1' }, reason: 'Scheduled' }),
      ],
      'r1',
      pods,
    );
    expect(records).toEqual([
      {
        regarding: 'victim',
        type: 'Normal',
        reason: 'Preempted',
        action: 'Preempting',
        note: 'Preempted by pod pod:big on node n1',
        related: 'big',
        at: Date.parse('2026-12-07T10:00:05Z'),
      },
    ]);
  });
});

const scenario: Scenario = {
  name: 's',
  area: 'Test',
  description: '',
  orderIndependent: true,
  nodes: [],
  pods: [],
};
const MESSAGE =
  '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.';

const scheduled = (pod: string, node: string): EventRecord => ({
  regarding: pod,
  type: 'Normal',
  reason: 'Scheduled',
  action: 'Binding',
  note: `Successfully assigned main/${pod} to ${node}`,
  at: 2,
});
const failed = (pod: string, note: string, at = 1): EventRecord => ({
  regarding: pod,
  type: 'Warning',
  reason: 'FailedScheduling',
  action: 'Scheduling',
  note,
  at,
});
const preempted = (victim: string, by: string, node: string): EventRecord => ({
  regarding: victim,
  type: 'Normal',
  reason: 'Preempted',
  action: 'Preempting',
  note: `Preempted by pod pod:${by} on node ${node}`,
  related: by,
  at: 1,
});

const bound = (events: EventRecord[]): EventsOutcome => ({
  outcomes: [{ pod: 'p', node: 'n1' }],
  victims: [],
  events,
});
const stuck = (events: EventRecord[], message = MESSAGE): EventsOutcome => ({
  outcomes: [{ pod: 'p', unschedulable: { reason: 'Unschedulable', message } }],
  victims: [],
  events,
});
const preempting = (events: EventRecord[]): EventsOutcome => ({
  outcomes: [{ pod: 'big', node: 'n1' }],
  victims: ['v1'],
  events: [scheduled('big', 'n1'), ...events],
});

describe('compareEvents', () => {
  it.each([
    {
      what: 'one Scheduled Event each',
      kube: bound([scheduled('p', 'n1')]),
      nodeload: bound([scheduled('p', 'n1')]),
      want: [],
    },
    {
      what: 'nodeload wrote none',
      kube: bound([scheduled('p', 'n1')]),
      nodeload: bound([]),
      want: ['nodeload: p bound to n1 should have one Scheduled Event'],
    },
    {
      what: 'nodeload wrote two',
      kube: bound([scheduled('p', 'n1')]),
      nodeload: bound([scheduled('p', 'n1'), scheduled('p', 'n1')]),
      want: ['nodeload: p bound to n1 should have one Scheduled Event'],
    },
    {
      what: 'a Scheduled Event naming another node',
      kube: bound([scheduled('p', 'n1')]),
      nodeload: bound([scheduled('p', 'n2')]),
      want: ['nodeload: p bound to n1'],
    },
    {
      what: 'the last FailedScheduling note is the PodScheduled message (an earlier one differs: a retry)',
      kube: stuck([failed('p', 'earlier', 1), failed('p', MESSAGE.replaceAll('3', '9'), 2)]),
      nodeload: stuck([failed('p', MESSAGE)]),
      want: [],
    },
    {
      what: 'a FailedScheduling note other than the message',
      kube: stuck([failed('p', MESSAGE)]),
      nodeload: stuck([failed('p', MESSAGE, 2), failed('p', 'earlier', 1), failed('p', 'later', 3)]),
      want: ["nodeload: p's last FailedScheduling Event"],
    },
    {
      what: 'no FailedScheduling Event',
      kube: stuck([failed('p', MESSAGE)]),
      nodeload: stuck([]),
      want: [
        "nodeload: p's last FailedScheduling Event should be Warning FailedScheduling/Scheduling with its PodScheduled message",
      ],
    },
    {
      what: 'a FailedScheduling Event of type Normal',
      kube: stuck([failed('p', MESSAGE)]),
      nodeload: stuck([{ ...failed('p', MESSAGE), type: 'Normal' }]),
      want: ["nodeload: p's last FailedScheduling Event"],
    },
    {
      what: 'the same Preempted Event on the victim',
      kube: preempting([preempted('v1', 'big', 'n1')]),
      nodeload: preempting([preempted('v1', 'big', 'n1')]),
      want: [],
    },
    {
      what: 'kube-scheduler 1.36 writes the Preempted Event without its related pod; nodeload names it',
      kube: preempting([{ ...preempted('v1', 'big', 'n1'), related: undefined }]),
      nodeload: preempting([preempted('v1', 'big', 'n1')]),
      want: [],
    },
    {
      what: "a Preempted Event related to another pod than its note's preemptor",
      kube: preempting([preempted('v1', 'big', 'n1')]),
      nodeload: preempting([{ ...preempted('v1', 'big', 'n1'), related: 'other' }]),
      want: ['nodeload: the Preempted Event of v1 should be related to its preemptor'],
    },
    {
      what: 'a Preempted Event naming another node',
      kube: preempting([preempted('v1', 'big', 'n1')]),
      nodeload: preempting([preempted('v1', 'big', 'n2')]),
      want: ['Preempted Events of v1 differ'],
    },
    {
      what: 'no Preempted Event',
      kube: preempting([preempted('v1', 'big', 'n1')]),
      nodeload: preempting([]),
      want: ['Preempted Events of v1 differ'],
    },
  ])('$what', ({ kube, nodeload, want }) => {
    const got = compareEvents(scenario, kube, nodeload);
    expect(got).toHaveLength(want.length);
    for (const [i, w] of want.entries()) expect(got[i]).toContain(w);
  });

  it('expects no Scheduled Event for a pod created with spec.nodeName (it is never scheduled)', () => {
    const pinned: Scenario = { ...scenario, pods: [{ name: 'p', spec: { nodeName: 'n1', containers: [] } }] };
    expect(compareEvents(pinned, bound([]), bound([]))).toEqual([]);
    expect(compareEvents(scenario, bound([]), bound([]))).toHaveLength(2);
  });

  it('compares nothing for a scenario where nodeload is meant to differ', () => {
    const differ: Scenario = { ...scenario, expectDifference: { why: 'load', nodeload: {} } };
    expect(compareEvents(differ, bound([scheduled('p', 'n1')]), bound([]))).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { type PodInfo, podKey } from '../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../load/types.js';
import type { SchedulerApi } from './binder.js';
import { runCycle } from './cycle.js';
import { defaultPreemption } from './plugins/default-preemption.js';
import { nodeResourcesFit } from './plugins/node-resources-fit.js';
import { profileOf } from './plugins/plugin.testing.js';
import { Preemption } from './preemption.js';
import { loadsFor, NOW, node, pod, snapshotOf } from './testing.js';

type Call = [string, ...string[]];

function fakeApi(calls: Call[]): SchedulerApi {
  return {
    bind: async () => ({ kind: 'bound' }),
    markUnschedulable: () => {},
    recordDecision: () => {},
    listDecisions: async () => [],
    drain: async () => {},
    nominate: (p, n) => void calls.push(['nominate', p.name, n]),
    clearNomination: (p) => void calls.push(['clear', p.name]),
    expectNode: async (p, n) => void calls.push(['expect', p.name, n]),
    preempt: (v, p, n) => void calls.push(['preempt', v.name, p.name, n]),
  };
}

const bound = (name: string, cpu: string, priority: number, extra: Partial<PodInfo> = {}): PodInfo => ({
  ...pod(name, { nodeName: 'n1', cpu, priority }),
  ...extra,
});

function attempt(p: PodInfo, pods: PodInfo[], preemption: Preemption) {
  const nodes = [node('n1', { cpu: '2' })];
  const profile = profileOf(nodeResourcesFit(), defaultPreemption({}, { random: () => 0 }));
  const { ctx, pre, verdicts } = runCycle({
    profile,
    pod: p,
    snapshot: snapshotOf(nodes, pods),
    rules: [],
    loads: loadsFor(nodes, pods),
    loadOptions: DEFAULT_LOAD_OPTIONS,
    nominated: preemption.nominator,
    now: NOW,
  });
  return preemption.run(profile, pre, ctx, verdicts);
}

describe('Preemption (the scheduler side of PostFilter)', () => {
  it('evicts the victims (not those already terminating), nominates the preemptor, records it', () => {
    const calls: Call[] = [];
    const preemption = new Preemption(fakeApi(calls), 'nodeload-scheduler');
    const pods = [bound('a', '1', 1), bound('b', '1', 2, { deleting: true })];
    const out = attempt(pod('p', { cpu: '2', priority: 100 }), pods, preemption);
    expect(calls).toEqual([
      ['preempt', 'a', 'p', 'n1'],
      ['nominate', 'p', 'n1'],
    ]);
    expect(out.sentence).toBeUndefined();
    expect(out.record).toEqual({
      node: 'n1',
      victims: [
        { namespace: 'default', name: 'b', priority: 2 },
        { namespace: 'default', name: 'a', priority: 1 },
      ],
      message: 'preempting 2 pod(s) on node n1: default/b (priority 2), default/a (priority 1).',
    });
    expect(preemption.nominatedNode(pod('p'))).toBe('n1');
    // The victim's deletion is what moves the unschedulable pods back (once).
    expect(preemption.victimGone(pods[0] as PodInfo)).toBe(true);
    expect(preemption.victimGone(pods[0] as PodInfo)).toBe(false);
    expect(preemption.victimGone({ ...(pods[1] as PodInfo) })).toBe(false);
  });

  it('clears the nominations of our own lower-priority pods on the chosen node', () => {
    const calls: Call[] = [];
    const preemption = new Preemption(fakeApi(calls), 'nodeload-scheduler');
    const ours = pod('ours', { cpu: '1', priority: 5 });
    const theirs = pod('theirs', { cpu: '1', priority: 5, schedulerName: 'default-scheduler' });
    preemption.nominator.nominate(ours, 'n1');
    preemption.onPod({ type: 'add', new: { ...theirs, nominatedNodeName: 'n1' } });
    attempt(pod('p', { cpu: '2', priority: 100 }), [bound('a', '2', 1)], preemption);
    expect(calls).toContainEqual(['clear', 'ours']);
    expect(calls).not.toContainEqual(['clear', 'theirs']);
    expect(preemption.nominator.nodeOf(podKey(ours))).toBeUndefined();
    expect(preemption.nominator.nodeOf(podKey(theirs))).toBe('n1');
  });

  it('clears the preemptor’s nomination when preemption cannot help, with the upstream sentence', () => {
    const calls: Call[] = [];
    const preemption = new Preemption(fakeApi(calls), 'nodeload-scheduler');
    const p = pod('p', { cpu: '2', priority: 100 });
    preemption.nominator.nominate(p, 'n1');
    const out = attempt(p, [bound('peer', '2', 100)], preemption);
    expect(calls).toEqual([['clear', 'p']]);
    expect(out.sentence).toBe(
      'preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
    expect(out.record).toMatchObject({ victims: [] });
    expect(out.record?.node).toBeUndefined();
    expect(preemption.nominatedNode(p)).toBeUndefined();
  });

  it('leaves everything alone for a pod that may not preempt', () => {
    const calls: Call[] = [];
    const preemption = new Preemption(fakeApi(calls), 'nodeload-scheduler');
    const out = attempt(
      { ...pod('p', { cpu: '2', priority: 100 }), preemptionPolicy: 'Never' },
      [bound('a', '2', 1)],
      preemption,
    );
    expect(calls).toEqual([]);
    expect(out.sentence).toBe('preemption: not eligible due to preemptionPolicy=Never.');
  });
});

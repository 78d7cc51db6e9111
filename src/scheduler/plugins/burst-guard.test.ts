import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../cluster/model.js';
import type { NodeLoadRule } from '../../rules/types.js';
import type { BurstView } from '../placement-log.js';
import { PlacementLog } from '../placement-log.js';
import { NOW, node, pod, rule } from '../testing.js';
import { burstGuard } from './burst-guard.js';
import { nodeLoadRules } from './node-load-rules.js';
import { cycleOf, profileOf, reasonsOf, verdictOn } from './plugin.testing.js';

const fixed = (n: number): BurstView => ({ placements: () => n });

describe('BurstGuard', () => {
  const burstRule = (max: number) => rule('web', { burst: { maxPlacements: max, windowSeconds: 10 } });

  it.each<{
    name: string;
    p: PodInfo;
    rules: NodeLoadRule[];
    placements: number;
    global?: number;
    want: string[];
  }>([
    { name: 'no limits', p: pod('p'), rules: [], placements: 100, want: [] },
    {
      name: 'rule burst limit reached',
      p: pod('p'),
      rules: [burstRule(3)],
      placements: 3,
      want: ['node(s) hit burst limit of rule web'],
    },
    { name: 'rule burst below the limit', p: pod('p'), rules: [burstRule(3)], placements: 2, want: [] },
    {
      name: 'a rule without burst adds no limit',
      p: pod('p'),
      rules: [rule('web')],
      placements: 50,
      want: [],
    },
    {
      name: 'global limit reached',
      p: pod('p'),
      rules: [],
      placements: 2,
      global: 2,
      want: ['node(s) hit burst limit'],
    },
    { name: 'global limit below', p: pod('p'), rules: [], placements: 1, global: 2, want: [] },
    {
      name: 'both limits reached: rule first, then global',
      p: pod('p'),
      rules: [burstRule(1)],
      placements: 5,
      global: 5,
      want: ['node(s) hit burst limit of rule web', 'node(s) hit burst limit'],
    },
    {
      name: 'a pod only naming a DaemonSet owner is not exempt',
      p: pod('p', { claimsDaemonSet: true }),
      rules: [burstRule(1)],
      placements: 5,
      global: 1,
      want: ['node(s) hit burst limit of rule web', 'node(s) hit burst limit'],
    },
    {
      name: 'DaemonSet pods are exempt from both',
      p: pod('p', { daemonSet: true }),
      rules: [burstRule(1)],
      placements: 5,
      global: 1,
      want: [],
    },
  ])('$name', ({ p, rules, placements, global, want }) => {
    const plugin = burstGuard({
      placements: fixed(placements),
      ...(global !== undefined ? { limit: { maxPlacements: global, windowSeconds: 5 } } : {}),
    });
    const v = verdictOn(plugin, p, node('n'), { rules });
    expect(reasonsOf(v)).toEqual(want);
    expect(v.reasons.every((r) => r.plugin === 'BurstGuard' && !r.unresolvable)).toBe(true);
  });

  it('records the checks: globally on the verdict, per rule on the rule check NodeLoadRules made', () => {
    const plugin = burstGuard({ placements: fixed(2), limit: { maxPlacements: 2, windowSeconds: 5 } });
    const { verdicts } = cycleOf(profileOf(nodeLoadRules(), plugin), pod('p'), {
      nodes: [node('n')],
      rules: [burstRule(4)],
    });
    const v = verdicts[0];
    expect(v?.burst).toEqual({ placements: 2, maxPlacements: 2, windowSeconds: 5 });
    expect(v?.rules[0]?.burst).toEqual({ placements: 2, maxPlacements: 4, windowSeconds: 10 });
    expect(v?.reasons.map((r) => [r.code, r.detail])).toEqual([
      ['BurstLimit', '2 placements in the last 5s, limit 2'],
    ]);
  });

  it('counts placements per node, in the window, and per rule only that rule’s pods', () => {
    let now = NOW;
    const log = new PlacementLog({ now: () => now });
    log.record('default/old', 'a', ['default/web']);
    now += 11_000;
    log.record('default/w1', 'a', ['default/web']);
    log.record('default/w2', 'a', ['default/web']);
    log.record('default/other', 'a', []);
    log.record('default/w3', 'b', ['default/web']);
    const plugin = burstGuard({ placements: log, limit: { maxPlacements: 5, windowSeconds: 60 } });
    const { verdicts } = cycleOf(profileOf(nodeLoadRules(), plugin), pod('p'), {
      nodes: [node('a'), node('b')],
      rules: [rule('web', { burst: { maxPlacements: 2, windowSeconds: 10 } })],
    });
    const [a, b] = verdicts;
    // a: w1 and w2 within 10 s (old is out of the window; other is not web's) → the rule's limit of 2.
    expect(a?.rules[0]?.burst?.placements).toBe(2);
    expect(a?.reasons.map((r) => r.code)).toEqual(['RuleBurstLimit']);
    // The global window (60 s) counts every pod's placement on a: 4, below the limit of 5.
    expect(a?.burst?.placements).toBe(4);
    expect(b?.feasible).toBe(true);
    // A failed bind takes its placement back.
    log.remove('default/w2');
    const again = cycleOf(profileOf(nodeLoadRules(), plugin), pod('p'), {
      nodes: [node('a')],
      rules: [rule('web', { burst: { maxPlacements: 2, windowSeconds: 10 } })],
    });
    expect(again.verdicts[0]?.feasible).toBe(true);
  });
});

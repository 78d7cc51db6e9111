/** One cycle of the default profile (runCycle via decide): how the plugins add up. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LOAD_OPTIONS } from '../load/types.js';
import { ruleKey, rulesForPod } from '../rules/rule.js';
import { runCycle } from './cycle.js';
import { NO_RULE_CHECKS, primaryReasons } from './framework/verdict.js';
import { PlacementLog } from './placement-log.js';
import { plainCandidateLoad } from './plugins/load-after.js';
import { addVerdictFigures, plainRuleCheck } from './plugins/verdict-figures.js';
import { buildProfile } from './profile/build.js';
import { decide, defaultProfile, loadsFor, NOW, node, pod, rule, snapshotOf } from './testing.js';

const share = (scores: { plugin: string; score: number }[] | undefined, plugin: string) =>
  scores?.find((s) => s.plugin === plugin)?.score;

describe('runCycle with the default profile', () => {
  const nodes = [node('c'), node('a'), node('b'), node('d', { cpu: '8' })];
  const bound = [pod('x', { nodeName: 'a', cpu: '1' }), pod('y', { nodeName: 'c', cpu: '2' })];

  it('prefers the least loaded node; the same state gives the same ranking', () => {
    const rank = () => decide(pod('p', { cpu: '500m' }), { nodes, pods: bound }).ranked.map((r) => r.node);
    // d has twice the CPU, b is idle, a carries 1 core and c 2 cores.
    expect(rank()).toEqual(['d', 'b', 'a', 'c']);
    expect(rank()).toEqual(rank());
  });

  it('breaks exact ties by node name', () => {
    const twins = [node('z'), node('m'), node('k')];
    expect(decide(pod('p', { cpu: '1' }), { nodes: twins }).ranked.map((r) => r.node)).toEqual([
      'k',
      'm',
      'z',
    ]);
  });

  it('lets balanced allocation decide between nodes LoadAware finds equally loaded: where the pod evens it', () => {
    // Both end at (cpu + mem) / 2 = 62.5 % used. "a-even" goes from 50/50 to 75/50, "b-skewed" from
    // 12.5/87.5 to 37.5/87.5. Before v1.36 the balance with the pod placed decided (a-even, 87.5 vs 75);
    // now its change does: a-even 100 → 87 scores 68, b-skewed 62 → 75 scores 81.
    const even = node('a-even', { cpu: '8', memory: '8Gi' });
    const skewed = node('b-skewed', { cpu: '8', memory: '8Gi' });
    const { ranked } = decide(pod('p', { cpu: '2' }), {
      nodes: [even, skewed],
      pods: [
        pod('e', { nodeName: 'a-even', cpu: '4', memory: '4Gi' }),
        pod('s', { nodeName: 'b-skewed', cpu: '1', memory: '7Gi' }),
      ],
    });
    expect(ranked.map((r) => r.node)).toEqual(['b-skewed', 'a-even']);
    const [first, second] = ranked;
    expect(share(first?.scores, 'LoadAware')).toBeCloseTo(share(second?.scores, 'LoadAware') as number, 9);
    expect(share(first?.scores, 'NodeResourcesBalancedAllocation')).toBe(81);
    expect(share(second?.scores, 'NodeResourcesBalancedAllocation')).toBe(68);
  });

  it('sums weight × score over the Score plugins', () => {
    const { ranked } = decide(pod('p', { cpu: '1', memory: '1Gi' }), { nodes });
    for (const r of ranked) {
      expect(r.score).toBeCloseTo(
        r.scores.reduce((sum, s) => sum + s.weight * s.score, 0),
        9,
      );
      expect(r.scores.find((s) => s.plugin === 'LoadAware')?.weight).toBe(5);
    }
  });

  it('ranks no infeasible node', () => {
    const { ranked, verdicts } = decide(pod('p', { cpu: '2' }), {
      nodes: [node('small', { cpu: '1' }), node('big')],
    });
    expect(ranked.map((r) => r.node)).toEqual(['big']);
    expect(verdicts.find((v) => v.node === 'small')?.feasible).toBe(false);
  });

  it('reports every failure of a node, in plugin order; the first plugin’s are the primary ones', () => {
    const { verdicts } = decide(pod('p', { cpu: '2', memory: '20Gi' }), {
      nodes: [node('n2', { unschedulable: true, cpu: '1' })],
      rules: [rule('web', { allowedNodes: ['n1'] })],
    });
    const v = verdicts[0];
    expect(v?.reasons.map((r) => [r.plugin, r.reason])).toEqual([
      ['NodeUnschedulable', 'node(s) were unschedulable'],
      ['NodeResourcesFit', 'Insufficient cpu'],
      ['NodeResourcesFit', 'Insufficient memory'],
      ['NodeLoadRules', 'node(s) not allowed by rule web'],
      ['NodeLoadRules', 'node(s) exceed rule web cpu 80%'],
      ['NodeLoadRules', 'node(s) exceed rule web memory 80%'],
    ]);
    expect(primaryReasons(v as NonNullable<typeof v>).map((r) => r.reason)).toEqual([
      'node(s) were unschedulable',
    ]);
  });

  it('filters and ranks only the nodes named (an extender call), failing names it does not know', () => {
    const base = decide(pod('p', { cpu: '500m' }), { nodes, pods: bound });
    const { verdicts, ranked } = runCycle({
      profile: defaultProfile(),
      pod: pod('p', { cpu: '500m' }),
      snapshot: snapshotOf(nodes, bound),
      rules: [],
      loads: loadsFor(nodes, bound),
      loadOptions: DEFAULT_LOAD_OPTIONS,
      nodeNames: ['c', 'ghost', 'a', 'c'],
      now: NOW,
    });
    expect(verdicts.map((v) => [v.node, v.feasible])).toEqual([
      ['c', true],
      ['a', true],
      ['ghost', false],
    ]);
    expect(verdicts[2]?.reasons.map((r) => r.reason)).toEqual(['node(s) had no load figure yet']);
    // Same order among them as over every node.
    expect(ranked.map((r) => r.node)).toEqual(
      base.ranked.map((r) => r.node).filter((n) => n === 'a' || n === 'c'),
    );
  });

  it('samples percentageOfNodesToScore of a large cluster from a rotating start, as kube-scheduler', () => {
    const many = Array.from({ length: 1000 }, (_, i) => node(`n${String(i).padStart(4, '0')}`));
    const input = {
      pod: pod('p', { cpu: '100m' }),
      snapshot: snapshotOf(many),
      rules: [],
      loads: loadsFor(many),
      loadOptions: DEFAULT_LOAD_OPTIONS,
      now: NOW,
    };
    const adaptive = runCycle({ ...input, profile: defaultProfile(), sampleFrom: 990 });
    expect([adaptive.examined, adaptive.ranked.length]).toEqual([420, 420]); // 50 − 1000/125 = 42 %
    expect(adaptive.verdicts[0]?.node).toBe('n0990');
    expect(adaptive.nextStart).toBe(410); // (990 + 420) mod 1000
    const fixed = runCycle({
      ...input,
      profile: buildProfile(
        'nodeload-scheduler',
        { percentageOfNodesToScore: 100, pluginConfig: [] },
        {
          placements: new PlacementLog({ now: () => NOW }),
        },
      ),
      sampleFrom: 0,
    });
    expect(fixed.examined).toBe(1000);
    // Without sampleFrom (the what-if, a nominated pod), every node.
    expect(runCycle({ ...input, profile: defaultProfile() }).examined).toBe(1000);
  });
});

describe("the verdicts' rule checks", () => {
  const nodes = [node('a', { cpu: '4', memory: '8Gi' }), node('b', { cpu: '4', memory: '8Gi' }), node('c')];
  const bound = [pod('x', { nodeName: 'a', cpu: '2', memory: '2Gi' })];
  const input = (rules: ReturnType<typeof rule>[], placements = new PlacementLog({ now: () => NOW })) => {
    const p = pod('p', { cpu: '500m', memory: '1Gi' });
    return {
      profile: defaultProfile({ placements }),
      pod: p,
      snapshot: snapshotOf(nodes, bound),
      rules: rulesForPod(rules, p),
      loads: loadsFor(nodes, bound),
      loadOptions: DEFAULT_LOAD_OPTIONS,
      now: NOW,
    };
  };
  const rules = [rule('api', { maxMemory: 30 }), rule('web', { maxCPU: 60, allowedNodes: ['a', 'b'] })];
  const plain = (vs: { node: string; rules: readonly Parameters<typeof plainRuleCheck>[0][] }[]) =>
    vs.map((v) => [v.node, v.rules.map(plainRuleCheck)]);

  it('a full cycle gives every examined node one check per rule, with its margins', () => {
    const { verdicts } = runCycle(input(rules));
    const a = verdicts.find((v) => v.node === 'a');
    // a: cpu (2 + 0.5) / 4 = 62.5 %, memory (2 + 1) / 8 = 37.5 % with the pod.
    expect(a?.rules.map(plainRuleCheck)).toEqual([
      {
        rule: 'api',
        namespace: 'default',
        allowed: true,
        bypassed: false,
        maxCPU: 80,
        maxMemory: 30,
        cpuMargin: 17.5,
        memoryMargin: -7.5,
      },
      {
        rule: 'web',
        namespace: 'default',
        allowed: true,
        bypassed: false,
        maxCPU: 60,
        maxMemory: 80,
        cpuMargin: -2.5,
        memoryMargin: 42.5,
      },
    ]);
    expect(verdicts.find((v) => v.node === 'c')?.rules.map((r) => [r.rule, r.allowed])).toEqual([
      ['api', true],
      ['web', false],
    ]);
  });

  it('a deferring cycle decides the same and leaves them to addVerdictFigures, which builds the same', () => {
    const full = runCycle(input(rules));
    const deferred = runCycle({ ...input(rules), deferVerdictFigures: true });
    expect(deferred.verdicts.map((v) => [v.node, v.reasons])).toEqual(
      full.verdicts.map((v) => [v.node, v.reasons]),
    );
    // No rule checks yet, and no load figures but where a node is over a threshold (a: memory 37.5 % >
    // api's 30 %), whose reasons' messages read them; c is not allowed by web, b fits.
    const state = () =>
      deferred.verdicts.map((v) => [
        v.node,
        v.feasible,
        v.rules === NO_RULE_CHECKS,
        v.load !== undefined,
        v.placedOn !== undefined,
      ]);
    expect(state()).toEqual([
      ['a', false, true, true, false],
      ['b', true, true, false, true],
      ['c', false, true, false, true],
    ]);
    const unbuilt = (v: (typeof deferred.verdicts)[number]) => v.rules === NO_RULE_CHECKS;
    // Only the verdicts handed over (an explanation's kept candidates) get them.
    const kept = deferred.verdicts.slice(0, 1);
    addVerdictFigures(kept, deferred.ctx);
    expect(deferred.verdicts.slice(1).every(unbuilt)).toBe(true);
    addVerdictFigures(deferred.verdicts, deferred.ctx);
    const built = deferred.verdicts.map((v) => v.load);
    addVerdictFigures(deferred.verdicts, deferred.ctx); // once: a second call changes nothing
    expect(deferred.verdicts.map((v) => v.load)).toEqual(built);
    expect(plain(deferred.verdicts)).toEqual(plain(full.verdicts));
    const figures = (vs: typeof full.verdicts) =>
      vs.map((v) => [v.node, v.placedOn, v.load && plainCandidateLoad(v.load)]);
    expect(figures(deferred.verdicts)).toEqual(figures(full.verdicts));
    expect(deferred.verdicts.every((v) => v.rules.length === 2 && v.load !== undefined)).toBe(true);
  });

  it('builds none for a node the filtering stopped at before NodeLoadRules, deferred or not', () => {
    // 3 cores: a (2 of 4 bound) fails NodeResourcesFit, the first plugin; b and c fit.
    const big = { ...input([rules[0] as ReturnType<typeof rule>]), pod: pod('p', { cpu: '3' }) };
    for (const deferVerdictFigures of [false, true]) {
      const r = runCycle({ ...big, everyReason: false, deferVerdictFigures });
      addVerdictFigures(r.verdicts, r.ctx);
      expect(r.verdicts.map((v) => [v.node, v.feasible, v.load !== undefined, v.rules.length])).toEqual([
        ['a', false, false, 0],
        ['b', true, true, 1],
        ['c', true, true, 1],
      ]);
    }
    // Unschedulable: every node is filtered again with every plugin, so each gets its load and checks.
    const huge = {
      ...input(rules),
      pod: pod('p', { cpu: '64' }),
      everyReason: false,
      deferVerdictFigures: true,
    };
    const r = runCycle(huge);
    addVerdictFigures(r.verdicts, r.ctx);
    expect(r.verdicts.map((v) => v.rules.length)).toEqual([2, 2, 2]);
  });

  it('a rule with a burst limit has its checks built in the filter, carrying the burst figures', () => {
    const placements = new PlacementLog({ now: () => NOW });
    const limited = [rule('web', { burst: { maxPlacements: 2, windowSeconds: 30 } })];
    placements.record('default/q', 'a', [ruleKey(limited[0] as ReturnType<typeof rule>)]);
    const { verdicts } = runCycle({ ...input(limited, placements), deferVerdictFigures: true });
    const a = verdicts.find((v) => v.node === 'a');
    expect(a?.rules.map((r) => [r.rule, r.burst])).toEqual([
      ['web', { placements: 1, maxPlacements: 2, windowSeconds: 30 }],
    ]);
  });
});

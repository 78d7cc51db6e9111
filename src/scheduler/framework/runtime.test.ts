import { describe, expect, it } from 'vitest';
import { DEFAULT_LOAD_OPTIONS } from '../../load/types.js';
import { buildCandidates, unschedulableMessage } from '../explain.js';
import { profileOf } from '../plugins/plugin.testing.js';
import { node, pod, snapshotOf } from '../testing.js';
import { EVERY_REASON_MAX_NODES, runFilters, runPreEnqueue } from './runtime.js';
import { runPreBind, runReserve, runUnreserve } from './runtime-bind.js';
import { runScores } from './runtime-score.js';
import type { AnyPlugin, CycleContext, CycleState } from './types.js';
import { addReason, NO_REASONS, NO_RULE_CHECKS, primaryReasons } from './verdict.js';

function ctxOf(nodes: string[]): CycleContext {
  return {
    pod: pod('p'),
    snapshot: snapshotOf(nodes.map((n) => node(n))),
    rules: [],
    loadOptions: DEFAULT_LOAD_OPTIONS,
    now: 0,
    namespaceLabels: () => undefined,
  };
}

/** A Filter plugin failing the listed nodes, logging each call. */
function failing(name: string, nodes: string[], log: string[] = []): AnyPlugin {
  return {
    name,
    filter(_s, _c, n, v) {
      log.push(`${name}:${n.name}`);
      if (nodes.includes(n.name))
        addReason(v, { plugin: name, code: `${name}Code`, reason: `${name} says no`, detail: '' });
    },
  };
}

/** A Score plugin with fixed raw scores per node (and an optional normalize). */
function scoring(name: string, raw: Record<string, number>, extra: Partial<AnyPlugin> = {}): AnyPlugin {
  return { name, score: (_s, _c, n) => raw[n.name] ?? 0, ...extra };
}

describe('runFilters', () => {
  it('starts verdicts on the shared empty lists and gives each its own once a check fails', () => {
    const profile = profileOf(failing('A', ['n1']), failing('B', ['n1', 'n2']));
    const { verdicts } = runFilters(profile, ctxOf(['n1', 'n2', 'n3']));
    const [n1, n2, n3] = verdicts;
    expect(n3?.reasons).toBe(NO_REASONS);
    expect(n3?.rules).toBe(NO_RULE_CHECKS);
    expect(n1?.reasons.map((r) => r.plugin)).toEqual(['A', 'B']);
    expect(n2?.reasons.map((r) => r.plugin)).toEqual(['B']);
    expect(n1?.reasons).not.toBe(n2?.reasons);
    expect(NO_REASONS).toHaveLength(0);
    expect(() => (NO_REASONS as unknown[]).push(1)).toThrow(TypeError);
  });

  it('runs every filter on every node in profile order and keeps all reasons', () => {
    const log: string[] = [];
    const profile = profileOf(failing('A', ['n2'], log), failing('B', ['n1', 'n2'], log));
    const { verdicts, feasible } = runFilters(profile, ctxOf(['n1', 'n2', 'n3']));
    expect(log).toEqual(['A:n1', 'B:n1', 'A:n2', 'B:n2', 'A:n3', 'B:n3']);
    expect(verdicts.map((v) => [v.node, v.feasible, v.reasons.map((r) => r.plugin)])).toEqual([
      ['n1', false, ['B']],
      ['n2', false, ['A', 'B']],
      ['n3', true, []],
    ]);
    expect(feasible.map((n) => n.name)).toEqual(['n3']);
    // The FailedScheduling message counts a node under its first failing plugin.
    expect(primaryReasons(verdicts[1] as (typeof verdicts)[number]).map((r) => r.plugin)).toEqual(['A']);
  });

  it('without everyReason stops at a node’s first failing plugin, as upstream’s RunFilterPlugins', () => {
    const log: string[] = [];
    const profile = profileOf(failing('A', ['n2'], log), failing('B', ['n1', 'n2'], log));
    const { verdicts } = runFilters(profile, ctxOf(['n1', 'n2', 'n3']), undefined, undefined, false);
    expect(log).toEqual(['A:n1', 'B:n1', 'A:n2', 'A:n3', 'B:n3']);
    expect(verdicts.map((v) => [v.node, v.feasible, v.reasons.map((r) => r.plugin)])).toEqual([
      ['n1', false, ['B']],
      ['n2', false, ['A']],
      ['n3', true, []],
    ]);
  });

  it('without everyReason filters again with every plugin when no node is feasible', () => {
    const log: string[] = [];
    const profile = profileOf(failing('A', ['n1', 'n2'], log), failing('B', ['n1', 'n2'], log));
    const { verdicts, feasible } = runFilters(profile, ctxOf(['n1', 'n2']), undefined, undefined, false);
    expect(feasible).toEqual([]);
    // First pass stops at A; the second runs A and B on both nodes.
    expect(log).toEqual(['A:n1', 'A:n2', 'A:n1', 'B:n1', 'A:n2', 'B:n2']);
    expect(verdicts.map((v) => v.reasons.map((r) => r.plugin))).toEqual([
      ['A', 'B'],
      ['A', 'B'],
    ]);
  });

  it.each<[number, boolean]>([
    [EVERY_REASON_MAX_NODES, true],
    [EVERY_REASON_MAX_NODES + 1, false],
  ])('with %i nodes, every reason by default: %s', (n, every) => {
    const names = Array.from({ length: n }, (_, i) => `n${i}`);
    const profile = profileOf(failing('A', ['n0']), failing('B', ['n0']));
    const { verdicts } = runFilters(profile, ctxOf(names));
    expect(verdicts[0]?.reasons.length).toBe(every ? 2 : 1);
  });

  it.each<[string, { numToFind: number; start: number }, string[], string[], number]>([
    // nodes n1..n5, n2 and n4 infeasible
    ['stops once enough are feasible', { numToFind: 2, start: 0 }, ['n1', 'n2', 'n3'], ['n1', 'n3'], 3],
    ['starts at the rotating index', { numToFind: 2, start: 2 }, ['n3', 'n4', 'n5'], ['n3', 'n5'], 3],
    [
      'wraps around the end',
      { numToFind: 3, start: 3 },
      ['n4', 'n5', 'n1', 'n2', 'n3'],
      ['n5', 'n1', 'n3'],
      5,
    ],
    [
      'examines everything when too few fit',
      { numToFind: 5, start: 1 },
      ['n2', 'n3', 'n4', 'n5', 'n1'],
      ['n3', 'n5', 'n1'],
      5,
    ],
    ['a start past the end is taken modulo', { numToFind: 1, start: 7 }, ['n3'], ['n3'], 1],
  ])('with a limit: %s', (_, limit, examinedNodes, feasibleNodes, examined) => {
    const profile = profileOf(failing('A', ['n2', 'n4']));
    const ctx = ctxOf(['n1', 'n2', 'n3', 'n4', 'n5']);
    const out = runFilters(profile, ctx, ctx.snapshot.list(), limit);
    expect(out.verdicts.map((v) => v.node)).toEqual(examinedNodes);
    expect(out.feasible.map((n) => n.name)).toEqual(feasibleNodes);
    expect(out.examined).toBe(examined);
  });

  it('keeps every verdict when a limited search examines more nodes than it set room for', () => {
    // Room for twice the nodes to find (2); all five are examined before n5 fits.
    const profile = profileOf(failing('A', ['n1', 'n2', 'n3', 'n4']));
    const ctx = ctxOf(['n1', 'n2', 'n3', 'n4', 'n5']);
    const out = runFilters(profile, ctx, ctx.snapshot.list(), { numToFind: 1, start: 0 });
    expect(out.verdicts.map((v) => [v.node, v.feasible])).toEqual([
      ['n1', false],
      ['n2', false],
      ['n3', false],
      ['n4', false],
      ['n5', true],
    ]);
    expect(out.feasible.map((n) => n.name)).toEqual(['n5']);
    expect(out.examined).toBe(5);
  });

  it('skips the Filter of a plugin whose PreFilter said skip', () => {
    const log: string[] = [];
    const skipper: AnyPlugin = { ...failing('S', ['n1'], log), preFilter: () => ({ skip: true }) };
    const { verdicts, state } = runFilters(profileOf(skipper, failing('B', [], log)), ctxOf(['n1']));
    expect(log).toEqual(['B:n1']);
    expect(state.skipFilter.has('S')).toBe(true);
    expect(verdicts[0]?.feasible).toBe(true);
  });

  it('gives every node a PreFilter rejection, named after its plugin', () => {
    const rejecting: AnyPlugin = {
      name: 'R',
      preFilter: () => ({
        reject: { code: 'Nope', reason: 'pod cannot run', detail: 'd', unresolvable: true },
      }),
    };
    const { verdicts, feasible } = runFilters(profileOf(rejecting), ctxOf(['n1', 'n2']));
    expect(feasible).toEqual([]);
    for (const v of verdicts) {
      expect(v.reasons).toEqual([
        {
          plugin: 'R',
          code: 'Nope',
          reason: 'pod cannot run',
          detail: 'd',
          unresolvable: true,
          preFilter: true,
        },
      ]);
    }
    // kube-scheduler names a PreFilter rejection once, uncounted.
    expect(unschedulableMessage(2, verdicts)).toBe('0/2 nodes are available: pod cannot run.');
  });

  it('shares the cycle state between PreFilter and Filter', () => {
    const p: AnyPlugin = {
      name: 'P',
      preFilter(state) {
        state.write('P/limit', 'n2');
        return undefined;
      },
      filter(state, _c, n, v) {
        if (state.read<string>('P/limit') === n.name)
          addReason(v, { plugin: 'P', code: 'X', reason: 'x', detail: '' });
      },
    };
    expect(runFilters(profileOf(p), ctxOf(['n1', 'n2'])).feasible.map((n) => n.name)).toEqual(['n1']);
  });
});

describe('runScores', () => {
  const ctx = ctxOf(['a', 'b', 'c']);
  const all = () => ctx.snapshot.list();

  it('sums weight × normalized score and lists each plugin’s part', () => {
    const profile = profileOf(
      [scoring('X', { a: 10, b: 50, c: 100 }), 2],
      [scoring('Y', { a: 100, b: 60, c: 0 }), 1],
    );
    const ranked = runScores(profile, runFilters(profile, ctx).state, ctx, all());
    expect(ranked.map((r) => [r.node, r.score])).toEqual([
      ['c', 200],
      ['b', 160],
      ['a', 120],
    ]);
    expect(ranked.find((r) => r.node === 'a')?.scores).toEqual([
      { plugin: 'X', weight: 2, score: 10 },
      { plugin: 'Y', weight: 1, score: 100 },
    ]);
    // Built on read from the cycle's table, and serialised like plain data (history, Events, GraphQL).
    expect(JSON.parse(JSON.stringify(ranked[0]))).toEqual({
      node: 'c',
      score: 200,
      scores: [
        { plugin: 'X', weight: 2, score: 100 },
        { plugin: 'Y', weight: 1, score: 0 },
      ],
    });
    const candidate = buildCandidates(runFilters(profile, ctx).verdicts, ranked)[0];
    expect(candidate?.scoreParts?.scores).toEqual(ranked[0]?.scores);
  });

  it('breaks ties by node name, whatever the snapshot order', () => {
    const c = ctxOf(['z', 'm', 'k']);
    const profile = profileOf(scoring('X', {}));
    expect(runScores(profile, runFilters(profile, c).state, c, c.snapshot.list()).map((r) => r.node)).toEqual(
      ['k', 'm', 'z'],
    );
  });

  it('normalizes over the nodes in order before weighting', () => {
    const seen: number[][] = [];
    const x = scoring(
      'X',
      { a: 1, b: 2, c: 4 },
      {
        normalizeScore(_s: CycleState, _c: CycleContext, scores: Float64Array) {
          seen.push([...scores]);
          for (let i = 0; i < scores.length; i++) scores[i] = (scores[i] as number) * 25;
        },
      },
    );
    const profile = profileOf([x, 3]);
    const ranked = runScores(profile, runFilters(profile, ctx).state, ctx, all());
    expect(seen).toEqual([[1, 2, 4]]);
    expect(ranked.map((r) => [r.node, r.score])).toEqual([
      ['c', 300],
      ['b', 150],
      ['a', 75],
    ]);
  });

  it('normalizes each cycle over its own nodes only, after a larger cycle', () => {
    const seen: number[][] = [];
    const x = scoring(
      'X',
      { a: 1, b: 2, c: 4 },
      { normalizeScore: (_s: CycleState, _c: CycleContext, scores: Float64Array) => seen.push([...scores]) },
    );
    const profile = profileOf(x);
    const { state } = runFilters(profile, ctx);
    runScores(profile, state, ctx, all());
    runScores(profile, state, ctx, [ctx.snapshot.get('c')!]);
    runScores(profile, state, ctx, all());
    expect(seen).toEqual([[1, 2, 4], [4], [1, 2, 4]]);
  });

  it('leaves out plugins whose PreScore skipped and plugins of weight 0', () => {
    const skipped = scoring('S', { a: 100 }, { preScore: () => 'skip' as const });
    const profile = profileOf(skipped, [scoring('Z', { b: 100 }), 0], scoring('K', { c: 1 }));
    const { state } = runFilters(profile, ctx);
    const ranked = runScores(profile, state, ctx, all());
    expect(state.skipScore.has('S')).toBe(true);
    expect(ranked[0]?.node).toBe('c');
    expect(ranked.every((r) => r.scores.map((s) => s.plugin).join() === 'K')).toBe(true);
  });

  it('scores only the nodes given (the feasible ones), and nothing without them', () => {
    const profile = profileOf(scoring('X', { a: 5, b: 9 }));
    const { state } = runFilters(profile, ctx);
    expect(runScores(profile, state, ctx, [ctx.snapshot.get('a')!]).map((r) => r.node)).toEqual(['a']);
    expect(runScores(profile, state, ctx, [])).toEqual([]);
  });
});

describe('Reserve, Permit, PreBind, PreEnqueue', () => {
  const ctx = ctxOf(['n']);
  function reserving(name: string, log: string[], refuse = false): AnyPlugin {
    return {
      name,
      reserve: (_s, _c, node) => {
        log.push(`reserve ${name} ${node}`);
        return refuse ? `${name} refuses` : undefined;
      },
      unreserve: (_s, _c, node) => {
        log.push(`unreserve ${name} ${node}`);
      },
    };
  }

  it('reserves in order and unreserves nothing on success', () => {
    const log: string[] = [];
    const profile = profileOf(reserving('A', log), reserving('B', log));
    expect(runReserve(profile, runFilters(profile, ctx).state, ctx, 'n')).toBeUndefined();
    expect(log).toEqual(['reserve A n', 'reserve B n']);
  });

  it('on a refusal stops and unreserves in reverse order, the refusing plugin included', () => {
    const log: string[] = [];
    const profile = profileOf(reserving('A', log), reserving('B', log, true), reserving('C', log));
    expect(runReserve(profile, runFilters(profile, ctx).state, ctx, 'n')).toBe('B refuses');
    expect(log).toEqual(['reserve A n', 'reserve B n', 'unreserve B n', 'unreserve A n']);
  });

  it('a Permit refusal unreserves every Reserve plugin, in reverse order', () => {
    const log: string[] = [];
    const denying: AnyPlugin = { name: 'P', permit: () => 'not now' };
    const profile = profileOf(reserving('A', log), reserving('B', log), denying);
    expect(runReserve(profile, runFilters(profile, ctx).state, ctx, 'n')).toBe('not now');
    expect(log).toEqual(['reserve A n', 'reserve B n', 'unreserve B n', 'unreserve A n']);
    log.length = 0;
    runUnreserve(profile, runFilters(profile, ctx).state, ctx, 'n');
    expect(log).toEqual(['unreserve B n', 'unreserve A n']);
  });

  it('PreBind stops at the first error, prefixed with the plugin name', async () => {
    const calls: string[] = [];
    const ok: AnyPlugin = { name: 'Ok', preBind: async () => void calls.push('Ok') };
    const bad: AnyPlugin = {
      name: 'Bad',
      preBind: async () => {
        calls.push('Bad');
        return 'claim not bound';
      },
    };
    const never: AnyPlugin = { name: 'Never', preBind: async () => void calls.push('Never') };
    const profile = profileOf(ok, bad, never);
    const why = await runPreBind(
      profile,
      runFilters(profile, ctx).state,
      ctx,
      'n',
      new AbortController().signal,
    );
    expect(why).toBe('Bad: claim not bound');
    expect(calls).toEqual(['Ok', 'Bad']);
  });

  it('PreEnqueue returns the first plugin’s reason to wait', () => {
    const profile = profileOf(
      { name: 'A', preEnqueue: () => undefined },
      { name: 'B', preEnqueue: () => 'gated' },
      { name: 'C', preEnqueue: () => 'also' },
    );
    expect(runPreEnqueue(profile, { pod: pod('p') })).toBe('gated');
    expect(runPreEnqueue(profileOf(), { pod: pod('p') })).toBeUndefined();
  });
});

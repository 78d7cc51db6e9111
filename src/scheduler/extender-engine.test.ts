/** The extender front door: the loop's cycle over the nodes kube-scheduler names, binds that assume. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type PodInfo, podKey } from '../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../load/types.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { BindOutcome } from './binder.js';
import type { Decision } from './explain.js';
import { ExtenderEngine, type ExtenderFilterOutcome } from './extender-engine.js';
import { PlacementLog } from './placement-log.js';
import { buildProfile, extenderProfileConfig } from './profile/build.js';
import { TokenBucket } from './ratelimit.js';
import { decide, loadsFor, NOW, node, pod, rule, snapshotOf } from './testing.js';

const NODES = [node('a'), node('b'), node('c'), node('d', { cpu: '8' })];
const BOUND = [pod('x', { nodeName: 'a', cpu: '2' }), pod('y', { nodeName: 'b', cpu: '1' })];
const WEB = rule('web', {
  maxCPU: 70,
  allowedNodes: ['a', 'b', 'd'],
  podSelector: { matchLabels: { tier: 'web' } },
});
const webPod = (name: string, cpu = '1') => pod(name, { cpu, labels: { tier: 'web' } });

function setup(
  opts: {
    rules?: NodeLoadRule[];
    bind?: (pod: { name: string }) => BindOutcome;
    maxBindWaitMs?: number;
  } = {},
) {
  const snapshot = snapshotOf(NODES, BOUND);
  const placements = new PlacementLog({ now: () => NOW });
  const published: Decision[] = [];
  const events: Decision[] = [];
  const assumed = new Map<string, string>();
  const assumedPods = new Map<string, PodInfo>();
  const binds: string[] = [];
  const pods = new Map<string, PodInfo>();
  const engine = new ExtenderEngine({
    profile: buildProfile('nodeload-scheduler', extenderProfileConfig(undefined), { placements }),
    snapshot,
    cache: { pods, namespaces: new Map() },
    // The load tracker counts assumed pods as bound ones.
    loads: { all: () => loadsFor(NODES, [...BOUND, ...assumedPods.values()]), options: DEFAULT_LOAD_OPTIONS },
    api: {
      bind: async (p, n) => {
        binds.push(`${p.name}->${n}`);
        return opts.bind?.(p) ?? { kind: 'bound' };
      },
      recordDecision: (d) => events.push(d),
    },
    bindBucket: new TokenBucket({ qps: 100, burst: 100 }),
    rules: () => opts.rules ?? [WEB],
    assume: (p, n) => {
      assumed.set(podKey(p), n);
      assumedPods.set(podKey(p), { ...p, nodeName: n });
      snapshot.assume(p, n);
    },
    unassume: (key) => {
      assumed.delete(key);
      assumedPods.delete(key);
      snapshot.forget(key);
    },
    isAssumed: (key) => assumed.has(key),
    publish: (d) => published.push(d),
    instance: 'nodeload-scheduler-gw',
    now: () => NOW,
    ...(opts.maxBindWaitMs === undefined ? {} : { maxBindWaitMs: opts.maxBindWaitMs }),
  });
  return { engine, published, events, assumed, binds, pods };
}

describe('ExtenderEngine.filter', () => {
  it('lets a pod outside every rule through without a cycle or a record', async () => {
    const { engine, published } = setup();
    expect(await engine.filter(pod('plain', { cpu: '1' }), ['a', 'c'])).toEqual({ kind: 'pass-through' });
    expect(engine.prioritize(pod('plain', { cpu: '1' }), ['a', 'c'])).toEqual({ kind: 'pass-through' });
    expect(published).toEqual([]);
    expect(engine.trackedAttempts).toBe(0);
  });

  it.each([
    // node, feasible, first reason (the standalone scheduler's words)
    ['a', false, 'node(s) exceed rule web cpu 70%'], // 2 + 1 of 4 cores = 75 %
    ['b', true, undefined], // 1 + 1 of 4 = 50 %
    ['c', false, 'node(s) not allowed by rule web'],
    ['d', true, undefined],
    ['ghost', false, 'node(s) had no load figure yet'],
  ])('judges node %s only as nodeload’s own plugins do', async (name, feasible, reason) => {
    const { engine } = setup();
    const out = await engine.filter(webPod('p'), ['a', 'b', 'c', 'd', 'ghost']);
    if (out.kind !== 'decided') throw new Error('expected a cycle');
    const v = out.verdicts.find((x) => x.node === name);
    expect(v?.feasible).toBe(feasible);
    expect(v?.reasons[0]?.reason).toBe(reason);
  });

  it('uses the same words as the standalone scheduler for the same node', async () => {
    const { engine } = setup();
    const out = await engine.filter(webPod('p'), ['a', 'c']);
    const native = decide(webPod('p'), { nodes: NODES, pods: BOUND, rules: [WEB] }).verdicts;
    if (out.kind !== 'decided') throw new Error('expected a cycle');
    for (const v of out.verdicts) {
      const n = native.find((x) => x.node === v.node);
      expect(v.reasons).toEqual(n?.reasons.filter((r) => r.plugin === 'NodeLoadRules'));
    }
  });

  it('judges only the nodes named, and records an attempt no node survives', async () => {
    const { engine, published } = setup();
    const out = await engine.filter(webPod('p'), ['a', 'c']);
    expect(out.kind === 'decided' && out.verdicts.map((v) => v.node)).toEqual(['a', 'c']);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      result: 'unschedulable',
      engine: 'extender',
      totalNodes: 2,
      feasibleNodes: 0,
      message:
        '0/2 nodes are available: 1 node(s) exceed rule web cpu 70%, 1 node(s) not allowed by rule web.',
    });
  });
});

describe('ExtenderEngine.prioritize', () => {
  it('scores 0–100, least loaded after placement first, 0 for a node that does not fit', () => {
    const { engine } = setup();
    const out = engine.prioritize(webPod('p'), ['a', 'b', 'd']);
    if (out.kind !== 'decided') throw new Error('expected a cycle');
    const score = Object.fromEntries(out.scores.map((s) => [s.node, s.score]));
    expect(score['a']).toBe(0);
    expect(score['d']).toBeGreaterThan(score['b'] as number);
    for (const s of out.scores) expect(s.score).toBeGreaterThanOrEqual(0);
    for (const s of out.scores) expect(s.score).toBeLessThanOrEqual(100);
  });
});

describe('ExtenderEngine.bind', () => {
  it('assumes, binds and records the decision like a native one, marked extender', async () => {
    const { engine, published, events, assumed, binds, pods } = setup();
    const p = webPod('p');
    pods.set(podKey(p), p);
    await engine.filter(p, ['a', 'b', 'd']);
    engine.prioritize(p, ['b', 'd']);
    expect(await engine.bind({ namespace: 'default', name: 'p', uid: p.uid }, 'b')).toBeUndefined();
    expect(binds).toEqual(['p->b']);
    expect(assumed.get('default/p')).toBe('b');
    expect(events).toHaveLength(1);
    const d = published.at(-1);
    expect(d).toMatchObject({
      result: 'scheduled',
      node: 'b',
      engine: 'extender',
      attempts: 1,
      totalNodes: 3,
      feasibleNodes: 2,
      message: 'Successfully assigned default/p to b',
      rules: [{ name: 'web', maxCPU: 70 }],
    });
    expect(d?.candidates.map((c) => [c.node, c.rank])).toEqual([
      ['d', 1],
      ['b', 2],
      ['a', undefined],
    ]);
    expect(engine.trackedAttempts).toBe(0);
  });

  it('counts kube-scheduler’s retries as attempts of one pod', async () => {
    const { engine, published, pods } = setup();
    const p = webPod('p');
    pods.set(podKey(p), p);
    await engine.filter(p, ['c']);
    await engine.filter(p, ['b']);
    await engine.bind({ namespace: 'default', name: 'p', uid: p.uid }, 'b');
    expect(published.map((d) => [d.result, d.attempts])).toEqual([
      ['unschedulable', 1],
      ['scheduled', 2],
    ]);
  });

  it.each<[string, BindOutcome, boolean]>([
    [
      'a refused bind takes the assumption back',
      { kind: 'failed', message: 'forbidden', status: 403 },
      false,
    ],
    ['a bind of unknown outcome keeps it', { kind: 'failed', message: 'timeout' }, true],
    ['a pod bound by someone else', { kind: 'already-bound', message: 'already assigned' }, false],
  ])('%s', async (_name, outcome, stillAssumed) => {
    const { engine, assumed, pods } = setup({ bind: () => outcome });
    const p = webPod('p');
    pods.set(podKey(p), p);
    await engine.filter(p, ['b']);
    const err = await engine.bind({ namespace: 'default', name: 'p', uid: p.uid }, 'b');
    expect(err).toBe(`Binding rejected: ${outcome.kind === 'bound' ? '' : outcome.message}`);
    expect(assumed.has('default/p')).toBe(stillAssumed);
  });

  it('remembers the pods it bound, not those whose bind it saw refused', async () => {
    const { engine, pods } = setup({
      bind: (p) => (p.name === 'no' ? { kind: 'pod-gone', message: 'gone' } : { kind: 'bound' }),
    });
    for (const name of ['yes', 'no']) pods.set(`default/${name}`, webPod(name));
    await engine.bind({ namespace: 'default', name: 'yes', uid: 'uid-yes' }, 'b');
    await engine.bind({ namespace: 'default', name: 'no', uid: 'uid-no' }, 'b');
    expect([engine.boundHere('uid-yes'), engine.boundHere('uid-no')]).toEqual([true, false]);
  });

  it('refuses a replaced pod and a bound one without calling the API', async () => {
    const { engine, binds, pods } = setup();
    pods.set('default/p', webPod('p'));
    pods.set('default/q', pod('q', { nodeName: 'a', labels: { tier: 'web' } }));
    expect(await engine.bind({ namespace: 'default', name: 'p', uid: 'other' }, 'b')).toMatch(/replaced/);
    expect(await engine.bind({ namespace: 'default', name: 'q', uid: 'uid-q' }, 'b')).toBe(
      'pod default/q is already bound to a',
    );
    expect(binds).toEqual([]);
  });

  it('binds a pod outside every rule, assumed (its load counts for everyone) but not recorded', async () => {
    const { engine, published, assumed, pods } = setup();
    pods.set('default/plain', pod('plain', { cpu: '1' }));
    expect(await engine.bind({ namespace: 'default', name: 'plain', uid: 'uid-plain' }, 'c')).toBeUndefined();
    expect(assumed.get('default/plain')).toBe('c');
    expect(published).toEqual([]);
  });

  it('binds a pod it has never seen by name and UID', async () => {
    const { engine, binds, assumed } = setup();
    expect(await engine.bind({ namespace: 'default', name: 'new', uid: 'u1' }, 'c')).toBeUndefined();
    expect(binds).toEqual(['new->c']);
    expect(assumed.size).toBe(0);
  });
});

describe('binds kube-scheduler has not sent yet', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const feasibleOn = (out: ExtenderFilterOutcome, node: string) =>
    out.kind === 'decided' && out.verdicts.find((v) => v.node === node)?.feasible;

  it.each([
    ['a covered pod', webPod('p')],
    ['a pod outside every rule (its load counts all the same)', pod('plain', { cpu: '1' })],
  ])(
    'judge the next covered pod only once the bind of %s let through before it arrived',
    async (_n, first) => {
      const { engine, pods } = setup();
      pods.set(podKey(first), first);
      await engine.filter(first, ['b']);
      let judged: ExtenderFilterOutcome | undefined;
      const next = engine.filter(webPod('q'), ['b']).then((out) => {
        judged = out;
      });
      await Promise.resolve();
      expect(judged).toBeUndefined();
      expect(
        await engine.bind({ namespace: 'default', name: first.name, uid: first.uid }, 'b'),
      ).toBeUndefined();
      await next;
      // b: 1 bound + 1 just bound + 1 for q = 75 % of 4 cores, over the rule's 70 %.
      expect(feasibleOn(judged as ExtenderFilterOutcome, 'b')).toBe(false);
    },
  );

  /** Resolves with the outcome if the filter answered without waiting for any bind. */
  async function answeredAtOnce(out: Promise<ExtenderFilterOutcome>) {
    let judged: ExtenderFilterOutcome | undefined;
    void out.then((o) => {
      judged = o;
    });
    for (let i = 0; i < 5; i++) await Promise.resolve();
    return judged;
  }

  it.each([
    // d: 8 cores. q alone 1 of 8, with p counted too 2 of 8 = 25 %: under 70 % either way.
    ['the pod let through before cannot tip the node over the rule', 'd', 'd'],
    // p may only bind to b; q is judged on d alone.
    ['the pod let through before may only bind elsewhere', 'b', 'd'],
  ])('answers at once when %s', async (_what, pNode, qNode) => {
    const { engine } = setup();
    await engine.filter(webPod('p'), [pNode]);
    const judged = await answeredAtOnce(engine.filter(webPod('q'), [qNode]));
    expect(judged && feasibleOn(judged, qNode)).toBe(true);
  });

  it('waits when the pod let through before could tip one node of several over the rule', async () => {
    const { engine } = setup();
    await engine.filter(webPod('p'), ['b', 'd']);
    // On b: 1 bound + p + q = 75 % > 70 % if p binds there; on d it fits either way.
    const next = engine.filter(webPod('q'), ['b', 'd']);
    expect(await answeredAtOnce(next)).toBeUndefined();
    await engine.bind({ namespace: 'default', name: 'p', uid: 'uid-p' }, 'd');
    const judged = await next;
    expect(feasibleOn(judged, 'b')).toBe(true);
    expect(feasibleOn(judged, 'd')).toBe(true);
  });

  it('waits while a burst limit is checked: the placement log, not the loads, decides it', async () => {
    const burst = rule('web', {
      maxCPU: 70,
      allowedNodes: ['a', 'b', 'd'],
      podSelector: { matchLabels: { tier: 'web' } },
      burst: { maxPlacements: 5, windowSeconds: 60 },
    });
    const { engine } = setup({ rules: [burst] });
    await engine.filter(webPod('p'), ['d']);
    const next = engine.filter(webPod('q'), ['d']);
    expect(await answeredAtOnce(next)).toBeUndefined();
    await engine.bind({ namespace: 'default', name: 'p', uid: 'uid-p' }, 'd');
    expect(feasibleOn(await next, 'd')).toBe(true);
  });

  it('gives up on a bind that never comes after maxBindWaitMs, and does not wait for it again', async () => {
    vi.useFakeTimers();
    const { engine } = setup({ maxBindWaitMs: 1000 });
    await engine.filter(webPod('p'), ['b']);
    const next = engine.filter(webPod('q'), ['b']);
    await vi.advanceTimersByTimeAsync(1000);
    expect(feasibleOn(await next, 'b')).toBe(true);
    // q is awaited now, p no longer: r waits for q only.
    const r = engine.filter(webPod('r'), ['d']);
    await engine.bind({ namespace: 'default', name: 'q', uid: 'uid-q' }, 'b');
    expect(feasibleOn(await r, 'd')).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import type { NodeInfo, PodInfo } from '../../cluster/model.js';
import { computeNodeLoad } from '../../load/model.js';
import { DEFAULT_LOAD_OPTIONS, type LoadOptions } from '../../load/types.js';
import { Gi, Mi, NOW, node, pod } from '../testing.js';
import { leastLoaded, loadAware } from './load-aware.js';
import { cycleOf, scoresOf } from './plugin.testing.js';

describe('leastLoaded', () => {
  it.each([
    { cpu: 0, mem: 0, weights: {}, want: 100 },
    { cpu: 50, mem: 10, weights: {}, want: 70 },
    { cpu: 50, mem: 10, weights: { cpuWeight: 3, memoryWeight: 1 }, want: 60 },
    { cpu: 50, mem: 10, weights: { cpuWeight: 0, memoryWeight: 1 }, want: 90 },
    { cpu: 50, mem: 10, weights: { cpuWeight: 1, memoryWeight: 0 }, want: 50 },
    // Over 100% counts as full, below 0 as empty.
    { cpu: 150, mem: 10, weights: { cpuWeight: 1, memoryWeight: 0 }, want: 0 },
    { cpu: -20, mem: 0, weights: {}, want: 100 },
    // No weight at all: equal weights.
    { cpu: 40, mem: 20, weights: { cpuWeight: 0, memoryWeight: 0 }, want: 70 },
  ])('cpu $cpu% mem $mem% weights $weights → $want', ({ cpu, mem, weights, want }) => {
    expect(leastLoaded(cpu, mem, weights)).toBeCloseTo(want, 9);
  });
});

const bestEffort = (name: string, nodeName?: string) => pod(name, { nodeName });

describe('LoadAware', () => {
  it('prefers the least loaded node with the pod placed (requests mode)', () => {
    const nodes = [node('a'), node('b'), node('big', { cpu: '8', memory: '16Gi' })];
    const pods = [
      pod('x', { nodeName: 'a', cpu: '2', memory: '2Gi' }),
      pod('y', { nodeName: 'b', cpu: '1' }),
    ];
    const scores = scoresOf(loadAware(), pod('p', { cpu: '1', memory: '1Gi' }), { nodes, pods });
    // a: cpu 75%, mem 37.5%; b: cpu 50%, mem 12.5%; big: cpu 12.5%, mem 6.25%.
    expect(scores['a']).toBeCloseTo((25 + 62.5) / 2, 9);
    expect(scores['b']).toBeCloseTo((50 + 87.5) / 2, 9);
    expect(scores['big']).toBeCloseTo((87.5 + 93.75) / 2, 9);
  });

  it('weighs cpu and memory as configured', () => {
    const nodes = [node('n')];
    const pods = [pod('x', { nodeName: 'n', cpu: '2', memory: '6Gi' })];
    // A pod requesting zero: cpu 50%, memory 75% after placement.
    const p = pod('p', { cpu: '0', memory: '0' });
    const score = (cpuWeight: number, memoryWeight: number) =>
      scoresOf(loadAware({ cpuWeight, memoryWeight }), p, { nodes, pods })['n'];
    expect(score(2, 1)).toBeCloseTo((2 * 50 + 1 * 25) / 3, 9);
    expect(score(1, 3)).toBeCloseTo((50 + 3 * 25) / 4, 9);
    expect(score(1, 0)).toBeCloseTo(50, 9);
  });

  describe('pods without requests, in requests mode', () => {
    const est = DEFAULT_LOAD_OPTIONS.estimate;
    /** cpu and memory percent of the default node (4 cpu, 8Gi) for k BestEffort pods. */
    const percents = (k: number) => [
      (k * est.defaultCpuMilli * 100) / 4000,
      (k * est.defaultMemoryBytes * 100) / (8 * Gi),
    ];

    it('counts each of them with the estimate, the incoming one included', () => {
      const nodes = [node('a'), node('b')];
      const pods = [bestEffort('x', 'a')];
      const scores = scoresOf(loadAware(), bestEffort('p'), { nodes, pods });
      const [ca, ma] = percents(2);
      const [cb, mb] = percents(1);
      expect(scores['a']).toBeCloseTo(leastLoaded(ca as number, ma as number), 9);
      expect(scores['b']).toBeCloseTo(leastLoaded(cb as number, mb as number), 9);
    });

    it('spreads BestEffort replicas instead of stacking them on one node', () => {
      const nodes = [node('a'), node('b'), node('c')];
      const placed: PodInfo[] = [];
      for (let i = 0; i < 6; i++) {
        const best = cycleOf(loadAware(), bestEffort(`r${i}`), { nodes, pods: placed }).ranked[0]?.node;
        placed.push(bestEffort(`r${i}`, best));
      }
      expect(placed.map((p) => p.nodeName)).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    });

    it('counts BestEffort pods on the node against a pod with requests', () => {
      // a: 4 BestEffort pods (4 × 250m by estimate) + 100m; b: one 500m pod + 100m.
      const nodes = [node('a'), node('b')];
      const pods = [
        ...[0, 1, 2, 3].map((i) => bestEffort(`be${i}`, 'a')),
        pod('r', { nodeName: 'b', cpu: '500m', memory: `${800}Mi` }),
      ];
      const { ranked } = cycleOf(loadAware(), pod('p', { cpu: '100m', memory: '1Mi' }), { nodes, pods });
      expect(ranked.map((r) => r.node)).toEqual(['b', 'a']);
      const a = ranked.find((r) => r.node === 'a')?.score as number;
      expect(a).toBeCloseTo(
        leastLoaded(((100 + 4 * 250) * 100) / 4000, ((1 * Mi + 4 * 200 * Mi) * 100) / (8 * Gi)),
        9,
      );
    });
  });

  it('adds no second estimate over metrics (the load model already estimates the pod)', () => {
    const options: LoadOptions = { ...DEFAULT_LOAD_OPTIONS, metricsServed: true };
    const n: NodeInfo = node('m');
    const load = computeNodeLoad({
      node: n,
      pods: [],
      metrics: {
        name: 'm',
        timestamp: new Date(NOW - 10_000).toISOString(),
        windowSeconds: 20,
        usage: { cpuMilli: 1000, memoryBytes: 2 * Gi },
      },
      now: NOW,
      options,
    });
    const scores = scoresOf(loadAware(), bestEffort('p'), {
      nodes: [n],
      loads: new Map([['m', load]]),
      loadOptions: options,
    });
    // usage 1000m + 250m estimate of 4000m; 2Gi + 200Mi of 8Gi.
    expect(scores['m']).toBeCloseTo(leastLoaded(31.25, ((2 * Gi + 200 * Mi) * 100) / (8 * Gi)), 9);
  });

  it('scores 0 on a node without a load figure', () => {
    const scores = scoresOf(loadAware(), pod('p'), { nodes: [node('a'), node('b')], loads: new Map() });
    expect(scores).toEqual({ a: 0, b: 0 });
  });
});

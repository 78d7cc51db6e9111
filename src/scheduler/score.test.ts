import { describe, expect, it } from 'vitest';
import { DEFAULT_LOAD_OPTIONS } from '../load/types.js';
import { filterNodes } from './filter.js';
import { balancedScore, leastLoadedScore, rankNodes } from './score.js';
import { loadsFor, node, pod } from './testing.js';

const load = (cpuPercentAfter: number, memoryPercentAfter: number) =>
  ({ cpuPercentAfter, memoryPercentAfter }) as Parameters<typeof leastLoadedScore>[0];

describe('leastLoadedScore', () => {
  it.each([
    [0, 0, { cpu: 1, memory: 1 }, 100],
    [50, 10, { cpu: 1, memory: 1 }, 70],
    [50, 10, { cpu: 3, memory: 1 }, 60],
    [50, 10, { cpu: 0, memory: 1 }, 90],
    [150, 10, { cpu: 1, memory: 0 }, 0],
    [40, 20, { cpu: 0, memory: 0 }, 70],
  ])('cpu %i%% mem %i%% weights %j → %d', (cpu, mem, weights, want) => {
    expect(leastLoadedScore(load(cpu, mem), weights)).toBeCloseTo(want, 9);
  });
});

describe('balancedScore', () => {
  it('is 100 when CPU and memory are used evenly and drops with the spread', () => {
    expect(balancedScore(load(40, 40))).toBe(100);
    expect(balancedScore(load(80, 20))).toBeCloseTo(70, 9);
  });
});

describe('rankNodes', () => {
  const nodes = [node('c'), node('a'), node('b'), node('d', { cpu: '8' })];
  const bound = [pod('x', { nodeName: 'a', cpu: '1' }), pod('y', { nodeName: 'c', cpu: '2' })];
  const rank = () => {
    const loads = loadsFor(nodes, bound);
    const verdicts = filterNodes(
      { pod: pod('p', { cpu: '500m' }), rules: [], loadOptions: DEFAULT_LOAD_OPTIONS },
      nodes,
      loads,
    );
    return rankNodes(verdicts).map((s) => s.node);
  };

  it('prefers the least loaded node', () => {
    expect(rank()[0]).toBe('d');
  });

  it('breaks exact ties by balance, then by name, so the result is deterministic', () => {
    // d has twice the CPU, b is idle, a carries 1 core and c 2 cores.
    expect(rank()).toEqual(['d', 'b', 'a', 'c']);
    expect(rank()).toEqual(rank());
    const twins = [node('z'), node('m'), node('k')];
    const verdicts = filterNodes(
      { pod: pod('p', { cpu: '1' }), rules: [], loadOptions: DEFAULT_LOAD_OPTIONS },
      twins,
      loadsFor(twins),
    );
    expect(rankNodes(verdicts).map((s) => s.node)).toEqual(['k', 'm', 'z']);
  });

  it('uses balanced allocation when the weighted score ties', () => {
    // Both end at (cpu+mem)/2 = 50% used; "even" uses 50/50, "skewed" 80/20.
    const even = node('skewed-not', { cpu: '10', memory: '10Gi' });
    const skewed = node('a-skewed', { cpu: '10', memory: '10Gi' });
    const loads = loadsFor(
      [even, skewed],
      [
        pod('e', { nodeName: 'skewed-not', cpu: '4', memory: '4Gi' }),
        pod('s', { nodeName: 'a-skewed', cpu: '7', memory: '1Gi' }),
      ],
    );
    const verdicts = filterNodes(
      { pod: pod('p', { cpu: '1', memory: '1Gi' }), rules: [], loadOptions: DEFAULT_LOAD_OPTIONS },
      [skewed, even],
      loads,
    );
    const ranked = rankNodes(verdicts);
    expect(ranked[0]?.score).toBeCloseTo(ranked[1]?.score ?? Number.NaN, 9);
    expect(ranked.map((s) => s.node)).toEqual(['skewed-not', 'a-skewed']);
  });

  it('ignores infeasible nodes', () => {
    const small = node('small', { cpu: '1' });
    const verdicts = filterNodes(
      { pod: pod('p', { cpu: '2' }), rules: [], loadOptions: DEFAULT_LOAD_OPTIONS },
      [small],
      loadsFor([small]),
    );
    expect(rankNodes(verdicts)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  groupIneligible,
  heatRgb,
  naturalCompare,
  percentile,
  pressure,
  ratio,
  ruleCoverage,
  ruleNodeSet,
  strictestThresholds,
  UNCOVERED,
} from './model.js';
import type { Load, Reason, RuleView } from './operations.js';

function reason(code: Reason['code'], message = code): Reason {
  return { code, message, value: null, threshold: null };
}

function rule(
  name: string,
  maxCPU: number,
  maxMemory: number,
  eligible: string[],
  ineligible: [string, boolean, Reason['code']][],
): RuleView {
  return {
    namespace: 'ns',
    name,
    generation: 1,
    spec: { maxCPU, maxMemory, allowedNodes: [], nodeSelector: null, podSelector: null, burst: null },
    status: null,
    evaluation: {
      evaluatedAt: null,
      eligible: eligible.map((node) => ({ node, headroom: 10 })),
      ineligible: ineligible.map(([node, allowed, code]) => ({ node, allowed, reasons: [reason(code)] })),
    },
  };
}

function load(cpuPercent: number, memoryPercent: number): Load {
  return {
    cpuPercent,
    memoryPercent,
    source: 'REQUESTS',
    timestamp: '2026-11-29T12:00:00Z',
    stale: false,
    unavailable: false,
    estimatedPods: 0,
    podCount: 1,
    effective: { cpuMilli: 0, memoryBytes: 0 },
    requested: { cpuMilli: 0, memoryBytes: 0 },
  };
}

const web = rule(
  'web',
  70,
  80,
  ['a'],
  [
    ['b', true, 'CPUThresholdExceeded'],
    ['c', false, 'NotAllowed'],
  ],
);
const batch = rule('batch', 90, 60, ['b', 'c'], [['a', false, 'NodeSelectorMismatch']]);

describe('rule node sets and thresholds', () => {
  it('a node set holds eligible nodes and the allowed ineligible ones, not the excluded ones', () => {
    expect([...ruleNodeSet(web)].sort()).toEqual(['a', 'b']);
    expect([...ruleNodeSet(batch)].sort()).toEqual(['b', 'c']);
  });

  it('takes the strictest threshold per resource among the covering rules, naming the rule', () => {
    const t = strictestThresholds([web, batch]);
    expect(t.get('a')).toMatchObject({
      cpu: 70,
      memory: 80,
      cpuRule: 'ns/web',
      memoryRule: 'ns/web',
      rules: ['ns/web'],
    });
    expect(t.get('b')).toMatchObject({ cpu: 70, memory: 60, cpuRule: 'ns/web', memoryRule: 'ns/batch' });
    expect(t.get('c')).toMatchObject({ cpu: 90, memory: 60, rules: ['ns/batch'] });
    expect(t.get('d')).toBeUndefined();
  });

  it('counts per node the rules covering it and those it is eligible for', () => {
    const c = ruleCoverage([web, batch]);
    expect(c.get('a')).toEqual({ covering: 1, eligible: 1 });
    expect(c.get('b')).toEqual({ covering: 2, eligible: 1 });
    expect(c.get('c')).toEqual({ covering: 1, eligible: 1 });
  });

  it('groups ineligible nodes by their first reason, largest group first', () => {
    const r = rule(
      'r',
      80,
      80,
      [],
      [
        ['x', true, 'CPUThresholdExceeded'],
        ['y', false, 'NotAllowed'],
        ['z', true, 'CPUThresholdExceeded'],
      ],
    );
    expect(groupIneligible(r).map(([code, list]) => [code, list.map((v) => v.node)])).toEqual([
      ['CPUThresholdExceeded', ['x', 'z']],
      ['NotAllowed', ['y']],
    ]);
  });
});

describe('pressure', () => {
  it.each([
    ['max of both', 'max', 0.5],
    ['cpu only', 'cpu', 0.5],
    ['memory only', 'memory', 0.25],
  ] as const)('%s', (_name, metric, expected) => {
    expect(pressure(load(35, 20), { cpu: 70, memory: 80, rules: [] }, metric)).toBeCloseTo(expected);
  });

  it('is over 1 past the threshold and measures uncovered nodes against their whole allocatable', () => {
    expect(pressure(load(91, 10), { cpu: 80, memory: 80, rules: [] }, 'max')).toBeGreaterThan(1);
    expect(pressure(load(50, 10), UNCOVERED, 'max')).toBe(0.5);
  });

  it('treats a zero threshold as infinitely over for any load and exactly at it for none', () => {
    expect(ratio(1, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(ratio(0, 0)).toBe(1);
  });
});

describe('heat colours', () => {
  const isRed = ([r, g]: number[]) => (r as number) > 200 && (g as number) < 100;
  it('turns red only past the threshold', () => {
    expect(isRed(heatRgb(0.5))).toBe(false);
    expect(isRed(heatRgb(1))).toBe(false);
    expect(isRed(heatRgb(1.01))).toBe(true);
    expect(isRed(heatRgb(Number.POSITIVE_INFINITY))).toBe(true);
  });

  it('gets warmer as the load approaches the threshold', () => {
    const red = (r: number) => heatRgb(r)[0];
    expect(red(0)).toBeLessThan(red(0.6));
    expect(red(0.6)).toBeLessThan(red(0.9));
  });
});

describe('helpers', () => {
  it('percentile is nearest-rank', () => {
    expect(percentile([], 90)).toBeUndefined();
    expect(percentile([5], 90)).toBe(5);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
    expect(percentile([10, 1, 5], 50)).toBe(5);
  });

  it('sorts node names naturally', () => {
    expect(['node-10', 'node-2', 'node-1'].sort(naturalCompare)).toEqual(['node-1', 'node-2', 'node-10']);
  });
});

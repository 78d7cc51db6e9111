import { describe, expect, it } from 'vitest';
import type { DisruptionBudgetInfo, PodInfo } from '../../cluster/model.js';
import { computeNodeLoad } from '../../load/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../../load/types.js';
import { NOW, node, pod } from '../testing.js';
import { pickOneNodeForPreemption } from './default-preemption-pick.js';
import { byImportance, splitByBudgets, withoutPods } from './default-preemption-victims.js';

const bound = (name: string, nodeName: string, cpu: string, priority: number) =>
  pod(name, { nodeName, cpu, priority });

function pdb(name: string, app: string, disruptionsAllowed: number): DisruptionBudgetInfo {
  return {
    namespace: 'default',
    name,
    resourceVersion: '1',
    selector: { matchLabels: { app } },
    disruptionsAllowed,
  };
}

describe('pickOneNodeForPreemption', () => {
  const v = (name: string, priority: number, scheduledAt?: string): PodInfo => ({
    ...pod(name, { priority }),
    ...(scheduledAt ? { scheduledAt } : {}),
  });
  const table: { name: string; candidates: Parameters<typeof pickOneNodeForPreemption>[0]; want: string }[] =
    [
      {
        name: 'fewest PDB violations first',
        candidates: [
          { node: 'a', victims: [v('x', 1)], pdbViolations: 1 },
          { node: 'b', victims: [v('y', 90), v('z', 90)], pdbViolations: 0 },
        ],
        want: 'b',
      },
      {
        name: 'then the lowest highest-priority victim',
        candidates: [
          { node: 'a', victims: [v('x', 20)], pdbViolations: 0 },
          { node: 'b', victims: [v('y', 10), v('z', 5)], pdbViolations: 0 },
        ],
        want: 'b',
      },
      {
        name: 'then the smallest sum of priorities (negative ones offset by 2^31)',
        candidates: [
          { node: 'a', victims: [v('x', -5), v('y', -5)], pdbViolations: 0 },
          { node: 'b', victims: [v('z', -5)], pdbViolations: 0 },
        ],
        want: 'b',
      },
      {
        name: 'then the latest start of the highest-priority victims',
        candidates: [
          { node: 'a', victims: [v('x', 3, '2026-11-29T09:00:00Z'), v('w', 1)], pdbViolations: 0 },
          { node: 'b', victims: [v('y', 3, '2026-11-29T10:00:00Z'), v('u', 1)], pdbViolations: 0 },
        ],
        want: 'b',
      },
      {
        name: 'and the first candidate when everything ties',
        candidates: [
          { node: 'a', victims: [v('x', 1, '2026-11-29T09:00:00Z')], pdbViolations: 0 },
          { node: 'b', victims: [v('y', 1, '2026-11-29T09:00:00Z')], pdbViolations: 0 },
        ],
        want: 'a',
      },
    ];
  it.each(table)('$name', ({ candidates, want }) => {
    expect(pickOneNodeForPreemption(candidates, NOW)?.node).toBe(want);
  });

  it('has nothing to pick among no candidates', () => {
    expect(pickOneNodeForPreemption([], NOW)).toBeUndefined();
  });
});

describe('victim helpers', () => {
  it('orders by priority, then the longest-running first; unknown start counts as now', () => {
    const a = { ...pod('a', { priority: 1 }), scheduledAt: '2026-11-29T10:00:00Z' };
    const b = { ...pod('b', { priority: 1 }), scheduledAt: '2026-11-29T09:00:00Z' };
    const c = pod('c', { priority: 1 });
    const d = pod('d', { priority: 7 });
    expect([a, b, c, d].sort(byImportance(NOW)).map((p) => p.name)).toEqual(['d', 'b', 'a', 'c']);
  });

  it('splits by PDB: budgets are used up in order, empty selectors and other namespaces match nothing', () => {
    const items = ['x1', 'x2', 'y', 'z'].map((name) => ({
      pod: pod(name, { labels: { app: name.slice(0, 1) } }),
    }));
    const other = { ...pdb('elsewhere', 'z', 0), namespace: 'other' };
    const empty = { ...pdb('empty', 'y', 0), selector: {} };
    const [violating, rest] = splitByBudgets(items, [pdb('x', 'x', 1), empty, other]);
    expect(violating.map((i) => i.pod.name)).toEqual(['x2']);
    expect(rest.map((i) => i.pod.name)).toEqual(['x1', 'y', 'z']);
  });

  it.each([
    { what: 'a pod in status.disruptedPods takes nothing from the budget', disrupted: ['x1'], want: ['x3'] },
    { what: 'nor does it shield the others', disrupted: ['x2'], want: ['x3'] },
    { what: 'without it, the budget of 1 runs out at the second pod', disrupted: [], want: ['x2', 'x3'] },
  ])('$what', ({ disrupted, want }) => {
    const items = ['x1', 'x2', 'x3'].map((name) => ({ pod: pod(name, { labels: { app: 'x' } }) }));
    const budget = { ...pdb('x', 'x', 1), ...(disrupted.length ? { disruptedPods: disrupted } : {}) };
    const [violating] = splitByBudgets(items, [budget]);
    expect(violating.map((i) => i.pod.name)).toEqual(want);
  });

  it('takes victims off a requests-based load, leaves a measured one alone', () => {
    const n = node('n', { cpu: '4' });
    const pods = [bound('a', 'n', '1', 1), bound('b', 'n', '1', 1)];
    const load = computeNodeLoad({ node: n, pods, now: NOW, options: DEFAULT_LOAD_OPTIONS });
    const without = withoutPods(load, [pods[0] as PodInfo]);
    expect([without.cpuPercent, without.podCount, without.requested.cpuMilli]).toEqual([25, 1, 1000]);
    const measured = { ...load, source: 'metrics' as const };
    expect(withoutPods(measured, pods)).toBe(measured);
  });
});

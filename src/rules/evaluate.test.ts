import { describe, expect, it } from 'vitest';
import { toNodeInfo, toPodInfo } from '../cluster/convert.js';
import type { NodeInfo, PodInfo } from '../cluster/model.js';
import { loadAt } from '../load/testing.js';
import type { NodeLoad } from '../load/types.js';
import {
  eligibilityTransitions,
  evaluateRule,
  MAX_LISTED_INELIGIBLE,
  rebalanceHints,
  rfc3339,
  statusChanged,
  statusFor,
} from './evaluate.js';
import type { NodeLoadRule, RuleSpec, RuleStatus } from './types.js';

const T0 = Date.parse('2026-11-29T12:00:00.400Z');
const T1 = T0 + 30_000;

function rule(spec: Partial<RuleSpec> = {}, generation = 1): NodeLoadRule {
  return {
    namespace: 'default',
    name: 'web-tier',
    uid: 'u',
    generation,
    resourceVersion: '1',
    creationTimestamp: '2026-11-29T00:00:00Z',
    spec: { maxCPU: 80, maxMemory: 80, allowedNodes: [], ...spec },
  };
}

const node = (name: string, labels: Record<string, string> = {}): NodeInfo =>
  toNodeInfo({
    metadata: { name, labels },
    status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } },
  });

const load = (name: string, cpuPercent: number, memoryPercent = 0, unavailable = false): NodeLoad =>
  loadAt(name, cpuPercent, memoryPercent, { metricsStale: unavailable, unavailable });

/** node-a..node-e: a 50%, b 91% cpu, c 20%, d 85% mem, e fail-closed. */
const nodes = ['node-e', 'node-d', 'node-c', 'node-b', 'node-a'].map((n) => node(n));
const loads = new Map([
  ['node-a', load('node-a', 50, 10)],
  ['node-b', load('node-b', 91, 10)],
  ['node-c', load('node-c', 20, 30)],
  ['node-d', load('node-d', 10, 85)],
  ['node-e', load('node-e', 0, 0, true)],
]);

describe('evaluateRule', () => {
  it('splits nodes into eligible (by headroom) and ineligible (by name)', () => {
    const ev = evaluateRule(rule(), nodes, loads);
    expect(ev.rule).toBe('web-tier');
    expect(ev.namespace).toBe('default');
    expect(ev.eligible.map((v) => [v.node, v.headroom])).toEqual([
      ['node-c', 50],
      ['node-a', 30],
    ]);
    expect(ev.ineligible.map((v) => v.node)).toEqual(['node-b', 'node-d', 'node-e']);
    expect(ev.ineligible.map((v) => v.reasons[0]?.code)).toEqual([
      'CPUThresholdExceeded',
      'MemoryThresholdExceeded',
      'LoadUnavailable',
    ]);
    expect(ev.evaluatedAt).toBeUndefined();
  });

  it('breaks headroom ties by name', () => {
    const ev = evaluateRule(
      rule(),
      [node('y'), node('x')],
      new Map([
        ['x', load('x', 10)],
        ['y', load('y', 10)],
      ]),
    );
    expect(ev.eligible.map((v) => v.node)).toEqual(['x', 'y']);
  });

  it('treats a node without a load figure as ineligible', () => {
    const ev = evaluateRule(rule(), [node('new')], new Map(), T0);
    expect(ev.ineligible[0]?.reasons).toEqual([
      { code: 'LoadUnavailable', rule: 'web-tier', message: 'no load figure for the node yet' },
    ]);
    expect(ev.evaluatedAt).toBe('2026-11-29T12:00:00.400Z');
  });

  it('applies allowedNodes', () => {
    const ev = evaluateRule(rule({ allowedNodes: ['node-a'] }), nodes, loads);
    expect(ev.eligible.map((v) => v.node)).toEqual(['node-a']);
    expect(ev.ineligible.find((v) => v.node === 'node-c')?.reasons[0]?.message).toBe('not in allowedNodes');
  });
});

describe('statusFor', () => {
  const r = rule({ allowedNodes: ['node-a', 'node-b', 'node-c', 'node-d', 'node-e'] }, 4);

  it('builds the status the operator writes', () => {
    const status = statusFor(r, evaluateRule(r, nodes, loads), undefined, T0);
    expect(status).toEqual({
      observedGeneration: 4,
      eligibleNodes: ['node-a', 'node-c'],
      eligibleCount: 2,
      ineligibleNodes: [
        { node: 'node-b', reasons: ['cpu 91% > maxCPU 80%'] },
        { node: 'node-d', reasons: ['memory 85% > maxMemory 80%'] },
        { node: 'node-e', reasons: ['metrics stale or missing (fail-closed)'] },
      ],
      ineligibleCount: 3,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'NodesEligible',
          message: '2 of 5 nodes eligible',
          lastTransitionTime: '2026-11-29T12:00:00Z',
          observedGeneration: 4,
        },
        {
          type: 'MetricsAvailable',
          status: 'False',
          reason: 'MetricsMissing',
          message: '1 of 5 nodes without a fresh metrics sample: ineligible until one arrives (fail-closed)',
          lastTransitionTime: '2026-11-29T12:00:00Z',
          observedGeneration: 4,
        },
      ],
      lastEvaluationTime: '2026-11-29T12:00:00Z',
      suggestions: [
        { node: 'node-c', headroom: 50 },
        { node: 'node-a', headroom: 30 },
      ],
    } satisfies RuleStatus);
  });

  it('Ready=False with a reason summary when no node is eligible', () => {
    // node-d is over both limits and node-e has no load figure, but neither is in allowedNodes
    const strict = rule({ maxCPU: 5, allowedNodes: ['node-a', 'node-b', 'node-c'] });
    const [cond] = statusFor(strict, evaluateRule(strict, nodes, loads), undefined, T0).conditions;
    expect(cond).toMatchObject({
      status: 'False',
      reason: 'NoEligibleNodes',
      message: '0 of 5 nodes eligible: 3 CPUThresholdExceeded, 2 NotAllowed',
    });
  });

  it('keeps lastTransitionTime while Ready keeps its status, and moves it on a flip', () => {
    const first = statusFor(r, evaluateRule(r, nodes, loads), undefined, T0);
    const same = statusFor(r, evaluateRule(r, nodes, loads), first, T1);
    expect(same.conditions[0]?.lastTransitionTime).toBe('2026-11-29T12:00:00Z');
    expect(same.lastEvaluationTime).toBe('2026-11-29T12:00:30Z');

    const allHot = new Map([...loads].map(([n]) => [n, load(n, 99)]));
    const flipped = statusFor(r, evaluateRule(r, nodes, allHot), same, T1);
    expect(flipped.conditions[0]).toMatchObject({
      status: 'False',
      lastTransitionTime: '2026-11-29T12:00:30Z',
    });
  });

  it('lists at most MAX_LISTED_INELIGIBLE nodes, load failures before nodes outside the node set', () => {
    const many = Array.from({ length: 150 }, (_, i) => node(`n${String(i).padStart(3, '0')}`));
    const manyLoads = new Map(many.map((n) => [n.name, load(n.name, 10)]));
    manyLoads.set('n149', load('n149', 99));
    const limited = rule({ allowedNodes: ['n149'] });
    const status = statusFor(limited, evaluateRule(limited, many, manyLoads), undefined, T0);
    expect(status.ineligibleCount).toBe(150);
    expect(status.ineligibleNodes).toHaveLength(MAX_LISTED_INELIGIBLE);
    expect(status.ineligibleNodes[0]).toEqual({ node: 'n149', reasons: ['cpu 99% > maxCPU 80%'] });
    expect(status.ineligibleNodes[1]?.node).toBe('n000');
  });

  it('suggests at most 10 nodes with whole-point headroom', () => {
    const many = Array.from({ length: 12 }, (_, i) => node(`n${String(i).padStart(2, '0')}`));
    const manyLoads = new Map(many.map((n, i) => [n.name, load(n.name, 10 + i + 0.25)]));
    const status = statusFor(rule(), evaluateRule(rule(), many, manyLoads), undefined, T0);
    expect(status.suggestions).toHaveLength(10);
    expect(status.suggestions[0]).toEqual({ node: 'n00', headroom: 69 });
    expect(status.suggestions[9]).toEqual({ node: 'n09', headroom: 60 });
  });
});

describe('statusChanged', () => {
  const r = rule();
  const base = statusFor(r, evaluateRule(r, nodes, loads), undefined, T0);
  it.each<{ name: string; prev: RuleStatus | undefined; next: RuleStatus | undefined; want: boolean }>([
    { name: 'identical', prev: base, next: structuredClone(base), want: false },
    {
      name: 'only lastEvaluationTime differs',
      prev: base,
      next: { ...base, lastEvaluationTime: 'later' },
      want: false,
    },
    {
      name: 'same content, different key order',
      prev: base,
      next: Object.fromEntries(Object.entries(base).reverse()) as unknown as RuleStatus,
      want: false,
    },
    { name: 'eligible set differs', prev: base, next: { ...base, eligibleNodes: ['node-a'] }, want: true },
    { name: 'generation differs', prev: base, next: { ...base, observedGeneration: 9 }, want: true },
    { name: 'no previous status', prev: undefined, next: base, want: true },
    { name: 'neither', prev: undefined, next: undefined, want: false },
  ])('$name → $want', ({ prev, next, want }) => {
    expect(statusChanged(prev, next)).toBe(want);
  });

  it('re-evaluating unchanged loads later is not a change', () => {
    const later = statusFor(r, evaluateRule(r, nodes, loads), base, T1);
    expect(statusChanged(base, later)).toBe(false);
  });
});

describe('eligibilityTransitions', () => {
  const r = rule();
  const before = statusFor(r, evaluateRule(r, nodes, loads), undefined, T0);
  it('reports nodes entering and leaving the eligible set', () => {
    const next = new Map(loads);
    next.set('node-a', load('node-a', 95)); // eligible → ineligible
    next.set('node-b', load('node-b', 40)); // ineligible → eligible
    const after = statusFor(r, evaluateRule(r, nodes, next), before, T1);
    expect(eligibilityTransitions(before, after)).toEqual({
      becameIneligible: [{ node: 'node-a', reasons: ['cpu 95% > maxCPU 80%'] }],
      becameEligible: ['node-b'],
    });
  });

  it('reports nothing without a previous status, or when nothing moved', () => {
    expect(eligibilityTransitions(undefined, before)).toEqual({ becameIneligible: [], becameEligible: [] });
    expect(eligibilityTransitions(before, before)).toEqual({ becameIneligible: [], becameEligible: [] });
  });

  it('a deleted node is not reported as ineligible', () => {
    const after = statusFor(r, evaluateRule(r, nodes.slice(0, 4), loads), before, T1); // node-a gone
    expect(eligibilityTransitions(before, after).becameIneligible).toEqual([]);
  });

  it.each<[string, number | undefined, string[]]>([
    ['created after the previous status was written: joined, not eligible again', T0 + 10_000, ['node-b']],
    ['created before it (ineligible then, beyond the listed ones)', T0 - 10_000, ['node-b', 'node-f']],
    ['of unknown creation time', undefined, ['node-b', 'node-f']],
  ])('a node not in the previous eligible set, %s', (_name, created, becameEligible) => {
    const next = new Map(loads);
    next.set('node-b', load('node-b', 40)); // ineligible → eligible: reported in every case
    next.set('node-f', load('node-f', 10));
    const after = statusFor(r, evaluateRule(r, [...nodes, node('node-f')], next), before, T1);
    const createdAt = (n: string) => (n === 'node-f' ? created : T0 - 86_400_000);
    expect(eligibilityTransitions(before, after, createdAt).becameEligible).toEqual(becameEligible);
  });
});

describe('rebalanceHints', () => {
  const pod = (
    name: string,
    nodeName: string,
    opts: { phase?: string; app?: string; ds?: boolean; priority?: number } = {},
  ) =>
    toPodInfo({
      metadata: {
        namespace: 'default',
        name,
        labels: { app: opts.app ?? 'web' },
        ...(opts.ds ? { ownerReferences: [{ kind: 'DaemonSet', name: 'ds', controller: true }] } : {}),
      },
      spec: { nodeName, priority: opts.priority ?? 0, containers: [{ name: 'c' }] },
      status: { phase: opts.phase ?? 'Running' },
    });

  const byNode = (pods: PodInfo[]) => {
    const m = new Map<string, PodInfo[]>();
    for (const p of pods) m.set(p.nodeName, [...(m.get(p.nodeName) ?? []), p]);
    return m;
  };

  it('moves covered running pods off nodes over a threshold to the node with most headroom', () => {
    const r = rule({ podSelector: { matchLabels: { app: 'web' } } });
    const pods = byNode([
      pod('z-low', 'node-b', { priority: 0 }),
      pod('a-high', 'node-b', { priority: 100 }),
      pod('db', 'node-b', { app: 'db' }), // not covered
      pod('pending', 'node-b', { phase: 'Pending' }),
      pod('agent', 'node-b', { ds: true }),
      pod('mem', 'node-d'),
      pod('blind', 'node-e'), // load unavailable: not a threshold problem
      pod('fine', 'node-a'),
    ]);
    expect(rebalanceHints(r, evaluateRule(r, nodes, loads), pods)).toEqual([
      {
        pod: 'z-low',
        namespace: 'default',
        from: 'node-b',
        to: 'node-c',
        reason: 'node node-b: cpu 91% > maxCPU 80%',
      },
      {
        pod: 'a-high',
        namespace: 'default',
        from: 'node-b',
        to: 'node-c',
        reason: 'node node-b: cpu 91% > maxCPU 80%',
      },
      {
        pod: 'mem',
        namespace: 'default',
        from: 'node-d',
        to: 'node-c',
        reason: 'node node-d: memory 85% > maxMemory 80%',
      },
    ]);
  });

  it('omits the target when no node is eligible', () => {
    const r = rule({ maxCPU: 1 });
    const [hint] = rebalanceHints(r, evaluateRule(r, nodes, loads), byNode([pod('p', 'node-a')]));
    expect(hint).toEqual({
      pod: 'p',
      namespace: 'default',
      from: 'node-a',
      reason: 'node node-a: cpu 50% > maxCPU 1%',
    });
  });
});

describe('rfc3339', () => {
  it('drops sub-second precision like metav1.Time', () => {
    expect(rfc3339(Date.parse('2026-11-29T12:00:00.999Z'))).toBe('2026-11-29T12:00:00Z');
  });
});

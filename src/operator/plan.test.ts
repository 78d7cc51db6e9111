import { describe, expect, it } from 'vitest';
import { toNodeInfo } from '../cluster/convert.js';
import { loadAt } from '../load/testing.js';
import type { NodeLoad } from '../load/types.js';
import { evaluateRule, statusFor } from '../rules/evaluate.js';
import type { NodeLoadRule, RuleCondition, RuleSpec, RuleStatus } from '../rules/types.js';
import {
  baselineStatus,
  debounceDeadline,
  eligibleSetChanges,
  eventBody,
  eventName,
  eventsFor,
  MAX_NODE_EVENTS_PER_PASS,
  MAX_NOTE_LENGTH,
  metricsEvents,
  microTime,
  nodeChangeAffectsRules,
  PendingRules,
  planRule,
  retryDelayMs,
  suggestionsFrom,
  WRITTEN_STATUS_TTL_MS,
} from './plan.js';

const T0 = Date.parse('2026-11-29T12:00:00.400Z');

function rule(spec: Partial<RuleSpec> = {}, extra: Partial<NodeLoadRule> = {}): NodeLoadRule {
  return {
    namespace: 'shop',
    name: 'web-tier',
    uid: 'uid-1',
    generation: 3,
    resourceVersion: '100',
    creationTimestamp: '2026-11-29T00:00:00Z',
    spec: { maxCPU: 80, maxMemory: 75, allowedNodes: [], ...spec },
    ...extra,
  };
}

const node = (name: string) =>
  toNodeInfo({ metadata: { name }, status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } } });

const load = (name: string, cpuPercent: number, memoryPercent: number): NodeLoad =>
  loadAt(name, cpuPercent, memoryPercent);

const nodes = ['node-a', 'node-b', 'node-c'].map(node);
const calm = new Map([
  ['node-a', load('node-a', 40, 20)],
  ['node-b', load('node-b', 10, 10)],
  ['node-c', load('node-c', 70, 30)],
]);
const busyB = new Map([...calm, ['node-b', load('node-b', 91, 10)]]);

function statusAt(r: NodeLoadRule, loads: Map<string, NodeLoad>, now = T0, prev?: RuleStatus): RuleStatus {
  return statusFor(r, evaluateRule(r, nodes, loads, now), prev, now);
}

describe('planRule', () => {
  it('a rule without status gets one written, with no Events (no baseline to compare)', () => {
    const r = rule();
    const plan = planRule(r, evaluateRule(r, nodes, calm, T0), undefined, calm, T0);
    expect(plan.write).toBe(true);
    expect(plan.events).toEqual([]);
    expect(plan.status.observedGeneration).toBe(3);
    expect(plan.status.eligibleNodes).toEqual(['node-a', 'node-b', 'node-c']);
  });

  it('nothing but time passing: no write', () => {
    const r = rule();
    const baseline = statusAt(r, calm, T0);
    const plan = planRule(r, evaluateRule(r, nodes, calm, T0 + 60_000), baseline, calm, T0 + 60_000);
    expect(plan.write).toBe(false);
    expect(plan.events).toEqual([]);
  });

  it('a node going over maxCPU: write and a Warning NodeIneligible with the numbers', () => {
    const r = rule();
    const baseline = statusAt(r, calm);
    const plan = planRule(r, evaluateRule(r, nodes, busyB, T0 + 1000), baseline, busyB, T0 + 1000);
    expect(plan.write).toBe(true);
    expect(plan.transitions.becameIneligible.map((t) => t.node)).toEqual(['node-b']);
    expect(plan.events).toEqual([
      {
        type: 'Warning',
        reason: 'NodeIneligible',
        node: 'node-b',
        note: 'node node-b is no longer eligible for rule web-tier: cpu 91% > maxCPU 80%',
      },
    ]);
  });

  it('the node coming back: a Normal NodeEligible with its figures', () => {
    const r = rule();
    const baseline = statusAt(r, busyB);
    const plan = planRule(r, evaluateRule(r, nodes, calm, T0 + 1000), baseline, calm, T0 + 1000);
    expect(plan.events).toEqual([
      {
        type: 'Normal',
        reason: 'NodeEligible',
        node: 'node-b',
        note: 'node node-b is eligible again for rule web-tier: cpu 10% ≤ maxCPU 80%, memory 10% ≤ maxMemory 75%',
      },
    ]);
  });

  it('a spec change (new generation) is written even when the node sets are the same', () => {
    const baseline = statusAt(rule(), calm);
    const r = rule({ maxCPU: 90 }, { generation: 4 });
    const plan = planRule(r, evaluateRule(r, nodes, calm, T0), baseline, calm, T0);
    expect(plan.write).toBe(true);
    expect(plan.events).toEqual([]);
    expect(plan.status.observedGeneration).toBe(4);
  });

  it('allowedNodes narrowing reports the excluded node as "not in allowedNodes"', () => {
    const baseline = statusAt(rule(), calm);
    const r = rule({ allowedNodes: ['node-a', 'node-c'] }, { generation: 4 });
    const plan = planRule(r, evaluateRule(r, nodes, calm, T0), baseline, calm, T0);
    expect(plan.events.map((e) => [e.reason, e.node, e.note])).toEqual([
      [
        'NodeIneligible',
        'node-b',
        'node node-b is no longer eligible for rule web-tier: not in allowedNodes',
      ],
    ]);
  });
});

describe('baselineStatus', () => {
  const r = rule();
  const cached = statusAt(r, calm);
  const ours = statusAt(r, busyB);

  it.each([
    { name: 'nothing written: the cache', written: undefined, now: T0, want: 'cache' },
    {
      name: 'our write not yet in the cache: ours',
      written: { resourceVersion: '101', at: T0 },
      now: T0 + 10,
      want: 'ours',
    },
    {
      name: 'the cache shows our write: the cache',
      written: { resourceVersion: '100', at: T0 },
      now: T0 + 10,
      want: 'cache',
    },
    {
      name: 'our write too old to trust: the cache',
      written: { resourceVersion: '101', at: T0 },
      now: T0 + WRITTEN_STATUS_TTL_MS + 1,
      want: 'cache',
    },
  ])('$name', ({ written, now, want }) => {
    const got = baselineStatus({ ...r, status: cached }, written && { ...written, status: ours }, now);
    expect(got).toBe(want === 'cache' ? cached : ours);
  });
});

describe('eventsFor', () => {
  it('caps notes at the API limit', () => {
    const long = 'x'.repeat(2000);
    const [event] = eventsFor(
      rule(),
      { becameIneligible: [{ node: 'n', reasons: [long] }], becameEligible: [] },
      calm,
    );
    expect(event?.note.length).toBe(MAX_NOTE_LENGTH);
  });

  it.each([
    [MAX_NODE_EVENTS_PER_PASS, MAX_NODE_EVENTS_PER_PASS],
    [MAX_NODE_EVENTS_PER_PASS + 1, 1],
    [4000, 1],
  ])('%i nodes moving one way in a pass: %i Event(s) per direction', (n, per) => {
    const names = Array.from({ length: n }, (_, i) => `node-${i}`);
    const events = eventsFor(
      rule(),
      {
        becameIneligible: names.map((node) => ({ node, reasons: ['cpu 95% > maxCPU 80%'] })),
        becameEligible: names,
      },
      calm,
    );
    expect(events.filter((e) => e.reason === 'NodeIneligible')).toHaveLength(per);
    expect(events.filter((e) => e.reason === 'NodeEligible')).toHaveLength(per);
    if (per > 1) return;
    const [left, back] = events;
    expect(left?.type).toBe('Warning');
    expect(left).not.toHaveProperty('node');
    expect(left?.note).toMatch(
      new RegExp(
        `^${n} nodes are no longer eligible for rule web-tier: node-0 \\(cpu 95% > maxCPU 80%\\), node-1 `,
      ),
    );
    expect(left?.note.length).toBeLessThanOrEqual(MAX_NOTE_LENGTH);
    expect(back?.note).toMatch(
      new RegExp(`^${n} nodes are eligible again for rule web-tier: node-0, node-1, `),
    );
  });

  it('a node that became eligible without a load figure still gets an Event, without numbers', () => {
    const events = eventsFor(rule(), { becameIneligible: [], becameEligible: ['ghost'] }, calm);
    expect(events).toEqual([
      {
        type: 'Normal',
        reason: 'NodeEligible',
        node: 'ghost',
        note: 'node ghost is eligible again for rule web-tier',
      },
    ]);
  });
});

describe('eventBody', () => {
  it('is an events.k8s.io/v1 Event regarding the rule, related to the node', () => {
    const body = eventBody(
      rule(),
      { type: 'Warning', reason: 'NodeIneligible', node: 'node-b', note: 'n' },
      'host_1',
      T0,
      7,
    );
    expect(body).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `web-tier.${T0.toString(16)}0007`, namespace: 'shop' },
      eventTime: '2026-11-29T12:00:00.400000Z',
      reportingController: 'nodeload.example.com/operator',
      reportingInstance: 'host_1',
      action: 'Evaluate',
      reason: 'NodeIneligible',
      type: 'Warning',
      regarding: {
        apiVersion: 'example.com/v1',
        kind: 'NodeLoadRule',
        namespace: 'shop',
        name: 'web-tier',
        uid: 'uid-1',
      },
      related: { kind: 'Node', name: 'node-b' },
    });
  });

  it('an Event naming several nodes has no related object', () => {
    const body = eventBody(
      rule(),
      { type: 'Normal', reason: 'NodeEligible', note: '12 nodes …' },
      'host_1',
      T0,
    );
    expect(body).not.toHaveProperty('related');
  });

  it('names Events uniquely even within one millisecond, as valid DNS subdomains', () => {
    const names = [0, 1, 0xffff].map((seq) => eventName('web-tier', T0, seq));
    expect(new Set(names).size).toBe(3);
    for (const n of names)
      expect(n).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
    expect(eventName('x'.repeat(253), T0, 0).length).toBeLessThanOrEqual(253);
  });

  it('microTime has exactly 6 fractional digits', () => {
    expect(microTime(Date.parse('2026-01-02T03:04:05.006Z'))).toBe('2026-01-02T03:04:05.006000Z');
    expect(microTime(Date.parse('2026-01-02T03:04:05Z'))).toBe('2026-01-02T03:04:05.000000Z');
  });
});

describe('suggestionsFrom', () => {
  it('lists, per rule (by namespace then name), each eligible node by headroom, with its figures', () => {
    const a = rule({}, { name: 'b-rule' });
    const b = rule({ maxCPU: 50 }, { name: 'a-rule' });
    const c = rule({}, { name: 'z', namespace: 'alpha' });
    const evaluations = [a, b, c].map((r) => evaluateRule(r, nodes, busyB, T0));
    expect(suggestionsFrom(evaluations, busyB)).toEqual([
      { node: 'node-a', rule: 'z', namespace: 'alpha', headroom: 40, cpuPercent: 40, memoryPercent: 20 },
      { node: 'node-c', rule: 'z', namespace: 'alpha', headroom: 10, cpuPercent: 70, memoryPercent: 30 },
      { node: 'node-a', rule: 'a-rule', namespace: 'shop', headroom: 10, cpuPercent: 40, memoryPercent: 20 },
      { node: 'node-a', rule: 'b-rule', namespace: 'shop', headroom: 40, cpuPercent: 40, memoryPercent: 20 },
      { node: 'node-c', rule: 'b-rule', namespace: 'shop', headroom: 10, cpuPercent: 70, memoryPercent: 30 },
    ]);
  });

  it('keeps the original shape: every row has node and rule', () => {
    const rows = suggestionsFrom([evaluateRule(rule(), nodes, calm, T0)], calm);
    expect(rows.length).toBe(3);
    for (const row of rows) expect(Object.keys(row)).toEqual(expect.arrayContaining(['node', 'rule']));
  });
});

describe('debounce bookkeeping', () => {
  const opts = { waitMs: 250, maxWaitMs: 2000 };

  it.each([
    { name: 'a single change waits the quiet period', first: 0, last: 0, want: 250 },
    { name: 'a later change moves the deadline', first: 0, last: 1000, want: 1250 },
    { name: 'but never past maxWait after the first change', first: 0, last: 1900, want: 2000 },
  ])('$name', ({ first, last, want }) => {
    expect(debounceDeadline(first, last, opts)).toBe(want);
  });

  it('PendingRules collects keys, lets "all" absorb them, and starts over on take', () => {
    const p = new PendingRules();
    expect(p.empty).toBe(true);
    expect(p.dueAt(opts)).toBeUndefined();
    p.mark('ns/a', 100);
    p.mark('ns/b', 300);
    expect(p.dueAt(opts)).toBe(550);
    expect(p.take()).toEqual({ all: false, keys: new Set(['ns/a', 'ns/b']) });
    expect(p.empty).toBe(true);
    p.markAll(1000);
    p.mark('ns/c', 1100);
    expect(p.take()).toEqual({ all: true, keys: new Set() });
    p.mark('ns/d', 5000);
    expect(p.dueAt(opts)).toBe(5250);
  });
});

describe('retryDelayMs', () => {
  it('doubles from half a second and stops at 30 s', () => {
    expect([1, 2, 3, 4, 10, 100].map(retryDelayMs)).toEqual([500, 1000, 2000, 4000, 30_000, 30_000]);
  });
});

describe('eligibleSetChanges', () => {
  it('reports nodes entering and leaving the eligible set; nothing on the first evaluation', () => {
    const r = rule();
    const before = evaluateRule(r, nodes, calm, T0);
    const after = evaluateRule(r, nodes, busyB, T0);
    expect(eligibleSetChanges(undefined, after)).toEqual({ becameEligible: [], becameIneligible: [] });
    expect(eligibleSetChanges(before, after)).toEqual({ becameEligible: [], becameIneligible: ['node-b'] });
    expect(eligibleSetChanges(after, before)).toEqual({ becameEligible: ['node-b'], becameIneligible: [] });
  });
});

describe('nodeChangeAffectsRules', () => {
  const n = (labels: Record<string, string>) => ({ labels });
  it.each([
    { name: 'a new node', change: { type: 'add' as const, new: n({}) }, want: true },
    { name: 'a deleted node', change: { type: 'delete' as const, old: n({}) }, want: true },
    {
      name: 'a heartbeat (same labels)',
      change: { type: 'update' as const, old: n({ a: '1' }), new: n({ a: '1' }) },
      want: false,
    },
    {
      name: 'a label value change',
      change: { type: 'update' as const, old: n({ a: '1' }), new: n({ a: '2' }) },
      want: true,
    },
    {
      name: 'a label added',
      change: { type: 'update' as const, old: n({ a: '1' }), new: n({ a: '1', b: '' }) },
      want: true,
    },
    {
      name: 'a label removed',
      change: { type: 'update' as const, old: n({ a: '1', b: '' }), new: n({ a: '1' }) },
      want: true,
    },
    {
      name: 'a label renamed',
      change: { type: 'update' as const, old: n({ a: '1' }), new: n({ b: '1' }) },
      want: true,
    },
  ])('$name → $want', ({ change, want }) => {
    expect(nodeChangeAffectsRules(change)).toBe(want);
  });
});

describe('metricsEvents (MetricsAvailable transitions)', () => {
  const cond = (status: RuleCondition['status'], reason: string): RuleCondition => ({
    type: 'MetricsAvailable',
    status,
    reason,
    message: `${reason} message`,
    lastTransitionTime: '2026-12-07T10:00:00Z',
    observedGeneration: 1,
  });
  const status = (c?: RuleCondition): RuleStatus => ({
    observedGeneration: 1,
    eligibleNodes: [],
    eligibleCount: 0,
    ineligibleNodes: [],
    ineligibleCount: 0,
    conditions: c ? [c] : [],
    lastEvaluationTime: '2026-12-07T10:00:00Z',
    suggestions: [],
  });
  const current = cond('True', 'MetricsCurrent');
  const missing = cond('False', 'MetricsMissing');
  const notServed = cond('False', 'MetricsNotServed');
  const cases: { name: string; before?: RuleCondition; after: RuleCondition; want: string[] }[] = [
    {
      name: 'samples go missing: a Warning',
      before: current,
      after: missing,
      want: ['Warning MetricsUnavailable'],
    },
    {
      name: 'they are back: a Normal Event',
      before: missing,
      after: current,
      want: ['Normal MetricsAvailable'],
    },
    { name: 'no change: nothing', before: missing, after: missing, want: [] },
    { name: 'a new rule (no baseline condition): nothing', after: missing, want: [] },
    {
      name: 'metrics.k8s.io not served: shown in the condition only',
      before: current,
      after: notServed,
      want: [],
    },
    { name: 'served again after not being served: nothing', before: notServed, after: current, want: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const events = metricsEvents(c.before ? status(c.before) : undefined, status(c.after));
      expect(events.map((e) => `${e.type} ${e.reason}`)).toEqual(c.want);
      for (const e of events) expect(e.note).toBe(c.after.message);
    });
  }
});

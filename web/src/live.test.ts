import { describe, expect, it } from 'vitest';
import { MAX_DECISIONS, mergeDecisions, trendSample } from './live.js';
import type { DecisionSummary, NodeView, RuleView } from './operations.js';

function decision(id: string, time: string): DecisionSummary {
  return {
    id,
    time,
    namespace: 'ns',
    pod: id,
    result: 'SCHEDULED',
    engine: 'NATIVE',
    node: 'a',
    message: '',
    attempts: 1,
    totalNodes: 1,
    feasibleNodes: 1,
    algorithmMs: 1,
    latencyMs: 1,
    e2eLatencyMs: 1,
    rebuilt: false,
  };
}

describe('mergeDecisions', () => {
  it('keeps one entry per id, newest first', () => {
    const a = decision('a', '2026-11-29T12:00:01Z');
    const b = decision('b', '2026-11-29T12:00:02Z');
    const c = decision('c', '2026-11-29T12:00:03Z');
    expect(mergeDecisions([b, a], [c, b]).map((d) => d.id)).toEqual(['c', 'b', 'a']);
  });

  it(`holds at most ${MAX_DECISIONS}`, () => {
    const many = Array.from({ length: MAX_DECISIONS + 20 }, (_, i) =>
      decision(`d${i}`, new Date(Date.UTC(2026, 10, 29, 12, 0, i)).toISOString()),
    );
    const merged = mergeDecisions([], many);
    expect(merged).toHaveLength(MAX_DECISIONS);
    expect(merged[0]?.id).toBe(`d${MAX_DECISIONS + 19}`);
  });
});

describe('trendSample', () => {
  function node(name: string, cpu: number, mem: number, unavailable = false): NodeView {
    return {
      name,
      ready: true,
      schedulable: true,
      podCount: 1,
      allocatable: { cpuMilli: 1000, memoryBytes: 1, pods: 10 },
      load: {
        cpuPercent: cpu,
        memoryPercent: mem,
        source: 'REQUESTS',
        timestamp: '2026-11-29T12:00:00Z',
        stale: false,
        unavailable,
        estimatedPods: 0,
        podCount: 1,
        effective: { cpuMilli: 0, memoryBytes: 0 },
        requested: { cpuMilli: 0, memoryBytes: 0 },
      },
    };
  }
  const rule: RuleView = {
    namespace: 'ns',
    name: 'r',
    generation: 1,
    spec: { maxCPU: 50, maxMemory: 90, allowedNodes: [], nodeSelector: null, podSelector: null, burst: null },
    status: null,
    evaluation: { evaluatedAt: null, eligible: [{ node: 'a', headroom: 1 }], ineligible: [] },
  };

  it('averages the nodes with a load figure and counts those over their strictest threshold', () => {
    const s = trendSample([node('a', 60, 10), node('b', 20, 30), node('c', 99, 99, true)], [rule]);
    expect(s.cpuAvg).toBe(40);
    expect(s.memAvg).toBe(20);
    expect(s.cpuP90).toBe(60);
    // a: 60% > the rule's 50%; b: no rule, 20% of 100%; c: no figure.
    expect(s.over).toBe(1);
  });
});

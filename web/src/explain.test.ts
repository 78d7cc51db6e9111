import { describe, expect, it } from 'vitest';
import { candidateThresholds, groupFiltered, reasonSummary } from './explain.js';
import type { Candidate, FilterReason, RuleCheck } from './operations.js';

function check(rule: string, maxCPU: number, maxMemory: number, o: Partial<RuleCheck> = {}): RuleCheck {
  return {
    namespace: 'ns',
    rule,
    allowed: true,
    bypassed: false,
    maxCPU,
    maxMemory,
    cpuMargin: 0,
    memoryMargin: 0,
    burst: null,
    ...o,
  };
}

function candidate(node: string, o: Partial<Candidate> = {}): Candidate {
  return {
    node,
    verdict: 'FEASIBLE',
    feasible: true,
    score: 50,
    scores: [],
    rank: 1,
    reasons: [],
    load: null,
    rules: [],
    burst: null,
    ...o,
  };
}

describe('candidateThresholds', () => {
  it('takes the strictest rule that applied, skipping rules the node is outside of or the pod bypasses', () => {
    const c = candidate('a', {
      rules: [
        check('loose', 90, 85),
        check('tight', 60, 95),
        check('outside', 10, 10, { allowed: false }),
        check('daemonset', 5, 5, { bypassed: true }),
      ],
    });
    expect(candidateThresholds(c)).toEqual({ cpu: 60, memory: 85 });
  });

  it('is the whole allocatable without rules', () => {
    expect(candidateThresholds(candidate('a'))).toEqual({ cpu: 100, memory: 100 });
  });
});

describe('reasonSummary', () => {
  it("counts the infeasible candidates by their first reason's text, most common first", () => {
    const r = (reason: string): FilterReason => ({
      plugin: 'NodeUnschedulable',
      code: 'NodeUnschedulable',
      reason,
      detail: '',
      rule: null,
      unresolvable: true,
    });
    const out = (node: string, ...reasons: string[]) =>
      candidate(node, { feasible: false, verdict: 'INFEASIBLE', reasons: reasons.map(r) });
    expect(
      reasonSummary([
        candidate('ok'),
        out('a', 'node(s) exceed rule web cpu 70%'),
        out('b', 'Insufficient cpu', 'node(s) exceed rule web cpu 70%'),
        out('c', 'node(s) exceed rule web cpu 70%'),
      ]),
    ).toEqual([
      ['node(s) exceed rule web cpu 70%', 2],
      ['Insufficient cpu', 1],
    ]);
  });
});

describe('groupFiltered', () => {
  it('puts nodes failing with identical reasons in one group, largest first; differing numbers stay apart', () => {
    const r = (code: FilterReason['code'], detail: string): FilterReason => ({
      plugin: 'NodeLoadRules',
      code,
      reason: code,
      detail,
      rule: null,
      unresolvable: false,
    });
    const out = (node: string, ...reasons: ReturnType<typeof r>[]) =>
      candidate(node, { feasible: false, verdict: 'INFEASIBLE', reasons });
    const groups = groupFiltered([
      candidate('ok'),
      out('a', r('RuleNotAllowed', 'not in allowedNodes')),
      out('b', r('RuleCPUExceeded', 'cpu 91% > maxCPU 80%')),
      out('c', r('RuleNotAllowed', 'not in allowedNodes')),
      out('d', r('RuleCPUExceeded', 'cpu 85% > maxCPU 80%')),
    ]);
    expect(groups.map((g) => g.nodes)).toEqual([['a', 'c'], ['b'], ['d']]);
    expect(groups[0]?.reasons[0]?.code).toBe('RuleNotAllowed');
  });
});

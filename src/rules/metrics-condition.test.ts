import { describe, expect, it } from 'vitest';
import { toNodeInfo } from '../cluster/convert.js';
import { loadAt } from '../load/testing.js';
import type { NodeLoad } from '../load/types.js';
import { evaluateRule, statusFor } from './evaluate.js';
import { METRICS_CONDITION } from './metrics-condition.js';
import type { NodeLoadRule, RuleCondition, RuleSpec } from './types.js';

const T0 = Date.parse('2026-12-07T10:00:00Z');
const T1 = T0 + 60_000;

function rule(spec: Partial<RuleSpec> = {}): NodeLoadRule {
  return {
    namespace: 'default',
    name: 'web',
    uid: 'u',
    generation: 2,
    resourceVersion: '1',
    creationTimestamp: '2026-12-01T00:00:00Z',
    spec: { maxCPU: 80, maxMemory: 80, allowedNodes: [], ...spec },
  };
}

const measured = { source: 'metrics' } as const;
const estimated = { source: 'metrics+estimate' } as const;
const stale = { metricsStale: true } as const;
const closed = { metricsStale: true, unavailable: true } as const;
const notServed = {} as const;

/** Nodes n1.. with the given load kinds (all at 10 % cpu). */
function world(kinds: Partial<NodeLoad>[]) {
  const nodes = kinds.map((_, i) => toNodeInfo({ metadata: { name: `n${i + 1}` }, status: {} }));
  const loads = new Map(kinds.map((k, i) => [`n${i + 1}`, loadAt(`n${i + 1}`, 10, 10, k)]));
  return { nodes, loads };
}

function condition(r: NodeLoadRule, kinds: Partial<NodeLoad>[], previous?: RuleCondition[]) {
  const { nodes, loads } = world(kinds);
  const prev = previous
    ? { ...statusFor(r, evaluateRule(r, nodes, loads), undefined, T0), conditions: previous }
    : undefined;
  const status = statusFor(r, evaluateRule(r, nodes, loads), prev, T1);
  return status.conditions.find((c) => c.type === METRICS_CONDITION);
}

const cases: {
  name: string;
  rule?: NodeLoadRule;
  kinds: Partial<NodeLoad>[];
  want: Partial<RuleCondition>;
}[] = [
  {
    name: 'every node on a fresh sample (estimates on top included): True',
    kinds: [measured, estimated],
    want: { status: 'True', reason: 'MetricsCurrent', message: '2 nodes judged on measured usage' },
  },
  {
    name: 'a node without a fresh sample under fail-open: False, judged by requests',
    kinds: [measured, stale, measured],
    want: {
      status: 'False',
      reason: 'MetricsMissing',
      message: '1 of 3 nodes without a fresh metrics sample: judged by requests (fail-open)',
    },
  },
  {
    name: 'under fail-closed: those nodes are ineligible',
    kinds: [closed, closed],
    want: {
      status: 'False',
      reason: 'MetricsMissing',
      message: '2 of 2 nodes without a fresh metrics sample: ineligible until one arrives (fail-closed)',
    },
  },
  {
    name: 'metrics.k8s.io not served: False, every node by requests',
    kinds: [notServed],
    want: {
      status: 'False',
      reason: 'MetricsNotServed',
      message: 'metrics.k8s.io does not serve node metrics: 1 node judged by requests',
    },
  },
  {
    name: "only the rule's node set counts: a stale node outside allowedNodes does not",
    rule: rule({ allowedNodes: ['n1'] }),
    kinds: [measured, stale],
    want: { status: 'True', reason: 'MetricsCurrent', message: '1 node judged on measured usage' },
  },
  {
    name: 'no node of the set has a load figure: Unknown',
    rule: rule({ allowedNodes: ['elsewhere'] }),
    kinds: [measured],
    want: { status: 'Unknown', reason: 'NoNodes' },
  },
];

describe('MetricsAvailable', () => {
  for (const c of cases) {
    it(c.name, () => {
      expect(condition(c.rule ?? rule(), c.kinds)).toMatchObject({ ...c.want, observedGeneration: 2 });
    });
  }

  it('keeps lastTransitionTime while its status stays, moves it on a flip', () => {
    const before = condition(rule(), [stale]) as RuleCondition;
    expect(before.lastTransitionTime).toBe('2026-12-07T10:01:00Z');
    const earlier = { ...before, lastTransitionTime: '2026-12-07T09:00:00Z' };
    expect(condition(rule(), [stale, stale], [earlier])?.lastTransitionTime).toBe('2026-12-07T09:00:00Z');
    expect(condition(rule(), [measured], [earlier])?.lastTransitionTime).toBe('2026-12-07T10:01:00Z');
  });
});

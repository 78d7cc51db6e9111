import { describe, expect, it } from 'vitest';
import { toNodeInfo } from '../cluster/convert.js';
import type { LabelSelector, NodeInfo } from '../cluster/model.js';
import { loadAt } from '../load/testing.js';
import type { NodeLoad } from '../load/types.js';
import {
  allowedNodeNames,
  evaluateNodeForRule,
  evaluatePlacement,
  nodeAllowedByRule,
  ruleCoversPod,
  rulesForPod,
  selectorMatches,
  someNodeAllowed,
  toRule,
  toRuleStatus,
} from './rule.js';
import type { NodeLoadRule, RuleSpec } from './types.js';

function makeRule(spec: Partial<RuleSpec> = {}, name = 'web-tier', namespace = 'default'): NodeLoadRule {
  return {
    namespace,
    name,
    uid: `uid-${name}`,
    generation: 1,
    resourceVersion: '1',
    creationTimestamp: '2026-11-29T00:00:00Z',
    spec: { maxCPU: 80, maxMemory: 80, allowedNodes: [], ...spec },
  };
}

function makeNode(name: string, labels: Record<string, string> = {}): NodeInfo {
  return toNodeInfo({
    metadata: { name, labels },
    status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } },
  });
}

const makeLoad = (node: string, cpuPercent: number, memoryPercent: number, unavailable = false): NodeLoad =>
  loadAt(node, cpuPercent, memoryPercent, {
    timestamp: '2026-11-29T12:00:00.000Z',
    metricsStale: unavailable,
    unavailable,
  });

describe('toRule', () => {
  it('reads the original design example unchanged', () => {
    const rule = toRule({
      apiVersion: 'example.com/v1',
      kind: 'NodeLoadRule',
      metadata: {
        name: 'web-tier',
        namespace: 'default',
        uid: 'u1',
        generation: 3,
        resourceVersion: '42',
        creationTimestamp: new Date('2026-11-29T10:00:00Z'),
      },
      spec: { maxCPU: 80, maxMemory: 75, allowedNodes: ['node-a', 'node-b'] },
    });
    expect(rule).toEqual({
      namespace: 'default',
      name: 'web-tier',
      uid: 'u1',
      generation: 3,
      resourceVersion: '42',
      creationTimestamp: '2026-11-29T10:00:00.000Z',
      spec: { maxCPU: 80, maxMemory: 75, allowedNodes: ['node-a', 'node-b'] },
    });
  });

  it.each([
    { name: 'missing spec', obj: { metadata: { name: 'r' } } },
    { name: 'null spec', obj: { metadata: { name: 'r' }, spec: null } },
    { name: 'wrong types', obj: { metadata: { name: 'r' }, spec: { maxCPU: '90', allowedNodes: 'node-a' } } },
    { name: 'not an object at all', obj: 'garbage' },
  ])('applies the defaults for $name', ({ obj }) => {
    expect(toRule(obj).spec).toEqual({ maxCPU: 80, maxMemory: 80, allowedNodes: [] });
  });

  it('keeps 0 as a threshold (not a missing value)', () => {
    expect(toRule({ spec: { maxCPU: 0, maxMemory: 0 } }).spec).toMatchObject({ maxCPU: 0, maxMemory: 0 });
  });

  it('reads selectors, burst and status', () => {
    const rule = toRule({
      metadata: { name: 'r', namespace: 'ns' },
      spec: {
        podSelector: { matchLabels: { app: 'web', bad: 1 } },
        nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a', 2] }, 'junk'] },
        burst: { maxPlacements: 5, windowSeconds: 30 },
      },
      status: {
        observedGeneration: 2,
        eligibleNodes: ['node-a'],
        eligibleCount: 1,
        conditions: [
          { type: 'Ready', status: 'True', reason: 'NodesEligible', message: 'm', lastTransitionTime: 't' },
        ],
      },
    });
    expect(rule.spec.podSelector).toEqual({ matchLabels: { app: 'web' } });
    expect(rule.spec.nodeSelector).toEqual({
      matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }],
    });
    expect(rule.spec.burst).toEqual({ maxPlacements: 5, windowSeconds: 30 });
    expect(rule.status).toMatchObject({
      observedGeneration: 2,
      eligibleNodes: ['node-a'],
      ineligibleNodes: [],
    });
    expect(rule.status?.conditions[0]).toMatchObject({
      type: 'Ready',
      status: 'True',
      observedGeneration: 0,
    });
  });

  it('drops an incomplete burst guard', () => {
    expect(toRule({ spec: { burst: { maxPlacements: 5 } } }).spec.burst).toBeUndefined();
  });

  it('has no status when the object has none', () => {
    expect(toRule({ spec: {} }).status).toBeUndefined();
    expect(toRuleStatus(undefined)).toBeUndefined();
  });
});

describe('selectorMatches', () => {
  const labels = { app: 'web', tier: 'front' };
  it.each<{ name: string; sel: LabelSelector | undefined; want: boolean }>([
    { name: 'undefined matches all', sel: undefined, want: true },
    { name: 'empty matches all', sel: {}, want: true },
    { name: 'matchLabels equal', sel: { matchLabels: { app: 'web' } }, want: true },
    { name: 'matchLabels different value', sel: { matchLabels: { app: 'db' } }, want: false },
    { name: 'matchLabels missing key', sel: { matchLabels: { zone: 'a' } }, want: false },
    {
      name: 'In hit',
      sel: { matchExpressions: [{ key: 'app', operator: 'In', values: ['db', 'web'] }] },
      want: true,
    },
    {
      name: 'In miss',
      sel: { matchExpressions: [{ key: 'app', operator: 'In', values: ['db'] }] },
      want: false,
    },
    {
      name: 'In absent key',
      sel: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
      want: false,
    },
    {
      name: 'NotIn hit',
      sel: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] },
      want: false,
    },
    {
      name: 'NotIn miss',
      sel: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['db'] }] },
      want: true,
    },
    {
      name: 'NotIn absent key',
      sel: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] },
      want: true,
    },
    { name: 'Exists', sel: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, want: true },
    { name: 'Exists absent', sel: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, want: false },
    {
      name: 'Exists ignores inherited keys',
      sel: { matchExpressions: [{ key: 'toString', operator: 'Exists' }] },
      want: false,
    },
    {
      name: 'DoesNotExist',
      sel: { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] },
      want: true,
    },
    {
      name: 'DoesNotExist present',
      sel: { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] },
      want: false,
    },
    {
      name: 'unknown operator selects nothing',
      sel: { matchExpressions: [{ key: 'app', operator: 'Gt' }] },
      want: false,
    },
    {
      name: 'labels and expressions are ANDed',
      sel: {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }],
      },
      want: false,
    },
  ])('$name → $want', ({ sel, want }) => {
    expect(selectorMatches(sel, labels)).toBe(want);
  });
});

describe('which rules cover a pod', () => {
  const rules = [
    makeRule({}, 'zeta'),
    makeRule({ podSelector: { matchLabels: { app: 'web' } } }, 'alpha'),
    makeRule({ podSelector: { matchLabels: { app: 'db' } } }, 'beta'),
    makeRule({}, 'other-ns', 'prod'),
  ];
  it('matches namespace and podSelector, sorted by name', () => {
    const covering = rulesForPod(rules, { namespace: 'default', labels: { app: 'web' } });
    expect(covering.map((r) => r.name)).toEqual(['alpha', 'zeta']);
  });
  it('never covers another namespace', () => {
    expect(ruleCoversPod(makeRule({}, 'r', 'prod'), { namespace: 'default', labels: {} })).toBe(false);
  });
});

describe('nodeAllowedByRule', () => {
  const gpu = makeNode('node-a', { pool: 'gpu' });
  const cpu = makeNode('node-b', { pool: 'cpu' });
  it.each([
    { name: 'no restriction', spec: {}, node: gpu, code: undefined },
    { name: 'in allowedNodes', spec: { allowedNodes: ['node-a'] }, node: gpu, code: undefined },
    { name: 'not in allowedNodes', spec: { allowedNodes: ['node-a'] }, node: cpu, code: 'NotAllowed' },
    {
      name: 'nodeSelector match',
      spec: { nodeSelector: { matchLabels: { pool: 'gpu' } } },
      node: gpu,
      code: undefined,
    },
    {
      name: 'nodeSelector mismatch',
      spec: { nodeSelector: { matchLabels: { pool: 'gpu' } } },
      node: cpu,
      code: 'NodeSelectorMismatch',
    },
    {
      name: 'intersection: allowed by name but not by labels',
      spec: { allowedNodes: ['node-a', 'node-b'], nodeSelector: { matchLabels: { pool: 'gpu' } } },
      node: cpu,
      code: 'NodeSelectorMismatch',
    },
  ] as const)('$name → $code', ({ spec, node, code }) => {
    expect(nodeAllowedByRule(makeRule(spec as Partial<RuleSpec>), node)?.code).toBe(code);
  });

  it('reasons carry the rule name and the message', () => {
    expect(nodeAllowedByRule(makeRule({ allowedNodes: ['x'] }), gpu)).toEqual({
      code: 'NotAllowed',
      rule: 'web-tier',
      message: 'not in allowedNodes',
    });
  });

  it('allowedNodeNames: the nodes every rule allows', () => {
    const nodes = [gpu, cpu, makeNode('node-c', { pool: 'gpu' })];
    const rules = [
      makeRule({ allowedNodes: ['node-a', 'node-b'] }),
      makeRule({ nodeSelector: { matchLabels: { pool: 'gpu' } } }, 'gpu-only'),
    ];
    expect([...allowedNodeNames(rules, nodes)]).toEqual(['node-a']);
    expect(allowedNodeNames([], nodes).size).toBe(3);
  });

  it.each([
    { what: 'no rules', rules: [], want: true },
    { what: 'a listed node every rule allows', rules: [{ allowedNodes: ['node-a', 'node-b'] }], want: true },
    { what: 'listed nodes that do not exist', rules: [{ allowedNodes: ['gone-1', 'gone-2'] }], want: false },
    {
      what: 'a listed node another rule refuses',
      rules: [{ allowedNodes: ['node-b'] }, { nodeSelector: { matchLabels: { pool: 'gpu' } } }],
      want: false,
    },
    {
      what: 'the shorter list decides, the longer one still applies',
      rules: [{ allowedNodes: ['node-a', 'node-b', 'node-c'] }, { allowedNodes: ['node-c', 'node-x'] }],
      want: true,
    },
    {
      what: 'a selector some node matches',
      rules: [{ nodeSelector: { matchLabels: { pool: 'gpu' } } }],
      want: true,
    },
    {
      what: 'a selector no node matches',
      rules: [{ nodeSelector: { matchLabels: { pool: 'tpu' } } }],
      want: false,
    },
  ])('someNodeAllowed: $what → $want', ({ rules, want }) => {
    const nodes = new Map([gpu, cpu, makeNode('node-c', { pool: 'gpu' })].map((n) => [n.name, n]));
    const list = rules.map((spec, i) => makeRule(spec as Partial<RuleSpec>, `r${i}`));
    expect(someNodeAllowed(list, nodes)).toBe(want);
    // The same answer as the full set, which walks every node.
    expect(someNodeAllowed(list, nodes)).toBe(allowedNodeNames(list, nodes.values()).size > 0);
  });
});

describe('evaluateNodeForRule', () => {
  const rule = makeRule({ maxCPU: 80, maxMemory: 75 });
  const node = makeNode('node-a');
  it.each([
    { name: 'under both limits', cpu: 50, mem: 40, reasons: [], headroom: 30 },
    { name: 'exactly at the limits is allowed', cpu: 80, mem: 75, reasons: [], headroom: 0 },
    { name: 'cpu over', cpu: 91, mem: 10, reasons: ['cpu 91% > maxCPU 80%'], headroom: -11 },
    { name: 'memory over', cpu: 10, mem: 80.5, reasons: ['memory 80.5% > maxMemory 75%'], headroom: -5.5 },
    {
      name: 'both over',
      cpu: 95.25,
      mem: 99,
      reasons: ['cpu 95.3% > maxCPU 80%', 'memory 99% > maxMemory 75%'],
      headroom: -24,
    },
    {
      name: 'barely over still reads as over',
      cpu: 80.04,
      mem: 0,
      reasons: ['cpu 80.04% > maxCPU 80%'],
      headroom: -0.04,
    },
  ])('$name', ({ cpu, mem, reasons, headroom }) => {
    const verdict = evaluateNodeForRule(rule, node, makeLoad('node-a', cpu, mem));
    expect(verdict.node).toBe('node-a');
    expect(verdict.eligible).toBe(reasons.length === 0);
    expect(verdict.reasons.map((r) => r.message)).toEqual(reasons);
    expect(verdict.headroom).toBeCloseTo(headroom, 10);
  });

  it('threshold reasons carry the figure and the limit', () => {
    const [reason] = evaluateNodeForRule(rule, node, makeLoad('node-a', 91, 0)).reasons;
    expect(reason).toEqual({
      code: 'CPUThresholdExceeded',
      rule: 'web-tier',
      message: 'cpu 91% > maxCPU 80%',
      value: 91,
      threshold: 80,
    });
  });

  it('unavailable load (fail-closed) is ineligible whatever the figures say', () => {
    const verdict = evaluateNodeForRule(rule, node, makeLoad('node-a', 10, 10, true));
    expect(verdict.eligible).toBe(false);
    expect(verdict.reasons).toEqual([
      { code: 'LoadUnavailable', rule: 'web-tier', message: 'metrics stale or missing (fail-closed)' },
    ]);
  });

  it('reports both a node-set reason and a load reason', () => {
    const verdict = evaluateNodeForRule(
      makeRule({ allowedNodes: ['node-b'] }),
      node,
      makeLoad('node-a', 90, 0),
    );
    expect(verdict.reasons.map((r) => r.code)).toEqual(['NotAllowed', 'CPUThresholdExceeded']);
  });
});

describe('evaluatePlacement', () => {
  const rule = makeRule({ maxCPU: 80, maxMemory: 80, allowedNodes: ['node-a'] });
  it.each([
    { name: 'fits', node: 'node-a', cpu: 79.9, codes: [] },
    { name: 'lands exactly on the limit', node: 'node-a', cpu: 80, codes: [] },
    { name: 'would exceed', node: 'node-a', cpu: 80.1, codes: ['CPUThresholdExceeded'] },
    { name: 'not allowed', node: 'node-b', cpu: 10, codes: ['NotAllowed'] },
  ])('$name → $codes', ({ node, cpu, codes }) => {
    const reasons = evaluatePlacement(rule, makeNode(node), makeLoad(node, cpu, 0));
    expect(reasons.map((r) => r.code)).toEqual(codes);
  });
});

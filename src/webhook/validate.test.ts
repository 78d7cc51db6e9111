import { describe, expect, it } from 'vitest';
import type { LabelSelector } from '../cluster/model.js';
import type { NodeLoadRule } from '../rules/types.js';
import { webhookNode } from './testing.js';
import { ruleWarnings, selectorsMayOverlap, validatePinnedPod } from './validate.js';

function rule(
  name: string,
  spec: { allowedNodes?: string[]; nodeSelector?: LabelSelector; podSelector?: LabelSelector } = {},
): NodeLoadRule {
  return {
    namespace: 'team',
    name,
    uid: name,
    generation: 1,
    resourceVersion: '1',
    creationTimestamp: '',
    spec: { maxCPU: 80, maxMemory: 80, allowedNodes: spec.allowedNodes ?? [], ...spec },
  };
}

const node = webhookNode;

const NODES = new Map([
  ['n1', node('n1', { tier: 'gold' })],
  ['n2', node('n2', { tier: 'silver' })],
  ['n3', node('n3', { tier: 'gold' })],
]);

describe('validatePinnedPod', () => {
  it.each([
    { what: 'not pinned', nodeName: '', rules: [rule('r', { allowedNodes: ['n1'] })], deniedBy: [] },
    { what: 'no rules', nodeName: 'n2', rules: [], deniedBy: [] },
    { what: 'allowed node', nodeName: 'n1', rules: [rule('r', { allowedNodes: ['n1'] })], deniedBy: [] },
    {
      what: 'node outside allowedNodes',
      nodeName: 'n2',
      rules: [rule('r', { allowedNodes: ['n1'] })],
      deniedBy: ['r'],
    },
    {
      what: 'node outside nodeSelector',
      nodeName: 'n2',
      rules: [rule('gold', { nodeSelector: { matchLabels: { tier: 'gold' } } })],
      deniedBy: ['gold'],
    },
    {
      what: 'every refusing rule is named',
      nodeName: 'n2',
      rules: [rule('a', { allowedNodes: ['n1'] }), rule('b'), rule('c', { allowedNodes: ['n3'] })],
      deniedBy: ['a', 'c'],
    },
    {
      what: 'unknown node against a nodeSelector',
      nodeName: 'ghost',
      rules: [rule('gold', { nodeSelector: { matchLabels: { tier: 'gold' } } })],
      deniedBy: ['gold'],
    },
    {
      what: 'unknown node listed in allowedNodes',
      nodeName: 'ghost',
      rules: [rule('r', { allowedNodes: ['ghost'] })],
      deniedBy: [],
    },
  ])('$what', ({ nodeName, rules, deniedBy }) => {
    const v = validatePinnedPod(nodeName, rules, NODES);
    expect(v.allowed).toBe(deniedBy.length === 0);
    if (!v.allowed) {
      expect(v.message).toContain(`node "${nodeName}"`);
      expect(v.refusedBy).toEqual(deniedBy);
      for (const r of rules) {
        if (deniedBy.includes(r.name)) expect(v.message).toContain(`NodeLoadRule "${r.name}"`);
        else expect(v.message).not.toContain(`NodeLoadRule "${r.name}"`);
      }
    }
  });

  it('says why for an unknown node', () => {
    const v = validatePinnedPod(
      'ghost',
      [rule('gold', { nodeSelector: { matchLabels: { tier: 'gold' } } })],
      NODES,
    );
    expect(v.allowed).toBe(false);
    if (!v.allowed) expect(v.message).toMatch(/NodeSelectorMismatch: node is unknown/);
  });
});

describe('selectorsMayOverlap', () => {
  it.each([
    { a: undefined, b: undefined, want: true },
    { a: { matchLabels: { app: 'x' } }, b: { matchLabels: { app: 'y' } }, want: false },
    { a: { matchLabels: { app: 'x' } }, b: { matchLabels: { tier: 'y' } }, want: true },
    {
      a: { matchLabels: { app: 'x' } },
      b: { matchExpressions: [{ key: 'app', operator: 'In', values: ['x', 'z'] }] },
      want: true,
    },
    {
      a: { matchLabels: { app: 'x' } },
      b: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['x'] }] },
      want: false,
    },
    {
      a: { matchLabels: { app: 'x' } },
      b: { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] },
      want: false,
    },
    {
      a: { matchExpressions: [{ key: 'app', operator: 'Exists' }] },
      b: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['x'] }] },
      want: true,
    },
  ] as { a?: LabelSelector; b?: LabelSelector; want: boolean }[])('%j', ({ a, b, want }) => {
    expect(selectorsMayOverlap(a, b)).toBe(want);
    expect(selectorsMayOverlap(b, a)).toBe(want);
  });
});

describe('ruleWarnings', () => {
  const nodes = [...NODES.values()];

  it('flags duplicates even before the node list is known', () => {
    expect(ruleWarnings(rule('r', { allowedNodes: ['n1', 'n1', 'n2'] }), [], undefined)).toEqual([
      'spec.allowedNodes: "n1" is listed 2 times',
    ]);
  });

  it('names nodes that do not exist', () => {
    const w = ruleWarnings(rule('r', { allowedNodes: ['n1', 'ghost'] }), [], nodes);
    expect(w).toEqual(['spec.allowedNodes: no node named "ghost"']);
  });

  it('says so when no listed node exists (and that the rule allows none)', () => {
    const w = ruleWarnings(rule('r', { allowedNodes: ['ghost'] }), [], nodes);
    expect(w[0]).toMatch(/none of the listed nodes exists/);
    expect(w[1]).toMatch(/NodeLoadRule "r" allows none of the 3 existing nodes/);
  });

  it('warns when the rule together with an overlapping rule allows no node', () => {
    const incoming = rule('new', { allowedNodes: ['n1'] });
    const others = [
      rule('silver', { nodeSelector: { matchLabels: { tier: 'silver' } } }),
      rule('other-pods', { allowedNodes: ['n2'], podSelector: { matchLabels: { app: 'other' } } }),
    ];
    const w = ruleWarnings(
      { ...incoming, spec: { ...incoming.spec, podSelector: { matchLabels: { app: 'web' } } } },
      others,
      nodes,
    );
    expect(w).toEqual([expect.stringMatching(/together with NodeLoadRule "silver"/)]);
  });

  it('ignores the rule itself among the others (an update) and other namespaces', () => {
    const r = rule('r', { allowedNodes: ['n1'] });
    const elsewhere = { ...rule('x', { allowedNodes: ['n2'] }), namespace: 'other' };
    expect(ruleWarnings(r, [rule('r', { allowedNodes: ['n2'] }), elsewhere], nodes)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import type { RuleView, Simulation } from './operations.js';
import { patchCommand, specInput, whatIfMarks } from './whatif-model.js';

const rule: RuleView = {
  namespace: 'shop',
  name: 'web',
  generation: 3,
  spec: {
    maxCPU: 70,
    maxMemory: 80,
    allowedNodes: ['a', 'b'],
    nodeSelector: {
      matchLabels: [{ key: 'pool', value: 'web' }],
      matchExpressions: [{ key: 'zone', operator: 'Exists', values: [] }],
    },
    podSelector: { matchLabels: [{ key: 'tier', value: 'web' }], matchExpressions: [] },
    burst: { maxPlacements: 5, windowSeconds: 10 },
  },
  status: null,
  evaluation: { evaluatedAt: null, eligible: [], ineligible: [] },
};

describe('specInput', () => {
  it('carries every field of the spec, so the simulation changes only what was edited', () => {
    expect(specInput(rule.spec, { maxCPU: 50 })).toEqual({
      maxCPU: 50,
      maxMemory: 80,
      allowedNodes: ['a', 'b'],
      nodeSelector: {
        matchLabels: [{ key: 'pool', value: 'web' }],
        // Exists takes no values, so none are sent.
        matchExpressions: [{ key: 'zone', operator: 'Exists' }],
      },
      podSelector: { matchLabels: [{ key: 'tier', value: 'web' }], matchExpressions: [] },
      burst: { maxPlacements: 5, windowSeconds: 10 },
    });
  });
});

describe('patchCommand', () => {
  it('is undefined while nothing differs from the current spec', () => {
    expect(patchCommand(rule, specInput(rule.spec))).toBeUndefined();
  });

  it('patches only the fields that changed', () => {
    expect(patchCommand(rule, specInput(rule.spec, { maxMemory: 60, allowedNodes: ['a'] }))).toBe(
      `kubectl -n shop patch nodeloadrule web --type merge -p '{"spec":{"maxMemory":60,"allowedNodes":["a"]}}'`,
    );
  });
});

describe('whatIfMarks', () => {
  it('marks nodes that would become eligible and ineligible', () => {
    const sim: Simulation = {
      exists: true,
      eligibleBefore: 2,
      eligibleAfter: 2,
      nodesBecomingEligible: ['c'],
      nodesBecomingIneligible: [{ node: 'a', reasons: ['cpu 71% > maxCPU 60%'] }],
      pendingPodsBecomingSchedulable: [],
      pendingPodsBecomingUnschedulable: [],
      runningPodsBreaching: [],
    };
    expect([...whatIfMarks(sim)]).toEqual([
      ['c', 'gain'],
      ['a', 'lose'],
    ]);
    expect(whatIfMarks(undefined).size).toBe(0);
  });
});

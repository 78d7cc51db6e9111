import { describe, expect, it } from 'vitest';
import { nodeAffinityMatches, toleratesTaint, untoleratedTaint } from './predicates.js';
import { node, pod } from './testing.js';

describe('toleratesTaint', () => {
  it.each([
    [{ key: 'k', operator: 'Exists' }, { key: 'k', value: 'v', effect: 'NoSchedule' }, true],
    [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }, { key: 'k', effect: 'NoSchedule' }, false],
    [{ key: 'k', value: 'v' }, { key: 'k', value: 'v', effect: 'NoSchedule' }, true],
    [{ key: 'k' }, { key: 'k', effect: 'NoSchedule' }, true],
    [{ key: 'other', operator: 'Exists' }, { key: 'k', effect: 'NoSchedule' }, false],
    [{ operator: 'Equal', value: 'v' }, { key: 'k', value: 'v', effect: 'NoSchedule' }, false],
  ])('%j vs %j → %s', (t, taint, want) => {
    expect(toleratesTaint(t, taint)).toBe(want);
  });
});

describe('nodeAffinityMatches', () => {
  it('requires nodeSelector and affinity together', () => {
    const n = node('n', { labels: { zone: 'a', disk: 'ssd' } });
    const p = pod('p', {
      nodeSelector: { disk: 'ssd' },
      affinityTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }],
    });
    expect(nodeAffinityMatches(p, n)).toBe(false);
  });
});

describe('untoleratedTaint', () => {
  it('returns the first NoSchedule/NoExecute taint not tolerated, ignoring PreferNoSchedule', () => {
    const taints = [
      { key: 'soft', effect: 'PreferNoSchedule' },
      { key: 'a', effect: 'NoSchedule' },
      { key: 'b', value: 'x', effect: 'NoExecute' },
    ];
    expect(untoleratedTaint(taints, [])).toEqual({ key: 'a', effect: 'NoSchedule' });
    expect(untoleratedTaint(taints, [{ key: 'a', operator: 'Exists' }])).toEqual({
      key: 'b',
      value: 'x',
      effect: 'NoExecute',
    });
    expect(
      untoleratedTaint(taints, [
        { key: 'a', operator: 'Exists' },
        { key: 'b', value: 'x' },
      ]),
    ).toBeUndefined();
  });
});

describe('matchFields', () => {
  it.each([
    ['In', ['n1'], true],
    ['NotIn', ['n1'], false],
    ['NotIn', ['n2'], true],
  ])('metadata.name %s %j on n1 → %s', (operator, values, want) => {
    const p = pod('p', { affinityTerms: [{ matchFields: [{ key: 'metadata.name', operator, values }] }] });
    expect(nodeAffinityMatches(p, node('n1'))).toBe(want);
  });

  it('matches nothing on a field other than metadata.name', () => {
    const p = pod('p', {
      affinityTerms: [{ matchFields: [{ key: 'spec.unschedulable', operator: 'NotIn', values: ['x'] }] }],
    });
    expect(nodeAffinityMatches(p, node('n1'))).toBe(false);
  });
});

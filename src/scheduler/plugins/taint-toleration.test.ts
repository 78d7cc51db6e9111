import { describe, expect, it } from 'vitest';
import type { Toleration } from '../../cluster/model.js';
import { node, pod } from '../testing.js';
import { cycleOf, reasonsOf, scoresOf, verdictOn } from './plugin.testing.js';
import { taintToleration } from './taint-toleration.js';

type T = { key: string; value?: string; effect: string };

describe('TaintToleration filter', () => {
  it.each<{ name: string; taints: T[]; tolerations?: Toleration[]; want: string[] }>([
    { name: 'no taints', taints: [], want: [] },
    {
      name: 'NoSchedule taint',
      taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }],
      want: ['taint gpu=true:NoSchedule not tolerated'],
    },
    {
      name: 'NoExecute taint without a value',
      taints: [{ key: 'dedicated', effect: 'NoExecute' }],
      want: ['taint dedicated:NoExecute not tolerated'],
    },
    {
      name: 'PreferNoSchedule is not a filter',
      taints: [{ key: 'soft', effect: 'PreferNoSchedule' }],
      want: [],
    },
    {
      name: 'tolerated with Equal and the value',
      taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }],
      tolerations: [{ key: 'gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
      want: [],
    },
    {
      name: 'Equal is the default operator',
      taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }],
      tolerations: [{ key: 'gpu', value: 'true' }],
      want: [],
    },
    {
      name: 'wrong value',
      taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }],
      tolerations: [{ key: 'gpu', value: 'false' }],
      want: ['taint gpu=true:NoSchedule not tolerated'],
    },
    {
      name: 'toleration for another effect',
      taints: [{ key: 'gpu', effect: 'NoExecute' }],
      tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
      want: ['taint gpu:NoExecute not tolerated'],
    },
    {
      name: 'Exists with a key tolerates any value',
      taints: [{ key: 'gpu', value: 'a100', effect: 'NoSchedule' }],
      tolerations: [{ key: 'gpu', operator: 'Exists' }],
      want: [],
    },
    {
      name: 'empty-key Exists tolerates everything',
      taints: [
        { key: 'a', effect: 'NoSchedule' },
        { key: 'b', value: 'x', effect: 'NoExecute' },
      ],
      tolerations: [{ operator: 'Exists' }],
      want: [],
    },
    {
      name: 'empty-key Equal tolerates nothing',
      taints: [{ key: 'a', effect: 'NoSchedule' }],
      tolerations: [{ operator: 'Equal' }],
      want: ['taint a:NoSchedule not tolerated'],
    },
    {
      name: 'the not-ready taint (the node lifecycle controller sets it) keeps pods off',
      taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
      want: ['taint node.kubernetes.io/not-ready:NoSchedule not tolerated'],
    },
    {
      name: 'the not-ready taint tolerated, as DaemonSet pods do',
      taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }],
      want: [],
    },
    {
      name: 'only the first untolerated taint is reported',
      taints: [
        { key: 'a', effect: 'NoSchedule' },
        { key: 'b', effect: 'NoSchedule' },
      ],
      tolerations: [{ key: 'a', operator: 'Exists' }],
      want: ['taint b:NoSchedule not tolerated'],
    },
  ])('$name', ({ taints, tolerations, want }) => {
    const v = verdictOn(taintToleration(), pod('p', { tolerations }), node('n', { taints }));
    // Which taint is in the detail; the reason is upstream's, the same for every taint.
    expect(v.reasons.map((r) => r.detail)).toEqual(want);
    expect(reasonsOf(v)).toEqual(want.map(() => 'node(s) had untolerated taint(s)'));
    expect(v.feasible).toBe(want.length === 0);
    for (const r of v.reasons) {
      expect(r).toMatchObject({ plugin: 'TaintToleration', code: 'TaintNotTolerated', unresolvable: true });
    }
  });

  it('details the taint with its value and effect', () => {
    const v = verdictOn(
      taintToleration(),
      pod('p'),
      node('n', { taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }] }),
    );
    expect(v.reasons[0]?.detail).toBe('taint k=v:NoExecute not tolerated');
  });
});

describe('TaintToleration score (PreferNoSchedule, reversed normalize)', () => {
  const soft = (key: string, value?: string): T => ({
    key,
    ...(value ? { value } : {}),
    effect: 'PreferNoSchedule',
  });
  const nodes = [
    node('none'),
    node('one', { taints: [soft('a')] }),
    node('two', { taints: [soft('a'), soft('b')] }),
    // NoSchedule taints are the filter's business; a tolerated one adds nothing to the score.
    node('hard', { taints: [{ key: 'h', effect: 'NoSchedule' }, soft('a')] }),
  ];
  const hardOk: Toleration = { key: 'h', operator: 'Exists', effect: 'NoSchedule' };

  it.each<{ name: string; tolerations: Toleration[]; want: Record<string, number> }>([
    {
      name: 'fewer untolerated taints score higher: 100 − 100 × count / max',
      tolerations: [hardOk],
      want: { none: 100, one: 50, two: 0, hard: 50 },
    },
    {
      name: 'a PreferNoSchedule toleration removes its taint from the count',
      tolerations: [hardOk, { key: 'a', operator: 'Exists', effect: 'PreferNoSchedule' }],
      want: { none: 100, one: 100, two: 0, hard: 100 },
    },
    {
      name: 'a toleration without effect counts too',
      tolerations: [hardOk, { key: 'b', operator: 'Exists' }],
      want: { none: 100, one: 0, two: 0, hard: 0 },
    },
    {
      name: 'a toleration with another effect (NoSchedule) does not count',
      tolerations: [hardOk, { key: 'a', operator: 'Exists', effect: 'NoSchedule' }],
      want: { none: 100, one: 50, two: 0, hard: 50 },
    },
    {
      name: 'everything tolerated: every node 100 (max 0, reversed)',
      tolerations: [{ operator: 'Exists' }],
      want: { none: 100, one: 100, two: 100, hard: 100 },
    },
  ])('$name', ({ tolerations, want }) => {
    expect(scoresOf(taintToleration(), pod('p', { tolerations }), { nodes })).toEqual(want);
  });

  it('ranks the untainted node first and does not score infeasible nodes', () => {
    const { ranked, verdicts } = cycleOf(taintToleration(), pod('p'), { nodes });
    expect(ranked.map((r) => r.node)).toEqual(['none', 'one', 'two']);
    expect(verdicts.find((v) => v.node === 'hard')?.feasible).toBe(false);
  });
});

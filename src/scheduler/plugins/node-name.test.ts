import { describe, expect, it } from 'vitest';
import { node, pod } from '../testing.js';
import { nodeName } from './node-name.js';
import { cycleOf } from './plugin.testing.js';

describe('NodeName', () => {
  const nodes = [node('a'), node('b')];

  it.each([
    { name: 'no spec.nodeName: every node', nodeName: undefined, feasible: ['a', 'b'] },
    { name: 'spec.nodeName: only that node', nodeName: 'b', feasible: ['b'] },
    { name: 'spec.nodeName of an unknown node: none', nodeName: 'zz', feasible: [] },
  ])('$name', ({ nodeName: want, feasible }) => {
    const { verdicts } = cycleOf(nodeName(), pod('p', { nodeName: want, phase: 'Pending' }), { nodes });
    expect(verdicts.filter((v) => v.feasible).map((v) => v.node)).toEqual(feasible);
    for (const v of verdicts.filter((x) => !x.feasible)) {
      expect(v.reasons).toEqual([
        expect.objectContaining({
          plugin: 'NodeName',
          code: 'NodeNameMismatch',
          reason: "node(s) didn't match the requested node name",
          unresolvable: true,
        }),
      ]);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { node, pod } from '../testing.js';
import { nodeUnschedulable } from './node-unschedulable.js';
import { verdictOn } from './plugin.testing.js';

const UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

describe('NodeUnschedulable', () => {
  it.each([
    { name: 'schedulable node', cordoned: false, tolerations: [], fails: false },
    { name: 'cordoned node', cordoned: true, tolerations: [], fails: true },
    {
      name: 'cordoned, tolerated with Exists',
      cordoned: true,
      tolerations: [{ key: UNSCHEDULABLE, operator: 'Exists' }],
      fails: false,
    },
    {
      name: 'cordoned, tolerated with Exists and the NoSchedule effect',
      cordoned: true,
      tolerations: [{ key: UNSCHEDULABLE, operator: 'Exists', effect: 'NoSchedule' }],
      fails: false,
    },
    {
      name: 'cordoned, toleration of another effect does not count',
      cordoned: true,
      tolerations: [{ key: UNSCHEDULABLE, operator: 'Exists', effect: 'NoExecute' }],
      fails: true,
    },
    {
      name: 'cordoned, tolerated by an empty-key Exists (tolerates everything)',
      cordoned: true,
      tolerations: [{ operator: 'Exists' }],
      fails: false,
    },
    {
      name: 'cordoned, toleration of another key',
      cordoned: true,
      tolerations: [{ key: 'other', operator: 'Exists' }],
      fails: true,
    },
  ])('$name', ({ cordoned, tolerations, fails }) => {
    const v = verdictOn(
      nodeUnschedulable(),
      pod('p', { tolerations }),
      node('n', { unschedulable: cordoned }),
    );
    expect(v.feasible).toBe(!fails);
    if (fails) {
      expect(v.reasons).toEqual([
        {
          plugin: 'NodeUnschedulable',
          code: 'NodeUnschedulable',
          reason: 'node(s) were unschedulable',
          detail: 'spec.unschedulable is true (cordoned)',
          unresolvable: true,
        },
      ]);
    }
  });
});

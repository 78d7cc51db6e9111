import { describe, expect, it } from 'vitest';
import { selectorAnchor, selectorMatches } from './labels.js';
import type { LabelSelector } from './model.js';

describe('selectorAnchor', () => {
  const cases: { name: string; sel: LabelSelector | undefined; want: string | undefined }[] = [
    { name: 'no selector', sel: undefined, want: undefined },
    { name: 'empty selector', sel: {}, want: undefined },
    { name: 'a matchLabels entry', sel: { matchLabels: { app: 'web', tier: 'fe' } }, want: 'app=web' },
    {
      name: 'an In requirement with one value',
      sel: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
      want: 'app=web',
    },
    {
      name: 'In with several values: none',
      sel: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] },
      want: undefined,
    },
    {
      name: 'Exists, NotIn, DoesNotExist: none',
      sel: {
        matchExpressions: [
          { key: 'app', operator: 'Exists' },
          { key: 'app', operator: 'NotIn', values: ['db'] },
          { key: 'x', operator: 'DoesNotExist' },
        ],
      },
      want: undefined,
    },
    {
      name: 'the first single-value In after others',
      sel: {
        matchExpressions: [
          { key: 'app', operator: 'Exists' },
          { key: 'rev', operator: 'In', values: ['7'] },
        ],
      },
      want: 'rev=7',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const anchor = selectorAnchor(c.sel);
      expect(anchor).toBe(c.want);
      if (anchor === undefined || !c.sel) return;
      // What it promises: an object without the anchor label never matches.
      const [key, value] = anchor.split('=') as [string, string];
      expect(selectorMatches(c.sel, { app: 'web', tier: 'fe', rev: '7', [key]: `${value}-other` })).toBe(
        false,
      );
    });
  }
});

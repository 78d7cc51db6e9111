import { describe, expect, it } from 'vitest';
import { selectorAnchors, selectorMatches } from './labels.js';
import type { LabelSelector } from './model.js';

describe('selectorAnchors', () => {
  const cases: { name: string; sel: LabelSelector | undefined; want: string[] }[] = [
    { name: 'no selector', sel: undefined, want: [] },
    { name: 'empty selector', sel: {}, want: [] },
    {
      name: 'every matchLabels entry',
      sel: { matchLabels: { app: 'web', tier: 'fe' } },
      want: ['app=web', 'tier=fe'],
    },
    {
      name: 'an In requirement with one value',
      sel: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
      want: ['app=web'],
    },
    {
      name: 'In with several values: none',
      sel: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] },
      want: [],
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
      want: [],
    },
    {
      name: 'single-value In requirements among others, after matchLabels',
      sel: {
        matchLabels: { tier: 'fe' },
        matchExpressions: [
          { key: 'app', operator: 'Exists' },
          { key: 'rev', operator: 'In', values: ['7'] },
        ],
      },
      want: ['tier=fe', 'rev=7'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const anchors = selectorAnchors(c.sel);
      expect(anchors).toEqual(c.want);
      if (!c.sel) return;
      // What it promises: an object without any one of the anchor labels never matches.
      for (const anchor of anchors) {
        const [key, value] = anchor.split('=') as [string, string];
        expect(selectorMatches(c.sel, { app: 'web', tier: 'fe', rev: '7', [key]: `${value}-other` })).toBe(
          false,
        );
      }
    });
  }
});

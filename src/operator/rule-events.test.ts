import { describe, expect, it } from 'vitest';
import { seriesKey } from './rule-events.js';

describe('seriesKey', () => {
  const rule = { namespace: 'shop', name: 'web' };
  it.each([
    // The note (load figures of the moment) is not part of the key: a flap continues the series.
    {
      a: { type: 'Warning', reason: 'NodeIneligible', node: 'n1', note: 'cpu 95% > maxCPU 80%' },
      b: { type: 'Warning', reason: 'NodeIneligible', node: 'n1', note: 'cpu 91% > maxCPU 80%' },
      same: true,
    },
    {
      a: { type: 'Warning', reason: 'NodeIneligible', node: 'n1', note: '' },
      b: { type: 'Normal', reason: 'NodeEligible', node: 'n1', note: '' },
      same: false,
    },
    {
      a: { type: 'Warning', reason: 'NodeIneligible', node: 'n1', note: '' },
      b: { type: 'Warning', reason: 'NodeIneligible', node: 'n2', note: '' },
      same: false,
    },
    {
      a: { type: 'Warning', reason: 'NodeIneligible', note: '12 nodes' },
      b: { type: 'Warning', reason: 'NodeIneligible', note: '40 nodes' },
      same: true,
    },
  ] as const)('$a.reason/$a.node vs $b.reason/$b.node: same series $same', ({ a, b, same }) => {
    expect(seriesKey(rule, a) === seriesKey(rule, b)).toBe(same);
  });

  it('differs by rule', () => {
    const spec = { type: 'Warning', reason: 'NodeIneligible', node: 'n1', note: '' } as const;
    expect(seriesKey(rule, spec)).not.toBe(seriesKey({ namespace: 'shop', name: 'api' }, spec));
    expect(seriesKey(rule, spec)).not.toBe(seriesKey({ namespace: 'shop2', name: 'web' }, spec));
  });
});

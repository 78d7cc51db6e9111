import { describe, expect, it } from 'vitest';
import { EventSeries, seriesKey } from './rule-events.js';

const MIN = 60_000;

describe('EventSeries', () => {
  // Each row: observations of one key (ms), with `created` when the row's step created an Event; the
  // expected answer of repeat() before each: undefined (create) or the count written on the series.
  it.each([
    { what: 'first occurrence: a new Event', at: [0], expect: [undefined] },
    { what: 'repeats within the window count on it', at: [0, 1 * MIN, 2 * MIN], expect: [undefined, 2, 3] },
    {
      what: 'the window runs from the last occurrence, not the first',
      at: [0, 5 * MIN, 10 * MIN, 15 * MIN],
      expect: [undefined, 2, 3, 4],
    },
    { what: 'exactly six minutes later still counts', at: [0, 6 * MIN], expect: [undefined, 2] },
    {
      what: 'later than six minutes: a new Event',
      at: [0, 6 * MIN + 1, 7 * MIN],
      expect: [undefined, undefined, 2],
    },
  ])('$what', ({ at, expect: expected }) => {
    const series = new EventSeries();
    const got = at.map((now, i) => {
      const repeat = series.repeat('k', now);
      if (!repeat) series.started('k', `event-${i}`, now);
      return repeat?.count;
    });
    expect(got).toEqual(expected);
  });

  it('a repeat names the Event that started its series', () => {
    const series = new EventSeries();
    series.started('k', 'web.18c', 0);
    expect(series.repeat('k', 1)).toEqual({ name: 'web.18c', count: 2 });
  });

  it('forgets the least recently observed series past its cap', () => {
    const series = new EventSeries(6 * MIN, 2);
    series.started('a', 'ea', 0);
    series.started('b', 'eb', 1);
    expect(series.repeat('a', 2)?.count).toBe(2); // a is now the most recent
    series.started('c', 'ec', 3);
    expect(series.size).toBe(2);
    expect(series.repeat('b', 4)).toBeUndefined();
    expect(series.repeat('a', 5)?.count).toBe(3);
  });

  it('forget(): the next occurrence is a new Event', () => {
    const series = new EventSeries();
    series.started('k', 'e', 0);
    series.forget('k');
    expect(series.repeat('k', 1)).toBeUndefined();
  });
});

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

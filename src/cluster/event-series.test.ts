import { describe, expect, it } from 'vitest';
import { EventSeries } from './event-series.js';

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

  it('forget(key, name) ends the series only while that Event is still its own', () => {
    const series = new EventSeries();
    series.started('k', 'old', 0);
    series.started('k', 'new', 1);
    series.forget('k', 'old'); // a late 404 of the old Event
    expect(series.repeat('k', 2)).toEqual({ name: 'new', count: 2 });
    series.forget('k', 'new');
    expect(series.repeat('k', 3)).toBeUndefined();
  });

  it('forget(): the next occurrence is a new Event', () => {
    const series = new EventSeries();
    series.started('k', 'e', 0);
    series.forget('k');
    expect(series.repeat('k', 1)).toBeUndefined();
  });

  it('a repeat with another variant (the note, where it is keyed on) starts a new series', () => {
    const series = new EventSeries();
    series.started('pod', 'e1', 0, '0/3 nodes are available: 3 Insufficient cpu.');
    expect(series.repeat('pod', 1, '0/3 nodes are available: 3 Insufficient cpu.')?.count).toBe(2);
    expect(series.repeat('pod', 2, '0/3 nodes are available: 3 Insufficient memory.')).toBeUndefined();
    // The old series is over, not kept beside the new one: the first message again is a new Event too.
    series.started('pod', 'e2', 2, '0/3 nodes are available: 3 Insufficient memory.');
    expect(series.repeat('pod', 3, '0/3 nodes are available: 3 Insufficient cpu.')).toBeUndefined();
    expect(series.size).toBe(0);
  });
});

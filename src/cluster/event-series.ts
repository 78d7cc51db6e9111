/**
 * Which Events are open series, the way client-go's events recorder (tools/events) keeps them: an Event
 * that repeats within SERIES_WINDOW_MS of its last occurrence bumps `series.count` and
 * `series.lastObservedTime` on the Event already written instead of creating another, so a condition
 * that keeps recurring is one object with a count ("x12 over 20m" in kubectl), not one per occurrence.
 *
 * Pure bookkeeping (no I/O, no clock): the writers are the scheduler's binder (FailedScheduling, per pod)
 * and the operator's rule Events (per rule, reason and node). A series is named by a key; its `variant`
 * (the Event's note, where the writer keys on it as client-go does) must match too, and a repeat with
 * another variant starts a new series under the same key.
 */

/** client-go's: a series ends six minutes after its last occurrence. */
export const SERIES_WINDOW_MS = 6 * 60_000;
/** Open series kept; past it the least recently observed is forgotten (its next repeat starts a new Event). */
export const MAX_OPEN_SERIES = 10_000;

interface OpenSeries {
  name: string;
  variant: string;
  count: number;
  lastObserved: number;
}

/** A repeat to write as a count on an Event already written. */
export interface SeriesRepeat {
  name: string;
  count: number;
}

export class EventSeries {
  private readonly open = new Map<string, OpenSeries>();

  constructor(
    private readonly windowMs = SERIES_WINDOW_MS,
    private readonly maxOpen = MAX_OPEN_SERIES,
  ) {}

  /** The series `key` continues at `now`, or undefined when a new Event must be created. */
  repeat(key: string, now: number, variant = ''): SeriesRepeat | undefined {
    const open = this.open.get(key);
    if (!open) return undefined;
    this.open.delete(key);
    if (open.variant !== variant || now - open.lastObserved > this.windowMs) return undefined;
    open.count++;
    open.lastObserved = now;
    // Re-inserted: the Map's order is the order of last observation, oldest first.
    this.open.set(key, open);
    return { name: open.name, count: open.count };
  }

  /** The Event `name` was created for `key` at `now`: the start of its series. */
  started(key: string, name: string, now: number, variant = ''): void {
    this.open.delete(key);
    this.open.set(key, { name, variant, count: 1, lastObserved: now });
    for (const oldest of this.open.keys()) {
      if (this.open.size <= this.maxOpen) break;
      this.open.delete(oldest);
    }
  }

  /**
   * The series ends: its Event is gone (the API server's TTL, or deleted), or what it reported is over.
   * With `name`, only while that Event is still the series' (a write that failed late must not end the
   * series a newer Event started).
   */
  forget(key: string, name?: string): void {
    if (name === undefined || this.open.get(key)?.name === name) this.open.delete(key);
  }

  get size(): number {
    return this.open.size;
  }
}

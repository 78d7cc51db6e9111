import { describe, expect, it } from 'vitest';
import { GAP, heatLayout, LABEL_CELL } from './heat-layout.js';

describe('heatLayout', () => {
  it('gives a handful of nodes big labelled tiles on one row', () => {
    const l = heatLayout(3, 900, 320);
    expect(l.cell).toBeGreaterThanOrEqual(LABEL_CELL);
    expect(l.rows).toBe(1);
  });

  it.each([
    [50, 900],
    [1000, 900],
    [1000, 600],
    [2000, 1200],
  ])('fits %s nodes into %s px wide and 320 px high', (count, width) => {
    const l = heatLayout(count, width, 320);
    expect(l.height).toBeLessThanOrEqual(320);
    expect(l.cols * (l.cell + GAP) - GAP).toBeLessThanOrEqual(width);
    expect(l.cols * l.rows).toBeGreaterThanOrEqual(count);
    expect(l.cell).toBeGreaterThanOrEqual(7);
  });

  it('keeps a minimum cell and grows taller rather than shrinking cells to nothing', () => {
    const l = heatLayout(20_000, 600, 320);
    expect(l.cell).toBe(7);
    expect(l.height).toBeGreaterThan(320);
  });
});

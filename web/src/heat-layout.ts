/** How the heat map lays out N cells in the space it has. Pure. */

export const GAP = 2;
const MAX_CELL = 104;
const MIN_CELL = 7;
export const LABEL_CELL = 52;

export interface Layout {
  cell: number;
  cols: number;
  rows: number;
  height: number;
}

/** The largest cell that fits `count` cells into `width` × `maxHeight` (at least MIN_CELL). */
export function heatLayout(count: number, width: number, maxHeight: number): Layout {
  const usable = Math.max(width, MIN_CELL);
  for (let cell = MAX_CELL; cell >= MIN_CELL; cell--) {
    const cols = Math.max(1, Math.floor((usable + GAP) / (cell + GAP)));
    const rows = Math.ceil(count / cols);
    const height = rows * (cell + GAP) - GAP;
    if (height <= maxHeight || cell === MIN_CELL) return { cell, cols, rows, height: Math.max(height, 0) };
  }
  return { cell: MIN_CELL, cols: 1, rows: count, height: count * (MIN_CELL + GAP) };
}

import { describe, expect, it } from 'vitest';
import { bytes, cpuMilli, parseQuantity } from './quantity.js';

describe('quantities', () => {
  it.each([
    ['100m', 100],
    ['1', 1000],
    ['0.5', 500],
    ['2.5', 2500],
    ['1e-3', 1],
    ['1n', 1],
    [2, 2000],
  ])('cpu %s → %d millicores', (q, want) => {
    expect(cpuMilli(q)).toBe(want);
  });

  it.each([
    ['1Gi', 2 ** 30],
    ['128974848', 128974848],
    ['129e6', 129e6],
    ['129M', 129e6],
    ['123Mi', 123 * 2 ** 20],
    ['1k', 1000],
    ['1Ki', 1024],
  ])('memory %s → %d bytes', (q, want) => {
    expect(bytes(q)).toBe(want);
  });

  it.each([['abc'], [''], ['1Xi'], [{}], [[]], [null], [undefined], [Number.NaN]])(
    'invalid %s → undefined, and 0 for the resource helpers',
    (q) => {
      expect(parseQuantity(q)).toBeUndefined();
      expect(cpuMilli(q)).toBe(0);
      expect(bytes(q)).toBe(0);
    },
  );
});

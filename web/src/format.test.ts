import { describe, expect, it } from 'vitest';
import { formatAge, formatBytes, formatCpu, formatMs, formatPercent, formatPoints } from './format.js';

describe('format', () => {
  it.each([
    [250, '250m'],
    [999.6, '1000m'],
    [1000, '1'],
    [1500, '1.5'],
    [2250, '2.25'],
    [16_000, '16'],
    [12_500, '12.5'],
  ])('formatCpu(%s) = %s', (milli, text) => expect(formatCpu(milli)).toBe(text));

  it.each([
    [512, '512'],
    [1024, '1Ki'],
    [512 * 2 ** 20, '512Mi'],
    [1.5 * 2 ** 30, '1.5Gi'],
    [31.4 * 2 ** 30, '31.4Gi'],
    [2 ** 40, '1Ti'],
  ])('formatBytes(%s) = %s', (bytes, text) => expect(formatBytes(bytes)).toBe(text));

  it.each([
    [0, '0%'],
    [0.04, '0.0%'],
    [7.25, '7.3%'],
    [12.5, '13%'],
    [100, '100%'],
    [Number.NaN, '–'],
  ])('formatPercent(%s) = %s', (v, text) => expect(formatPercent(v)).toBe(text));

  it.each([
    [12.4, '+12 pp'],
    [-3, '−3.0 pp'],
    [0, '±0.0 pp'],
  ])('formatPoints(%s) = %s', (v, text) => expect(formatPoints(v)).toBe(text));

  it.each([
    [0, '0s'],
    [59_000, '59s'],
    [61_000, '1m'],
    [3 * 3600_000, '3h'],
    [50 * 3600_000, '2d'],
    [-5000, '0s'],
  ])('formatAge of a time %s ms ago = %s', (ago, text) => {
    const now = Date.parse('2026-11-29T12:00:00Z');
    expect(formatAge(new Date(now - ago).toISOString(), now)).toBe(text);
  });

  it('formatAge is a dash without a time', () => {
    expect(formatAge(null, 0)).toBe('–');
    expect(formatAge('not a time', 0)).toBe('–');
  });

  it.each([
    [0.42, '0.42 ms'],
    [3.14, '3.1 ms'],
    [42.4, '42 ms'],
    [1234, '1.23 s'],
  ])('formatMs(%s) = %s', (ms, text) => expect(formatMs(ms)).toBe(text));
});

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRunDelayNs, threadRunDelayReader } from './run-delay.js';

const bytes = (s: string) => Buffer.from(s, 'latin1');

describe('parseRunDelayNs', () => {
  it.each([
    { text: '1126601 10023243 5\n', want: 10023243 },
    { text: '0 0 0\n', want: 0 },
    { text: '229114294 202219770 405', want: 202219770 },
    { text: '1126601\n', want: Number.NaN },
    { text: '', want: Number.NaN },
    { text: '12 x 3', want: Number.NaN },
  ])('$text → $want', ({ text, want }) => {
    const b = bytes(`${text}garbage after the length`);
    expect(parseRunDelayNs(b, text.length)).toBe(want);
  });
});

describe('threadRunDelayReader', () => {
  it.runIf(existsSync('/proc/thread-self/schedstat'))(
    'reads a non-decreasing wait in ms, from one reader per thread',
    () => {
      const read = threadRunDelayReader();
      expect(read).toBeTypeOf('function');
      expect(threadRunDelayReader()).toBe(read);
      const a = read?.() ?? Number.NaN;
      const b = read?.() ?? Number.NaN;
      expect(Number.isFinite(a) && a >= 0).toBe(true);
      expect(b).toBeGreaterThanOrEqual(a);
    },
  );
});

import { describe, expect, it } from 'vitest';
import { ByNamespace } from './by-namespace.js';

const o = (namespace: string, name: string, v = 1) => ({ namespace, name, v });

describe('ByNamespace', () => {
  it('lists per namespace through sets, replacements and deletes', () => {
    const m = new ByNamespace<ReturnType<typeof o>>();
    m.set('a/x', o('a', 'x'));
    m.set('a/y', o('a', 'y'));
    m.set('b/x', o('b', 'x'));
    m.set('a/x', o('a', 'x', 2));
    expect([...m.inNamespace('a')]).toEqual([o('a', 'x', 2), o('a', 'y')]);
    expect(m.delete('a/y')).toBe(true);
    expect(m.delete('a/y')).toBe(false);
    expect([...m.inNamespace('a')]).toEqual([o('a', 'x', 2)]);
    expect([...m.inNamespace('c')]).toEqual([]);
    expect(m.size).toBe(2);
    m.clear();
    expect([...m.inNamespace('b')]).toEqual([]);
  });
});

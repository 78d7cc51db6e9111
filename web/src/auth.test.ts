import { describe, expect, it } from 'vitest';
import { adoptTokenFromLocation, authHeaders, storeToken, TOKEN_KEY, tokenFromFragment } from './auth.js';

function memoryStorage() {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => void items.set(k, v),
    removeItem: (k: string) => void items.delete(k),
  };
}

describe('tokenFromFragment', () => {
  it.each([
    ['#token=abc.def', { token: 'abc.def', rest: '' }],
    ['#token=a%2Bb&tab=rules', { token: 'a+b', rest: '#tab=rules' }],
    ['#tab=rules', undefined],
    ['#token=', undefined],
    ['', undefined],
  ])('%s → %j', (hash, want) => {
    expect(tokenFromFragment(hash)).toEqual(want);
  });
});

describe('adoptTokenFromLocation', () => {
  it("moves a login link's token into session storage and out of the address bar", () => {
    const storage = memoryStorage();
    const replaced: string[] = [];
    adoptTokenFromLocation({
      storage,
      location: { hash: '#token=secret', pathname: '/', search: '' },
      history: { replaceState: (_s, _t, url) => void replaced.push(String(url)) },
    });
    expect(storage.items.get(TOKEN_KEY)).toBe('secret');
    expect(replaced).toEqual(['/']);
    expect(authHeaders(storage)).toEqual({ authorization: 'Bearer secret' });
  });

  it('leaves an address without a token alone', () => {
    const storage = memoryStorage();
    const replaced: string[] = [];
    adoptTokenFromLocation({
      storage,
      location: { hash: '', pathname: '/', search: '' },
      history: { replaceState: (_s, _t, url) => void replaced.push(String(url)) },
    });
    expect(replaced).toEqual([]);
    expect(authHeaders(storage)).toEqual({});
  });
});

describe('storeToken', () => {
  it('keeps a trimmed token and forgets an empty one', () => {
    const storage = memoryStorage();
    storeToken('  tok  ', storage);
    expect(authHeaders(storage)).toEqual({ authorization: 'Bearer tok' });
    storeToken('', storage);
    expect(authHeaders(storage)).toEqual({});
  });
});

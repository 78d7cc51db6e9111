import { afterEach, describe, expect, it } from 'vitest';
import {
  adoptTokenFromLocation,
  authHeaders,
  authState,
  SESSION_ENDED_MESSAGE,
  sessionRefused,
  storedToken,
  storeToken,
  TOKEN_KEY,
  tokenFromFragment,
} from './auth.js';

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
    expect(authHeaders(storedToken(storage))).toEqual({ authorization: 'Bearer secret' });
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
    expect(authHeaders(storedToken(storage))).toEqual({});
  });
});

describe('storeToken', () => {
  it('keeps a trimmed token and forgets an empty one', () => {
    const storage = memoryStorage();
    storeToken('  tok  ', storage);
    expect(authHeaders(storedToken(storage))).toEqual({ authorization: 'Bearer tok' });
    storeToken('', storage);
    expect(authHeaders(storedToken(storage))).toEqual({});
  });
});

describe('sessionRefused', () => {
  afterEach(() => authState.set({ required: false, message: '', detail: '' }));

  it('drops the refused token and says the session ended, keeping the first refusal’s words', () => {
    const storage = memoryStorage();
    storeToken('old', storage);
    sessionRefused('old', 'invalid bearer token', storage);
    expect(storedToken(storage)).toBeUndefined();
    expect(authState.get()).toEqual({
      required: true,
      message: SESSION_ENDED_MESSAGE,
      detail: 'invalid bearer token',
    });
    sessionRefused(undefined, 'authentication required', storage); // a request sent after the drop
    expect(authState.get().message).toBe(SESSION_ENDED_MESSAGE);
  });

  it('keeps a token stored since the refused request was sent', () => {
    const storage = memoryStorage();
    storeToken('new', storage);
    sessionRefused('old', 'invalid bearer token', storage);
    expect(storedToken(storage)).toBe('new');
  });

  it("without a token (opened without a login link), shows the gateway's message", () => {
    sessionRefused(undefined, 'authentication required', memoryStorage());
    expect(authState.get()).toEqual({ required: true, message: 'authentication required', detail: '' });
  });
});

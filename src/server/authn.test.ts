import { describe, expect, it } from 'vitest';
import {
  authenticationStep,
  CachedTokenAuthenticator,
  isLoopbackAddress,
  isLoopbackHost,
  isPublicRequest,
  NO_TOKEN_MESSAGE,
  type TokenVerdict,
  tokenCacheKey,
  verdictFromTokenReview,
} from './authn.js';

describe('isPublicRequest', () => {
  it.each([
    ['GET', '/healthz', undefined, true],
    ['GET', '/readyz', undefined, true],
    ['POST', '/livez', undefined, true],
    ['GET', '/', undefined, true],
    ['GET', '/index.html', undefined, true],
    ['HEAD', '/assets/index-abc123.js', undefined, true],
    ['GET', '/graphql', 'text/html,application/xhtml+xml', true],
    ['GET', '/graphql', 'application/json', false],
    ['POST', '/graphql', 'text/html', false],
    ['POST', '/', undefined, false],
    ['GET', '/metrics', undefined, false],
    ['GET', '/api/node-load', undefined, false],
    ['GET', '/operator/suggestions', undefined, false],
    ['GET', '/scheduler/status', undefined, false],
    ['GET', '/assets', undefined, false],
    ['GET', '/no/such/route', undefined, false],
  ])('%s %s (Accept: %s) → %s', (method, path, accept, want) => {
    expect(isPublicRequest({ method, path, accept })).toBe(want);
  });
});

describe('authenticationStep', () => {
  it.each([
    ['a public request', { authorization: undefined, anonymous: false, isPublic: true }, { kind: 'public' }],
    [
      'no token',
      { authorization: undefined, anonymous: false },
      { kind: 'reject', message: NO_TOKEN_MESSAGE },
    ],
    [
      'an empty header',
      { authorization: '  ', anonymous: false },
      { kind: 'reject', message: NO_TOKEN_MESSAGE },
    ],
    ['no token, anonymous port', { authorization: undefined, anonymous: true }, { kind: 'anonymous' }],
    [
      'a bearer token',
      { authorization: 'Bearer abc.def', anonymous: false },
      { kind: 'token', token: 'abc.def' },
    ],
    ['any case', { authorization: 'bearer abc', anonymous: false }, { kind: 'token', token: 'abc' }],
    [
      'a token on the anonymous port',
      { authorization: 'Bearer abc', anonymous: true },
      { kind: 'token', token: 'abc' },
    ],
  ] as const)('%s', (_what, input, want) => {
    expect(authenticationStep(input)).toEqual(want);
  });

  it.each(['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b', 'token'])('refuses the header "%s"', (header) => {
    const step = authenticationStep({ authorization: header, anonymous: true });
    expect(step).toMatchObject({
      kind: 'reject',
      message: expect.stringContaining('malformed Authorization'),
    });
  });
});

describe('verdictFromTokenReview', () => {
  it('takes the user the API server vouches for', () => {
    expect(
      verdictFromTokenReview({
        authenticated: true,
        user: {
          username: 'system:serviceaccount:shop:viewer',
          uid: 'u-1',
          groups: ['system:serviceaccounts', 'system:authenticated'],
          extra: { 'authentication.kubernetes.io/pod-name': ['p'] },
        },
      }),
    ).toEqual({
      authenticated: true,
      user: {
        name: 'system:serviceaccount:shop:viewer',
        uid: 'u-1',
        groups: ['system:serviceaccounts', 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/pod-name': ['p'] },
      },
    });
  });

  it.each([
    [undefined, 'the API server did not accept the token'],
    [{ authenticated: false, error: 'token has expired' }, 'token has expired'],
    [{ authenticated: true, user: {} }, 'the API server did not accept the token'],
  ])('refuses %j', (status, reason) => {
    expect(verdictFromTokenReview(status)).toEqual({ authenticated: false, reason });
  });
});

describe('CachedTokenAuthenticator', () => {
  const ok: TokenVerdict = { authenticated: true, user: { name: 'alice', groups: [], extra: {} } };
  const no: TokenVerdict = { authenticated: false, reason: 'unknown' };

  it('keys the cache by the token hash, trusts an accepted token longer than it remembers a refusal', async () => {
    const asked: string[] = [];
    let now = 0;
    const authn = new CachedTokenAuthenticator(
      async (token) => {
        asked.push(token);
        return token === 'good' ? ok : no;
      },
      { successTtlMs: 10_000, failureTtlMs: 2_000, now: () => now },
    );
    expect(tokenCacheKey('good')).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenCacheKey('good')).not.toContain('good');
    await Promise.all([authn.authenticate('good'), authn.authenticate('good'), authn.authenticate('bad')]);
    expect(asked).toEqual(['good', 'bad']);
    now = 2_000;
    expect(await authn.authenticate('bad')).toEqual(no);
    expect(await authn.authenticate('good')).toEqual(ok);
    expect(asked).toEqual(['good', 'bad', 'bad']);
    now = 10_000;
    await authn.authenticate('good');
    expect(asked).toEqual(['good', 'bad', 'bad', 'good']);
  });

  it('rejects when the review cannot be made, and asks again next time', async () => {
    let down = true;
    const authn = new CachedTokenAuthenticator(async () => {
      if (down) throw new Error('connect ECONNREFUSED');
      return ok;
    });
    await expect(authn.authenticate('t')).rejects.toThrow('ECONNREFUSED');
    down = false;
    expect(await authn.authenticate('t')).toEqual(ok);
  });
});

describe('isLoopbackAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['[::1]', true],
    ['localhost', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['128.0.0.1', false],
    ['localhost.example.com', false],
  ])('%s → %s', (address, want) => {
    expect(isLoopbackAddress(address)).toBe(want);
  });
});

describe('isLoopbackHost (the Host a tokenless request may name on the anonymous port)', () => {
  it.each([
    'localhost',
    'localhost:8080',
    'LocalHost:8080',
    'localhost.:8080',
    '127.0.0.1',
    '127.0.0.1:8080',
    '127.1.2.3:80',
    '[::1]',
    '[::1]:8080',
    'dashboard.localhost:8080',
  ])('accepts %s', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each([
    ['a rebound domain', 'evil.example:8080'],
    ['a rebound domain, no port', 'evil.example'],
    ['a wildcard DNS name of 127.0.0.1', '127.0.0.1.nip.io:8080'],
    ['localhost as a subdomain', 'localhost.evil.example'],
    ['a name ending in localhost', 'notlocalhost:8080'],
    ['another address', '10.0.0.5:8080'],
    ['every address', '0.0.0.0:8080'],
    ['another IPv6 address', '[::2]:8080'],
    ['IPv6 without brackets', '::1'],
    ['a port that is no number', 'localhost:http'],
    ['userinfo', 'localhost:8080@evil.example'],
    ['empty', ''],
    ['absent', undefined],
  ])('refuses %s (%s)', (_what, host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
});

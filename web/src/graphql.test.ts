import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authState, SESSION_ENDED_MESSAGE, TOKEN_KEY } from './auth.js';
import type { TypedDocumentString } from './gql/graphql.js';
import {
  endsSession,
  type GraphQLErrorShape,
  GraphQLRequestError,
  query,
  type StreamState,
  subscribe,
} from './graphql.js';

const unauthenticated = (message: string): GraphQLErrorShape => ({
  message,
  extensions: { code: 'UNAUTHENTICATED' },
});
/** What src/graphql/revoked-streams.ts sends last on an SSE stream whose token was revoked. */
const REVOKED = unauthenticated('stream closed: the token no longer authenticates (invalid bearer token)');

describe('endsSession: which failures sign the page out, which are retried', () => {
  it.each([
    ['a stream ended because its token was revoked', 'signed out', new GraphQLRequestError('x', [REVOKED])],
    [
      "a 401 with the gateway's body (an expired token)",
      'signed out',
      new GraphQLRequestError('x', [unauthenticated('invalid bearer token')], 401),
    ],
    ['a 401 without a GraphQL body', 'signed out', new GraphQLRequestError('HTTP 401', [], 401)],
    [
      'an UNAUTHENTICATED error among others',
      'signed out',
      new GraphQLRequestError('x', [{ message: 'boom' }, unauthenticated('no token')]),
    ],
    [
      'a 503 while the API server cannot review tokens',
      'retry',
      new GraphQLRequestError('x', [{ message: 'x', extensions: { code: 'UNAVAILABLE' } }], 503),
    ],
    [
      'FORBIDDEN (the token is fine, the permission is missing)',
      'retry',
      new GraphQLRequestError('x', [{ message: 'x', extensions: { code: 'FORBIDDEN' } }], 403),
    ],
    [
      'the gate busy over a stream',
      'retry',
      new GraphQLRequestError('x', [{ message: 'x', extensions: { code: 'SERVICE_UNAVAILABLE' } }]),
    ],
    ['a 502 from a proxy', 'retry', new GraphQLRequestError('HTTP 502', [], 502)],
    ['an error without a code', 'retry', new GraphQLRequestError('x', [{ message: 'x' }])],
    ['the network (fetch failed)', 'retry', new TypeError('Failed to fetch')],
    ['an Error that merely says 401', 'retry', new Error('HTTP 401')],
    ['not an Error', 'retry', 'UNAUTHENTICATED'],
  ])('%s → %s', (_name, verdict, err) => {
    expect(endsSession(err) ? 'signed out' : 'retry').toBe(verdict);
  });
});

const DOC = { toString: () => 'subscription { x }' } as unknown as TypedDocumentString<
  { x: number },
  Record<string, never>
>;

/** An SSE answer: each chunk a `next` message (or `complete`), then the body ends. */
function sse(...messages: ({ data?: unknown; errors?: GraphQLErrorShape[] } | 'complete')[]): Response {
  const text = messages
    .map((m) =>
      m === 'complete' ? 'event: complete\ndata:\n\n' : `event: next\ndata: ${JSON.stringify(m)}\n\n`,
    )
    .join('');
  return new Response(text, { headers: { 'content-type': 'text/event-stream' } });
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('the client against a gateway that stops accepting the token', () => {
  const storage = new Map<string, string>();
  let answers: (() => Response)[];
  const fetchMock = vi.fn((_url: string | URL | Request, _init?: RequestInit) =>
    Promise.resolve((answers.shift() ?? (() => new Response('', { status: 599 })))()),
  );

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    storage.clear();
    storage.set(TOKEN_KEY, 'old-token');
    authState.set({ required: false, message: '', detail: '' });
    fetchMock.mockClear();
    vi.stubGlobal('document', { baseURI: 'http://127.0.0.1:8080/' });
    vi.stubGlobal('sessionStorage', {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, v),
      removeItem: (k: string) => void storage.delete(k),
    });
    vi.stubGlobal('fetch', fetchMock);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    authState.set({ required: false, message: '', detail: '' });
  });

  /** Runs a subscription through its first answer and the retry timer that may follow it. */
  async function streamStates(): Promise<{ states: StreamState[]; data: number[] }> {
    const states: StreamState[] = [];
    const data: number[] = [];
    const stop = subscribe(DOC, {}, { onData: (d) => data.push(d.x), onState: (s) => states.push(s) });
    await vi.waitFor(() => expect(states.at(-1)).toMatch(/retrying|signed-out/));
    await vi.advanceTimersByTimeAsync(20_000);
    stop();
    return { states, data };
  }

  it('a stream ended UNAUTHENTICATED drops the token, is not reconnected, and asks to sign in again', async () => {
    answers = [() => sse({ data: { x: 1 } }, { errors: [REVOKED] }, 'complete')];
    const { states, data } = await streamStates();
    expect(data).toEqual([1]);
    expect(states).toEqual(['connecting', 'live', 'signed-out']);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(storage.has(TOKEN_KEY)).toBe(false);
    expect(authState.get()).toEqual({
      required: true,
      message: SESSION_ENDED_MESSAGE,
      detail: REVOKED.message,
    });
  });

  it('a stream refused with 401 on (re)connecting does the same', async () => {
    answers = [
      () => json(401, { message: 'invalid bearer token', errors: [unauthenticated('invalid bearer token')] }),
    ];
    const { states } = await streamStates();
    expect(states).toEqual(['connecting', 'signed-out']);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(storage.has(TOKEN_KEY)).toBe(false);
    expect(authState.get().message).toBe(SESSION_ENDED_MESSAGE);
  });

  it('a stream ended by anything else keeps the token and reconnects', async () => {
    answers = [
      () => sse({ errors: [{ message: 'busy', extensions: { code: 'SERVICE_UNAVAILABLE' } }] }),
      () =>
        json(503, { errors: [{ message: 'API server unreachable', extensions: { code: 'UNAVAILABLE' } }] }),
      () => sse({ data: { x: 2 } }, 'complete'),
    ];
    const { states, data } = await streamStates();
    expect(data).toEqual([2]);
    expect(fetchMock.mock.calls.length).toBeGreaterThan(3);
    expect(states.slice(0, 7)).toEqual([
      'connecting',
      'live',
      'retrying', // SERVICE_UNAVAILABLE at the end of the stream
      'connecting',
      'retrying', // 503
      'connecting',
      'live',
    ]);
    expect(states).not.toContain('signed-out');
    expect(storage.get(TOKEN_KEY)).toBe('old-token');
    expect(authState.get().required).toBe(false);
  });

  it('a query answered 401 drops the token and asks to sign in again', async () => {
    answers = [() => json(401, { message: 'token expired', errors: [unauthenticated('token expired')] })];
    await expect(query(DOC, {})).rejects.toThrow('token expired');
    expect(storage.has(TOKEN_KEY)).toBe(false);
    expect(authState.get()).toEqual({
      required: true,
      message: SESSION_ENDED_MESSAGE,
      detail: 'token expired',
    });
  });

  it('a query refused FORBIDDEN or failing otherwise leaves the session alone', async () => {
    answers = [
      () => json(200, { data: null, errors: [{ message: 'no', extensions: { code: 'FORBIDDEN' } }] }),
      () => new Response('bad gateway', { status: 502 }),
    ];
    await expect(query(DOC, {})).rejects.toThrow('no');
    await expect(query(DOC, {})).rejects.toThrow('HTTP 502: bad gateway');
    expect(storage.get(TOKEN_KEY)).toBe('old-token');
    expect(authState.get().required).toBe(false);
  });

  it('opened without a token, a 401 shows the gateway’s own words', async () => {
    storage.clear();
    answers = [
      () => json(401, { errors: [unauthenticated('authentication required: send a bearer token')] }),
    ];
    await expect(query(DOC, {})).rejects.toThrow();
    expect(authState.get()).toEqual({
      required: true,
      message: 'authentication required: send a bearer token',
      detail: '',
    });
  });
});

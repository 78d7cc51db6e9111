/**
 * The dashboard's GraphQL client: queries as POST, subscriptions as GraphQL over SSE ("distinct
 * connections" mode: one streaming POST per subscription with `Accept: text/event-stream`, which is
 * yoga's default). fetch() with a body reader is used instead of EventSource so the operation travels
 * in a POST body and a stream can be aborted cleanly. Every request carries the session's token
 * (auth.ts). A refused token (a 401, an UNAUTHENTICATED error — a stream ended because its token was
 * revoked) signs the page out: the token is dropped, streams stop reconnecting, the page asks for one.
 */
import { authHeaders, sessionRefused, storedToken } from './auth.js';
import type { TypedDocumentString } from './gql/graphql.js';
import { SseParser } from './sse.js';

export interface GraphQLErrorShape {
  message: string;
  /** FORBIDDEN errors name the missing permission (`get /scheduler/status`, `pods list in shop`). */
  extensions?: { code?: string; permission?: string };
}

export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly errors: GraphQLErrorShape[] = [],
    /** The answer's HTTP status; a stream's errors arrive in a 200. */
    readonly status = 200,
  ) {
    super(message);
  }
}

/** The endpoint relative to the page, so a path prefix in front of the gateway keeps working. */
export function graphqlUrl(): string {
  return new URL('graphql', document.baseURI).toString();
}

/**
 * The permission the gateway refused, when every error of a failed query is FORBIDDEN (the user may
 * not read this, which retrying will not change); undefined for any other failure.
 */
export function refusedPermission(err: unknown): string | undefined {
  if (!(err instanceof GraphQLRequestError) || err.errors.length === 0) return undefined;
  if (!err.errors.every((e) => e.extensions?.code === 'FORBIDDEN')) return undefined;
  return [...new Set(err.errors.map((e) => e.extensions?.permission ?? 'permission'))].join(', ');
}

/**
 * Whether a failure means the gateway no longer accepts the session's token: an HTTP 401, or an
 * UNAUTHENTICATED error (the last result of a stream whose token was revoked, a query whose token
 * expired). The page then signs out instead of trying again. Anything else — the network, a stream
 * the restarting gateway completed, a 503 while the API server cannot review tokens, FORBIDDEN — is
 * retried (or shown) as before.
 */
export function endsSession(err: unknown): boolean {
  if (!(err instanceof GraphQLRequestError)) return false;
  return err.status === 401 || err.errors.some((e) => e.extensions?.code === 'UNAUTHENTICATED');
}

function errorText(errors: GraphQLErrorShape[]): string {
  return errors.map((e) => e.message).join('; ');
}

function parseJson<T>(text: string): T | undefined {
  try {
    return (JSON.parse(text) ?? undefined) as T | undefined;
  } catch {
    return undefined;
  }
}

/** A failed answer as an error: the GraphQL errors of its body when it has them (a 401's say why), else its status. */
function answerError(status: number, text: string): GraphQLRequestError {
  const errors = parseJson<{ errors?: GraphQLErrorShape[] }>(text)?.errors;
  if (errors?.length) return new GraphQLRequestError(errorText(errors), errors, status);
  const excerpt = text.slice(0, 200);
  return new GraphQLRequestError(`HTTP ${status}${excerpt ? `: ${excerpt}` : ' without data'}`, [], status);
}

/** `err`, once the page is signed out if it says the gateway refused `token`. */
function signOutIfRefused(token: string | undefined, err: GraphQLRequestError): GraphQLRequestError {
  if (endsSession(err)) sessionRefused(token, err.message);
  return err;
}

/** Runs a generated operation: its result and variables are typed from the schema (web/src/gql). */
export async function query<T, V>(
  document: TypedDocumentString<T, V>,
  variables: V,
  signal?: AbortSignal,
): Promise<T> {
  const token = storedToken();
  const res = await fetch(graphqlUrl(), {
    method: 'POST',
    headers: {
      ...authHeaders(token),
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
    },
    body: JSON.stringify({ query: document.toString(), variables }),
    ...(signal ? { signal } : {}),
  });
  const text = await res.text();
  const body = parseJson<{ data?: T; errors?: GraphQLErrorShape[] }>(text);
  if (!res.ok || body?.data === undefined || body.errors?.length) {
    throw signOutIfRefused(token, answerError(res.status, text));
  }
  return body.data;
}

/** `signed-out`: the gateway refused the token, and the stream stopped for good (auth.ts). */
export type StreamState = 'connecting' | 'live' | 'retrying' | 'signed-out';

export interface SubscribeOptions<T> {
  onData(data: T): void;
  /** Connection state changes; `detail` explains a retry. */
  onState?(state: StreamState, detail?: string): void;
  /** Called each time the stream (re)connects, before any data: the place to refill what was missed. */
  onConnected?(): void;
}

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10_000;

/**
 * Subscribes and keeps the subscription alive across server restarts; returns the function that stops it.
 * A stream the gateway refuses (401, or ended with UNAUTHENTICATED when its token was revoked) signs the
 * page out and is not retried.
 */
export function subscribe<T, V>(
  document: TypedDocumentString<T, V>,
  variables: V,
  opts: SubscribeOptions<T>,
): () => void {
  let stopped = false;
  let controller: AbortController | undefined;
  let backoff = MIN_BACKOFF_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const run = async (): Promise<void> => {
    controller = new AbortController();
    opts.onState?.('connecting');
    let reason = 'stream ended';
    const started = Date.now();
    const token = storedToken();
    try {
      const res = await fetch(graphqlUrl(), {
        method: 'POST',
        headers: { ...authHeaders(token), 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: document.toString(), variables }),
        signal: controller.signal,
      });
      if (!res.ok || !res.body) throw answerError(res.status, await res.text());
      opts.onState?.('live');
      opts.onConnected?.();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      read: for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const message of parser.push(value)) {
          // The server completes a stream when it shuts down: reconnect as after any other end.
          if (message.event === 'complete') {
            reason = 'completed by the server';
            break read;
          }
          if (message.event !== 'next' || !message.data) continue;
          const payload = JSON.parse(message.data) as { data?: T; errors?: GraphQLErrorShape[] };
          if (payload.errors?.length)
            throw new GraphQLRequestError(errorText(payload.errors), payload.errors);
          if (payload.data !== undefined) {
            backoff = MIN_BACKOFF_MS;
            opts.onData(payload.data);
          }
        }
      }
    } catch (err) {
      reason = err instanceof Error ? err.message : String(err);
      if (!stopped && endsSession(err)) {
        stopped = true;
        controller.abort();
        opts.onState?.('signed-out', reason);
        sessionRefused(token, reason);
        return;
      }
    }
    if (stopped) return;
    // A stream that stayed up a while was healthy: retry promptly, not after the last long backoff.
    if (Date.now() - started > 5000) backoff = MIN_BACKOFF_MS;
    controller.abort();
    opts.onState?.('retrying', reason);
    timer = setTimeout(() => void run(), backoff);
    backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
  };

  void run();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    controller?.abort();
  };
}

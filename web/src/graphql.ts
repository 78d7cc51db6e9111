/**
 * The dashboard's GraphQL client: queries as POST, subscriptions as GraphQL over SSE ("distinct
 * connections" mode: one streaming POST per subscription with `Accept: text/event-stream`, which is
 * yoga's default). fetch() with a body reader is used instead of EventSource so the operation travels
 * in a POST body and a stream can be aborted cleanly. Every request carries the session's token
 * (auth.ts); a 401 makes the page ask for one.
 */
import { authHeaders, noteUnauthenticated } from './auth.js';
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
  ) {
    super(message);
  }
}

/** The endpoint relative to the page, so a path prefix in front of the gateway keeps working. */
export function graphqlUrl(): string {
  return new URL('graphql', document.baseURI).toString();
}

/** The gateway's 401 body says why (no token, an expired one); fall back to the status. */
function unauthenticatedMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON
  }
  return 'HTTP 401: the gateway needs a token';
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

function errorText(errors: GraphQLErrorShape[]): string {
  return errors.map((e) => e.message).join('; ');
}

/** Runs a generated operation: its result and variables are typed from the schema (web/src/gql). */
export async function query<T, V>(
  document: TypedDocumentString<T, V>,
  variables: V,
  signal?: AbortSignal,
): Promise<T> {
  const res = await fetch(graphqlUrl(), {
    method: 'POST',
    headers: {
      ...authHeaders(),
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
    },
    body: JSON.stringify({ query: document.toString(), variables }),
    ...(signal ? { signal } : {}),
  });
  const text = await res.text();
  if (res.status === 401) noteUnauthenticated(unauthenticatedMessage(text));
  let body: { data?: T; errors?: GraphQLErrorShape[] };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new GraphQLRequestError(`HTTP ${res.status}: ${text.slice(0, 200) || res.statusText}`);
  }
  if (body.errors?.length) throw new GraphQLRequestError(errorText(body.errors), body.errors);
  if (!res.ok || body.data === undefined) throw new GraphQLRequestError(`HTTP ${res.status} without data`);
  return body.data;
}

export type StreamState = 'connecting' | 'live' | 'retrying';

export interface SubscribeOptions<T> {
  onData(data: T): void;
  /** Connection state changes; `detail` explains a retry. */
  onState?(state: StreamState, detail?: string): void;
  /** Called each time the stream (re)connects, before any data: the place to refill what was missed. */
  onConnected?(): void;
}

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 10_000;

/** Subscribes and keeps the subscription alive across server restarts; returns the function that stops it. */
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
    try {
      const res = await fetch(graphqlUrl(), {
        method: 'POST',
        headers: { ...authHeaders(), 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: document.toString(), variables }),
        signal: controller.signal,
      });
      if (res.status === 401) {
        const message = unauthenticatedMessage(await res.text());
        noteUnauthenticated(message);
        throw new Error(message);
      }
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
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

/**
 * GraphQL over HTTP for tests, one client for unit tests (yoga's in-process fetch) and integration
 * tests (a gateway's port): POST an operation, or subscribe over SSE. The SSE messages are parsed by
 * the dashboard's own parser (web/src/sse.ts), so tests read streams the way the dashboard does.
 */
import { SseParser } from '../../web/src/sse.js';

export interface GraphQLResponse<T = Record<string, unknown>> {
  data?: T | null;
  errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[];
  extensions?: Record<string, unknown>;
}

/** A fetch: the global one, or a yoga instance's in-process `fetch` (no socket). */
export type FetchTarget = { fetch: (url: string, init: RequestInit) => Promise<Response> | Response };

/** Where yoga.fetch answers: any origin will do, the path must be the endpoint's. */
export const IN_PROCESS_URL = 'http://yoga/graphql';

export async function postGraphQL<T = Record<string, unknown>>(
  target: FetchTarget,
  url: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GraphQLResponse<T>> {
  const res = await target.fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as GraphQLResponse<T>;
}

export interface SseSubscription<T> {
  status: number;
  contentType: string | null;
  /** The payload of every `event: next` message so far, in order of arrival. */
  readonly events: GraphQLResponse<T>[];
  /** The same payloads as the bytes of their `data:` (to compare what subscribers were sent). */
  readonly raw: string[];
  /** The next payload not yet taken by next() (waits for it; throws once the stream has ended). */
  next(): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

/** Subscribes over SSE and reads the stream in the background until close() or its end. */
export async function sseSubscribe<T = Record<string, unknown>>(
  target: FetchTarget,
  url: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<SseSubscription<T>> {
  const abort = new AbortController();
  const res = await target.fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  if (!res.body) throw new Error(`no SSE body (HTTP ${res.status})`);
  // Read the body itself: piping yoga's ponyfilled stream through a native TextDecoderStream would not
  // pass a cancel back to it, and the subscription would outlive close().
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const events: GraphQLResponse<T>[] = [];
  const raw: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const reading = (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        for (const m of parser.push(decoder.decode(chunk.value, { stream: true }))) {
          if (m.event !== 'next') continue;
          raw.push(m.data);
          events.push(JSON.parse(m.data) as GraphQLResponse<T>);
        }
        wake?.();
      }
    } catch {
      // aborted by close(), or the connection failed: either way the stream has ended
    } finally {
      ended = true;
      wake?.();
    }
  })();
  let taken = 0;
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    events,
    raw,
    async next() {
      while (taken >= events.length) {
        if (ended) throw new Error('SSE stream ended');
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      return events[taken++] as GraphQLResponse<T>;
    },
    async close() {
      abort.abort();
      await reader.cancel().catch(() => {});
      await reading;
    },
  };
}

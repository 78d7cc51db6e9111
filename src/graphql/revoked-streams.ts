/**
 * SSE subscriptions end when their token stops authenticating (src/server/stream-revalidation.ts
 * re-reviews the tokens of open streams): the subscriber gets a last result with an UNAUTHENTICATED error,
 * then the stream completes. graphql-ws sockets are watched per connection instead (server.ts closes
 * them with 4401), so operations arriving over a socket are left alone here.
 */
import type http from 'node:http';
import type { ExecutionResult } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { OnRevoked, StreamTokenRevalidator } from '../server/stream-revalidation.js';
import { authenticatedByCertificate } from '../server/user-auth.js';

export type StreamWatch = Pick<StreamTokenRevalidator, 'watch'>;

/** The last result of a stream whose token was revoked. */
export function revokedResult(reason: string): ExecutionResult {
  return {
    errors: [
      createGraphQLError(`stream closed: the token no longer authenticates (${reason})`, {
        extensions: { code: 'UNAUTHENTICATED' },
      }),
    ],
  };
}

/**
 * `source` until `watch` reports the token revoked: then revokedResult, and the source is returned
 * (its subscription to the bus ends). Closing the result early unwatches too.
 *
 * A plain iterator over the source's, not a Repeater: in the fan-out bench's profile a Repeater per SSE
 * subscriber cost as much again as the shared queue under it. Waiting for the next result holds one
 * `wake` for the revocation, replaced on each call, so nothing keeps delivered results reachable (a
 * `Promise.race` against a long-pending promise hung a reaction on it per result, each holding its
 * result until the stream ended: 500 SSE subscribers of a 5,000-decision burst ran out of heap).
 */
export function untilRevoked(
  source: AsyncIterable<ExecutionResult>,
  watch: (onRevoked: OnRevoked) => () => void,
): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  const done: IteratorResult<ExecutionResult> = { value: undefined, done: true };
  let ended = false; // the reader has had its last result
  let sourceStopped = false;
  let revoked: string | undefined;
  let wake: ((r: IteratorResult<ExecutionResult>) => void) | undefined;
  let unwatch = () => {};
  const stopSource = () => {
    if (sourceStopped) return;
    sourceStopped = true;
    unwatch();
    void Promise.resolve(iterator.return?.()).catch(() => {});
  };
  unwatch = watch((reason) => {
    if (ended || revoked !== undefined) return;
    revoked = reason;
    stopSource();
    const waiting = wake;
    wake = undefined;
    if (waiting) {
      ended = true;
      waiting({ value: revokedResult(reason), done: false });
    }
  });
  if (sourceStopped) unwatch(); // revoked within watch() itself
  const stream: AsyncIterableIterator<ExecutionResult> = {
    next() {
      if (ended) return Promise.resolve(done);
      if (revoked !== undefined) {
        ended = true;
        return Promise.resolve({ value: revokedResult(revoked), done: false });
      }
      return new Promise((resolve, reject) => {
        wake = resolve;
        iterator.next().then(
          (r) => {
            if (wake !== resolve) return; // revoked or returned meanwhile: that answered this call
            wake = undefined;
            if (r.done) {
              ended = true;
              stopSource();
            }
            resolve(r.done ? done : r);
          },
          (err: unknown) => {
            if (wake !== resolve) return;
            wake = undefined;
            ended = true;
            stopSource();
            reject(err);
          },
        );
      });
    },
    return() {
      ended = true;
      stopSource();
      const waiting = wake;
      wake = undefined;
      waiting?.(done);
      return Promise.resolve(done);
    },
    throw() {
      return stream.return?.() ?? Promise.resolve(done);
    },
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}

function isAsyncIterable(v: unknown): v is AsyncIterable<ExecutionResult> {
  return typeof v === 'object' && v !== null && Symbol.asyncIterator in v;
}

interface StreamContext {
  /** Set on graphql-ws operations (server.ts): watched per connection, not here. */
  socket?: unknown;
  /** The HTTP request (yoga's Fetch Request) of an SSE subscription. */
  request?: { headers: { get(name: string): string | null } };
  /** The same, as Node's request: the user port's gate says how it was authenticated. */
  req?: http.IncomingMessage;
}

/** The envelop plugin: each SSE subscription's stream is watched with its request's token. */
export function useRevokedStreamsEnd(revalidator: StreamWatch): Plugin {
  return {
    onSubscribe: ({ args }) => ({
      onSubscribeResult: ({ result, setResult }) => {
        const context = args.contextValue as StreamContext;
        if (context.socket !== undefined || !isAsyncIterable(result)) return;
        // Authenticated by its client certificate: the token it may carry is not what let it in.
        if (context.req && authenticatedByCertificate(context.req)) return;
        const authorization = context.request?.headers.get('authorization') ?? undefined;
        setResult(untilRevoked(result, (onRevoked) => revalidator.watch(authorization, onRevoked)));
      },
    }),
  };
}

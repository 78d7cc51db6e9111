/**
 * SSE subscriptions end when their token stops authenticating (src/server/stream-revalidation.ts
 * re-reviews the tokens of open streams): the subscriber gets a last result with an UNAUTHENTICATED error,
 * then the stream completes. graphql-ws sockets are watched per connection instead (server.ts closes
 * them with 4401), so operations arriving over a socket are left alone here.
 */
import type http from 'node:http';
import type { ExecutionResult } from 'graphql';
import { createGraphQLError, type Plugin, Repeater } from 'graphql-yoga';
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

const DONE: unique symbol = Symbol('done');

/**
 * `source` until `watch` reports the token revoked: then revokedResult, and the source is returned
 * (its subscription to the bus ends). Closing the result early unwatches too.
 *
 * Waiting for the next result or the stop hangs one reaction on `stop` for the stream's whole life, not
 * one per result: `Promise.race([next, stop.then(…)])` in the loop added a reaction to the still-pending
 * `stop` on every result, each holding that result until the stream ended (~680 B per result per SSE
 * subscriber; 500 subscribers of a 5,000-decision burst ran the gateway out of heap, fan-out bench).
 */
export function untilRevoked(
  source: AsyncIterable<ExecutionResult>,
  watch: (onRevoked: OnRevoked) => () => void,
): AsyncIterableIterator<ExecutionResult> {
  return new Repeater<ExecutionResult>(async (push, stop) => {
    const iterator = source[Symbol.asyncIterator]();
    let stopped = false;
    let wake: ((done: typeof DONE) => void) | undefined;
    void stop.then(() => {
      stopped = true;
      wake?.(DONE);
    });
    const nextOrStop = () =>
      new Promise<IteratorResult<ExecutionResult> | typeof DONE>((resolve, reject) => {
        if (stopped) return resolve(DONE);
        wake = resolve;
        iterator.next().then(resolve, reject);
      });
    const unwatch = watch((reason) => {
      void push(revokedResult(reason));
      stop();
    });
    try {
      for (;;) {
        const next = await nextOrStop();
        wake = undefined;
        if (next === DONE || next.done) break;
        await push(next.value);
      }
      stop();
    } catch (err) {
      stop(err);
    } finally {
      unwatch();
      await iterator.return?.();
    }
  });
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

/**
 * Turns a bus subscription into the AsyncIterable a GraphQL subscription returns: the source of one
 * execution, which shared-subscriptions.ts shares among every subscriber of the same operation.
 *
 * The listener only filters and pushes the event object it was given — the same reference every
 * other listener receives — so fan-out costs one predicate call per execution and no copies.
 * A sliding buffer bounds what the execution can fall behind the bus by: past `bufferSize` events,
 * the oldest are dropped instead of growing memory (or hitting Repeater's 1024-pending-push limit).
 * `accept` may answer later (a promise: the subscriber's permission needed a review); events then wait
 * in order behind it. Slow clients do not fill this buffer: the shared execution reads on regardless of
 * them, and each subscriber's own buffer (shared-subscriptions.ts) fails that subscriber's stream,
 * dropping nothing.
 */
import { Repeater, SlidingBuffer } from 'graphql-yoga';

export const DEFAULT_STREAM_BUFFER = 1000;

export function eventStream<T>(
  subscribe: (listener: (event: T) => void) => () => void,
  accept: (event: T) => boolean | Promise<boolean> = () => true,
  bufferSize = DEFAULT_STREAM_BUFFER,
): AsyncIterable<T> {
  return new Repeater<T>(async (push, stop) => {
    // While a verdict is pending (an authorization review), later events queue behind it: order is kept.
    let pending: Promise<void> | undefined;
    const deliver = (event: T, ok: boolean) => {
      if (ok) void push(event);
    };
    const unsubscribe = subscribe((event) => {
      if (pending === undefined) {
        const verdict = accept(event);
        if (typeof verdict === 'boolean') return deliver(event, verdict);
        pending = verdict.then((ok) => deliver(event, ok));
      } else {
        pending = pending.then(async () => deliver(event, await accept(event)));
      }
      const tail = pending;
      tail.then(
        () => {
          if (pending === tail) pending = undefined;
        },
        (err: unknown) => {
          if (pending === tail) pending = undefined;
          // The verdict could not be had (the review failed): end the stream rather than guess.
          void stop(err);
        },
      );
    });
    try {
      await stop;
    } finally {
      unsubscribe();
    }
  }, new SlidingBuffer(bufferSize));
}

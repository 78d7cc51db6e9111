/**
 * Turns a bus subscription into the AsyncIterable a GraphQL subscription returns: the source of one
 * execution, which shared-subscriptions.ts shares among every subscriber of the same operation.
 *
 * The listener only filters and pushes the event object it was given — the same reference every
 * other listener receives — so fan-out costs one predicate call per execution and no copies.
 * A sliding buffer bounds what the execution can fall behind the bus by: past `bufferSize` events,
 * the oldest are dropped instead of growing memory (or hitting Repeater's 1024-pending-push limit).
 * Slow clients do not fill this buffer: the shared execution reads on regardless of them, and each
 * subscriber's own buffer (shared-subscriptions.ts) fails that subscriber's stream, dropping nothing.
 */
import { Repeater, SlidingBuffer } from 'graphql-yoga';

export const DEFAULT_STREAM_BUFFER = 1000;

export function eventStream<T>(
  subscribe: (listener: (event: T) => void) => () => void,
  accept: (event: T) => boolean = () => true,
  bufferSize = DEFAULT_STREAM_BUFFER,
): AsyncIterable<T> {
  return new Repeater<T>(async (push, stop) => {
    const unsubscribe = subscribe((event) => {
      if (accept(event)) void push(event);
    });
    try {
      await stop;
    } finally {
      unsubscribe();
    }
  }, new SlidingBuffer(bufferSize));
}

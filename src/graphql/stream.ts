/**
 * Turns a bus subscription into the AsyncIterable a GraphQL subscription returns.
 *
 * The listener only filters and pushes the event object it was given — the same reference every
 * other subscriber receives — so fan-out costs one predicate call per subscriber and no copies.
 * A sliding buffer bounds what a slow client can hold: when it falls `bufferSize` events behind,
 * the oldest are dropped instead of growing memory (or hitting Repeater's 1024-pending-push limit).
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

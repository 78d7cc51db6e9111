import type { ExecutionResult } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { eventStreamBody, frameOf } from './event-stream.js';
import { shareSerialisation } from './shared-subscriptions.js';

async function* results(items: (ExecutionResult | Error)[]): AsyncGenerator<ExecutionResult> {
  for (const item of items) {
    if (item instanceof Error) throw item;
    yield item;
  }
}

async function text(items: (ExecutionResult | Error)[]): Promise<string> {
  let out = '';
  for await (const chunk of eventStreamBody(results(items))) out += String(chunk);
  return out;
}

const next = (json: string) => `event: next\ndata: ${json}\n\n`;
const COMPLETE = 'event: complete\ndata:\n\n';

describe('eventStreamBody', () => {
  it.each<[string, (ExecutionResult | Error)[], string]>([
    ['no result: a comment, then complete', [], `:\n\n${COMPLETE}`],
    [
      'results as next events, shared or not',
      [shareSerialisation({ data: { n: 1 } }), { data: { n: 2 } }],
      `:\n\n${next('{"data":{"n":1}}')}${next('{"data":{"n":2}}')}${COMPLETE}`,
    ],
    [
      "yoga's internal extensions left out",
      [
        {
          errors: [
            createGraphQLError('no', { extensions: { code: 'X', http: { status: 400 }, unexpected: true } }),
          ],
          extensions: { http: { status: 400 } },
        },
      ],
      `:\n\n${next('{"errors":[{"message":"no","extensions":{"code":"X"}}]}')}${COMPLETE}`,
    ],
    [
      'a GraphQL error ends the stream with its message and code',
      [
        { data: { n: 1 } },
        createGraphQLError('fell behind', { extensions: { code: 'SUBSCRIBER_TOO_SLOW' } }),
      ],
      `:\n\n${next('{"data":{"n":1}}')}${next('{"errors":[{"message":"fell behind","extensions":{"code":"SUBSCRIBER_TOO_SLOW"}}]}')}${COMPLETE}`,
    ],
    [
      'any other error with a generic message',
      [new Error('secret detail')],
      `:\n\n${next('{"errors":[{"message":"Unexpected error.","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}')}${COMPLETE}`,
    ],
  ])('%s', async (_name, items, expected) => {
    expect(await text(items)).toBe(expected);
  });

  it('builds a shared result frame once, and not for results with errors', () => {
    const shared = shareSerialisation({ data: { n: 1 } });
    expect(frameOf(shared)).toBe(frameOf(shared));
    const plain = { data: { n: 1 } };
    expect(frameOf(plain)).not.toBe(frameOf(plain));
  });

  it('ends the subscription when the response goes away', async () => {
    let returned = false;
    const source: AsyncIterableIterator<ExecutionResult> = {
      next: () => new Promise(() => {}),
      return: async () => {
        returned = true;
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return source;
      },
    };
    const body = eventStreamBody(source);
    body.resume();
    await new Promise((r) => setImmediate(r));
    body.destroy();
    await new Promise((r) => setImmediate(r));
    expect(returned).toBe(true);
  });
});

import type { ExecutionResult } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { eventStreamBody, frameOf, framesOf } from './event-stream.js';
import { ResultQueue } from './result-queue.js';
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

  it('framesOf: a run of shared results is one chunk, built once for every subscriber that gathered it', () => {
    const [a, b, c] = [1, 2, 3].map((n): ExecutionResult => shareSerialisation({ data: { n } }));
    if (!a || !b || !c) throw new Error('three results');
    const run = framesOf([a, b, c]);
    expect(String(run)).toBe(next('{"data":{"n":1}}') + next('{"data":{"n":2}}') + next('{"data":{"n":3}}'));
    expect(framesOf([a, b, c])).toBe(run);
    expect(String(framesOf([a, b]))).toBe(next('{"data":{"n":1}}') + next('{"data":{"n":2}}'));
    expect(framesOf([a])).toBe(frameOf(a));
    expect(framesOf([])).toHaveLength(0);
  });

  it('with a window, direct results wait for it and leave as one chunk; the iterator path keeps the order', async () => {
    const tasks = new Set<() => void>();
    const window = { later: (task: () => void) => void tasks.add(task) };
    const queue = new ResultQueue(100, () => {});
    const body = eventStreamBody(queue, queue, window);
    const chunks: string[] = [];
    body.on('data', (chunk: Buffer) => chunks.push(String(chunk)));
    const ended = new Promise((r) => body.once('end', r));
    const turn = () => new Promise((r) => setImmediate(r));
    await turn();
    for (const n of [1, 2, 3]) queue.push(shareSerialisation({ data: { n } }));
    expect(chunks).toEqual([':\n\n']);
    expect(tasks.size).toBe(1);
    for (const task of tasks) task();
    tasks.clear();
    expect(chunks).toEqual([
      ':\n\n',
      next('{"data":{"n":1}}') + next('{"data":{"n":2}}') + next('{"data":{"n":3}}'),
    ]);
    // Gathered, then a result with errors (it goes through the iterator) and the end: all in order.
    queue.push(shareSerialisation({ data: { n: 4 } }));
    queue.push({ errors: [createGraphQLError('late', { extensions: { code: 'X' } })] });
    queue.end();
    await ended;
    for (const task of tasks) task();
    expect(chunks.slice(2).join('')).toBe(
      next('{"data":{"n":4}}') + next('{"errors":[{"message":"late","extensions":{"code":"X"}}]}') + COMPLETE,
    );
  });
});

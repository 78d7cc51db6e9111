import { createPubSub, createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import {
  expandSharedPayloads,
  serialisedOf,
  sharedPayloadReplacer,
  shareSerialisation,
  useSharedSubscriptions,
} from './shared-subscriptions.js';

function harness() {
  const calls = { subscribe: 0, label: 0 };
  const pubSub = createPubSub<{ tick: [number] }>();
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: /* GraphQL */ `
        type Query { ok: Boolean }
        type Tick { n: Int!, label: String! }
        type Subscription { tick(tag: String): Tick! }
      `,
      resolvers: {
        Subscription: {
          tick: {
            subscribe: () => {
              calls.subscribe++;
              return pubSub.subscribe('tick');
            },
            resolve: (n: number) => ({ n }),
          },
        },
        Tick: {
          label: (t: { n: number }) => {
            calls.label++;
            return `#${t.n}`;
          },
        },
      },
    }),
    plugins: [useSharedSubscriptions()],
    logging: false,
  });
  return { yoga, pubSub, calls };
}

/** Opens an SSE subscription through yoga.fetch and collects its `data:` payloads as raw text. */
async function sse(yoga: ReturnType<typeof harness>['yoga'], query: string, variables: object = {}) {
  const controller = new AbortController();
  const res = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query, variables }),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: string[] = [];
  let buffer = '';
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const data = buffer
          .slice(0, end)
          .split('\n')
          .find((l) => l.startsWith('data: '));
        if (data) events.push(data.slice(6));
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
      }
    }
  })();
  return {
    events,
    close: async () => {
      controller.abort();
      await reader.cancel().catch(() => undefined);
      await reading;
    },
  };
}

const waitUntil = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

describe('useSharedSubscriptions', () => {
  it('executes identical subscriptions once per event and sends every subscriber the same bytes', async () => {
    const { yoga, pubSub, calls } = harness();
    const q = 'subscription($tag: String) { tick(tag: $tag) { n label } }';
    const a = await sse(yoga, q, { tag: 'x' });
    const b = await sse(yoga, q, { tag: 'x' });
    await waitUntil(() => calls.subscribe === 1);
    for (const n of [1, 2, 3]) pubSub.publish('tick', n);
    await waitUntil(() => a.events.length === 3 && b.events.length === 3);
    expect(a.events).toEqual(b.events);
    expect(JSON.parse(a.events[2] ?? '')).toEqual({ data: { tick: { n: 3, label: '#3' } } });
    expect(calls).toEqual({ subscribe: 1, label: 3 }); // not 2 and 6
    await a.close();
    await b.close();
  });

  it('keeps different variables apart, and a new subscriber after the last left starts afresh', async () => {
    const { yoga, pubSub, calls } = harness();
    const q = 'subscription($tag: String) { tick(tag: $tag) { n } }';
    const a = await sse(yoga, q, { tag: 'x' });
    const b = await sse(yoga, q, { tag: 'y' });
    await waitUntil(() => calls.subscribe === 2);
    pubSub.publish('tick', 1);
    await waitUntil(() => a.events.length === 1 && b.events.length === 1);
    await a.close();
    await b.close();
    const c = await sse(yoga, q, { tag: 'x' });
    await waitUntil(() => calls.subscribe === 3);
    pubSub.publish('tick', 2);
    await waitUntil(() => c.events.length === 1);
    expect(JSON.parse(c.events[0] ?? '')).toEqual({ data: { tick: { n: 2 } } });
    await c.close();
  });
});

describe('graphql-ws payload sharing', () => {
  it('serialises a shared payload once and splices it into the message', () => {
    const result = shareSerialisation({ data: { tick: { n: 1 } } });
    expect(serialisedOf(result)).toBe('{"data":{"tick":{"n":1}}}');
    expect(serialisedOf({ data: {} })).toBeUndefined();
    const wire = JSON.stringify({ id: 'a', type: 'next', payload: result }, sharedPayloadReplacer);
    expect(expandSharedPayloads(wire)).toBe('{"id":"a","type":"next","payload":{"data":{"tick":{"n":1}}}}');
    // Messages without a shared payload pass through untouched.
    const plain = JSON.stringify(
      { id: 'b', type: 'next', payload: { data: { x: 1 } } },
      sharedPayloadReplacer,
    );
    expect(expandSharedPayloads(plain)).toBe(plain);
  });
});

import { parse } from 'graphql';
import { createPubSub, createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { IN_PROCESS_URL, sseSubscribe } from '../../test/kit/graphql.js';
import {
  expandSharedPayloads,
  serialisedOf,
  sharedPayloadReplacer,
  shareSerialisation,
  useSharedSubscriptions,
} from './shared-subscriptions.js';

function harness(opts: { subscriberBuffer?: number } = {}) {
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
    plugins: [useSharedSubscriptions(opts)],
    logging: false,
  });
  return { yoga, pubSub, calls };
}

/** An SSE subscription through yoga.fetch; `events` holds each payload's bytes as sent. */
async function sse(yoga: ReturnType<typeof harness>['yoga'], query: string, variables: object = {}) {
  const sub = await sseSubscribe(yoga, IN_PROCESS_URL, query, { ...variables });
  return { events: sub.raw, close: () => sub.close() };
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

describe('a slow subscriber', () => {
  it('fails its own stream once it falls its queue behind, and the others go on', async () => {
    const { yoga, pubSub, calls } = harness({ subscriberBuffer: 10 });
    const env = yoga.getEnveloped({ request: new Request('http://yoga/graphql') } as never);
    const subscribe = async () =>
      (await env.subscribe({
        schema: env.schema,
        document: parse('subscription { tick { n } }'),
        contextValue: await env.contextFactory(),
      })) as AsyncIterableIterator<unknown>;
    const fast = await subscribe();
    const slow = await subscribe();
    // Both are listening once each asked for a first result; the fast one reads on, the slow one stops.
    const firstSlow = slow.next();
    const fastSeen: unknown[] = [];
    const fastReading = (async () => {
      for (;;) {
        const r = await fast.next();
        if (r.done) return;
        fastSeen.push(r.value);
      }
    })();
    await waitUntil(() => calls.subscribe === 1);
    // 10 queued + the one that resolved firstSlow.
    const overflow = 10 + 1;
    const total = overflow + 100;
    for (let n = 1; n <= total; n++) {
      pubSub.publish('tick', n);
      // Let the execution keep up with the bus (its own source buffer is stream.ts's business).
      if (n % 100 === 0) await new Promise((r) => setImmediate(r));
    }

    await waitUntil(() => fastSeen.length === total);
    expect(fastSeen.at(-1)).toEqual({ data: { tick: { n: total } } });

    expect(await firstSlow).toEqual({ value: { data: { tick: { n: 1 } } }, done: false });
    let delivered = 1;
    let failure: unknown;
    try {
      for (;;) {
        const r = await slow.next();
        if (r.done) break;
        delivered++;
      }
    } catch (err) {
      failure = err;
    }
    // Everything it had buffered arrives, then the error; nothing is silently skipped.
    expect(delivered).toBe(overflow);
    expect(failure).toBeInstanceOf(Error);
    // The fast one was not failed with it: it still gets what comes next.
    pubSub.publish('tick', total + 1);
    await waitUntil(() => fastSeen.length === total + 1);
    await fast.return?.();
    await fastReading;
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

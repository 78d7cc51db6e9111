import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ExecutionResult } from 'graphql';
import { Repeater } from 'graphql-yoga';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { IN_PROCESS_URL, sseSubscribe } from '../../test/kit/graphql.js';
import { rawNode } from '../../test/kit/objects.js';
import type { OnRevoked } from '../server/stream-revalidation.js';
import { fakeUserPortAuth } from '../server/testing.js';
import { untilRevoked } from './revoked-streams.js';
import { createGraphQLYoga } from './server.js';
import {
  createTestYoga,
  decisionFixture,
  FakeScheduling,
  FixtureCluster,
  fixtureSources,
  serveWebSocket,
  until,
  webSocketClient,
} from './testing.js';

const log = pino({ level: 'silent' });

/** A StreamWatch whose revocations the test triggers, by Authorization value. */
class FakeStreamWatch {
  readonly watched = new Map<string, Set<OnRevoked>>();

  watch(authorization: string | undefined, onRevoked: OnRevoked): () => void {
    if (!authorization) return () => {};
    const set = this.watched.get(authorization) ?? new Set();
    this.watched.set(authorization, set);
    set.add(onRevoked);
    return () => set.delete(onRevoked);
  }

  streams(authorization: string): number {
    return this.watched.get(authorization)?.size ?? 0;
  }

  revoke(authorization: string, reason: string): void {
    for (const onRevoked of this.watched.get(authorization) ?? []) onRevoked(reason);
  }
}

describe('untilRevoked', () => {
  it('passes results through, then ends with an UNAUTHENTICATED result and returns the source', async () => {
    let returned = false;
    let pushEvent: (r: ExecutionResult) => unknown = () => {};
    const source = new Repeater<ExecutionResult>(async (push, stop) => {
      pushEvent = push;
      await stop;
      returned = true;
    });
    let revoke: OnRevoked = () => {};
    let unwatched = false;
    const stream = untilRevoked(source, (onRevoked) => {
      revoke = onRevoked;
      return () => {
        unwatched = true;
      };
    });
    const first = stream.next();
    await until(() => pushEvent.length > 0, 'the source started');
    pushEvent({ data: { n: 1 } });
    expect(await first).toEqual({ done: false, value: { data: { n: 1 } } });
    const second = stream.next();
    revoke('invalid bearer token: token has been invalidated');
    expect(await second).toEqual({
      done: false,
      value: {
        errors: [
          expect.objectContaining({
            message:
              'stream closed: the token no longer authenticates (invalid bearer token: token has been invalidated)',
            extensions: { code: 'UNAUTHENTICATED' },
          }),
        ],
      },
    });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    await until(() => returned && unwatched, 'the source returned and the watch ended');
  });

  it('holds no delivered result while the stream stays open', async () => {
    // A collectable result is one nothing retains: with a reaction added to the pending stop per result,
    // every result stayed reachable until the stream ended.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let pushEvent: ((r: ExecutionResult) => unknown) | undefined;
    const source = new Repeater<ExecutionResult>(async (push, stop) => {
      pushEvent = push;
      await stop;
    });
    const stream = untilRevoked(source, () => () => {});
    const delivered: WeakRef<ExecutionResult>[] = [];
    for (let n = 0; n < 20; n++) {
      const next = stream.next();
      await until(() => pushEvent !== undefined, 'the source started');
      const result: ExecutionResult = { data: { n } };
      delivered.push(new WeakRef(result));
      pushEvent?.(result);
      expect((await next).value).toBe(result);
    }
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 0));
      gc();
    }
    // The last one or two may still sit in the iterators' own state; the other results must be gone.
    expect(delivered.filter((r) => r.deref() !== undefined).length).toBeLessThanOrEqual(2);
    await stream.return?.();
  });

  it('unwatches when the subscriber leaves first', async () => {
    const source = new Repeater<ExecutionResult>(async (_push, stop) => {
      await stop;
    });
    let unwatched = false;
    const stream = untilRevoked(source, () => () => {
      unwatched = true;
    });
    const pending = stream.next();
    await stream.return?.();
    await pending;
    await until(() => unwatched, 'the watch ended');
  });
});

let cluster: FixtureCluster | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  cluster?.stop();
});

function sources() {
  cluster = new FixtureCluster().add(rawNode('node-a'));
  const scheduling = new FakeScheduling(cluster);
  return { sources: fixtureSources(cluster, { scheduling }), scheduling };
}

describe('an SSE subscription', () => {
  it('ends with an UNAUTHENTICATED result once its token is revoked; other tokens stream on', async () => {
    const { sources: s, scheduling } = sources();
    const watch = new FakeStreamWatch();
    const yoga = createTestYoga({ sources: s, log, streamWatch: watch });
    const as = (token: string) => ({
      fetch: (url: string, init: RequestInit) =>
        yoga.fetch(url, {
          ...init,
          headers: { ...(init.headers as object), authorization: `Bearer ${token}` },
        }),
    });
    const query = 'subscription { schedulingEvents { pod } }';
    const revoked = await sseSubscribe<{ schedulingEvents: { pod: string } }>(as('a'), IN_PROCESS_URL, query);
    const kept = await sseSubscribe<{ schedulingEvents: { pod: string } }>(as('b'), IN_PROCESS_URL, query);
    closers.push(
      () => revoked.close(),
      () => kept.close(),
    );
    await until(() => watch.streams('Bearer a') === 1 && watch.streams('Bearer b') === 1, 'both watched');
    scheduling.record(decisionFixture({ namespace: 'default', pod: 'before' }));
    expect((await revoked.next()).data?.schedulingEvents.pod).toBe('before');

    watch.revoke('Bearer a', 'invalid bearer token: token has been invalidated');
    expect(await revoked.next()).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
    await expect(revoked.next()).rejects.toThrow(); // the stream ended
    expect(watch.streams('Bearer a')).toBe(0);

    scheduling.record(decisionFixture({ namespace: 'default', pod: 'after' }));
    expect((await kept.next()).data?.schedulingEvents.pod).toBe('before');
    expect((await kept.next()).data?.schedulingEvents.pod).toBe('after');
  });
});

describe('a graphql-ws connection', () => {
  it('closes with 4401 and a reason once its token is revoked', async () => {
    const { sources: s } = sources();
    const watch = new FakeStreamWatch();
    const yoga = createGraphQLYoga({ sources: s, log });
    const gate = fakeUserPortAuth({ users: { tok: { name: 'viewer', can: ['list pods'] } } });
    const served = await serveWebSocket(yoga, { auth: gate.auth, streamWatch: watch });
    closers.push(served.close);
    const client = webSocketClient(served.url, 'tok');
    closers.push(() => client.dispose() as Promise<void>);
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      client.subscribe(
        { query: 'subscription { schedulingEvents { pod } }' },
        { next: () => {}, error: (e) => resolve(e as { code: number; reason: string }), complete: () => {} },
      );
    });
    await until(() => watch.streams('Bearer tok') === 1, 'the connection watched');
    watch.revoke('Bearer tok', 'invalid bearer token: token has been invalidated');
    expect(await closed).toMatchObject({
      code: 4401,
      reason: 'Unauthorized: invalid bearer token: token has been invalidated',
    });
    await until(() => watch.streams('Bearer tok') === 0, 'the watch ended with the socket');
  });
});

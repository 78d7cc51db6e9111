import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type InformerHandlers,
  type ListResult,
  ResilientInformer,
  type ResilientInformerOptions,
  type WatchFn,
} from './informer.js';
import { identityOf, type KubeObject } from './kube-object.js';

interface FakeWatch {
  query: Record<string, unknown>;
  event(type: string, obj: unknown): void;
  done(err: unknown): void;
  aborted: boolean;
}

function pod(name: string, rv: string, extra: Record<string, unknown> = {}): KubeObject {
  return { metadata: { namespace: 'ns', name, resourceVersion: rv }, ...extra };
}

function harness(over: Partial<ResilientInformerOptions> = {}) {
  const watches: FakeWatch[] = [];
  const lists: Array<{ resolve: (r: ListResult) => void; reject: (e: unknown) => void }> = [];
  const logs: Array<{ level: number; msg: string; status?: number }> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const seen: string[] = [];
  /** What the update handler got as `old`, and what the delete handler got. */
  const olds: KubeObject[] = [];
  const deleted: KubeObject[] = [];
  const handlers: InformerHandlers = {
    add: (o) => seen.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
    update: (o, old) => {
      olds.push(old);
      seen.push(
        `update ${o.metadata?.name}@${old.metadata?.resourceVersion}->${o.metadata?.resourceVersion}`,
      );
    },
    delete: (o) => {
      deleted.push(o);
      seen.push(`delete ${o.metadata?.name}`);
    },
  };
  const watch: WatchFn = async (_path, query, onEvent, onDone) => {
    const w: FakeWatch = { query, event: onEvent, done: onDone, aborted: false };
    watches.push(w);
    return {
      abort: () => {
        w.aborted = true;
      },
    };
  };
  const informer = new ResilientInformer(
    {
      name: 'pods',
      path: '/api/v1/pods',
      list: () => new Promise<ListResult>((resolve, reject) => lists.push({ resolve, reject })),
      watch,
      log,
      now: () => Date.now(),
      random: () => 0.5, // no jitter: delays are exactly 1 s, 2 s, 4 s …
      ...over,
    },
    handlers,
  );
  const lastWatch = () => watches[watches.length - 1] as FakeWatch;
  const pendingList = () => lists[lists.length - 1] as (typeof lists)[number];
  return { informer, watches, lists, logs, seen, olds, deleted, lastWatch, pendingList };
}

const settle = () => vi.advanceTimersByTimeAsync(0);

describe('ResilientInformer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lists, resolves synced, then watches from the list resourceVersion', async () => {
    const h = harness();
    h.informer.start();
    expect(h.informer.hasSynced()).toBe(false);
    h.pendingList().resolve({ metadata: { resourceVersion: '100' }, items: [pod('a', '10')] });
    await h.informer.synced;
    await settle();
    expect(h.seen).toEqual(['add a@10']);
    expect(h.watches).toHaveLength(1);
    expect(h.lastWatch().query).toMatchObject({ resourceVersion: '100', allowWatchBookmarks: true });
    h.informer.stop();
  });

  it('hands list items to handlers as plain JSON (Dates become ISO strings)', async () => {
    const received: unknown[] = [];
    const informer = new ResilientInformer(
      {
        name: 'pods',
        path: '/api/v1/pods',
        list: async () => ({
          items: [
            pod('a', '1', {
              status: {
                startTime: new Date('2026-11-29T10:00:00Z'),
                other: new Date('2026-11-29T10:00:00.250Z'),
              },
              spec: { nodeName: undefined, containers: [{ name: 'c' }] },
            }),
          ],
        }),
        watch: async () => ({ abort() {} }),
        log: pino({ level: 'silent' }),
      },
      { add: (o) => received.push(o) },
    );
    informer.start();
    await informer.synced;
    expect(received).toEqual([
      pod('a', '1', {
        status: { startTime: '2026-11-29T10:00:00Z', other: '2026-11-29T10:00:00.250Z' },
        spec: { containers: [{ name: 'c' }] },
      }),
    ]);
    expect(Object.hasOwn((received[0] as { spec: object }).spec, 'nodeName')).toBe(false);
    informer.stop();
  });

  it('applies watch events, skips same-version updates and re-watches from the last resourceVersion', async () => {
    const h = harness();
    h.informer.start();
    h.pendingList().resolve({ metadata: { resourceVersion: '100' }, items: [pod('a', '10')] });
    await settle();
    const w = h.lastWatch();
    w.event('ADDED', pod('b', '101'));
    w.event('MODIFIED', pod('a', '102'));
    w.event('MODIFIED', pod('a', '102'));
    w.event('DELETED', pod('b', '103'));
    w.event('DELETED', pod('never-seen', '104'));
    w.event('BOOKMARK', { metadata: { resourceVersion: '105' } });
    expect(h.seen).toEqual(['add a@10', 'add b@101', 'update a@10->102', 'delete b']);
    // The server ends the watch normally (after it has been open a while): re-watch at once, no relist.
    await vi.advanceTimersByTimeAsync(5000);
    w.done(null);
    await settle();
    expect(h.lists).toHaveLength(1);
    expect(h.watches).toHaveLength(2);
    expect(h.lastWatch().query.resourceVersion).toBe('105');
    expect(h.informer.stats.events).toMatchObject({ added: 1, modified: 2, deleted: 2, bookmark: 1 });
    expect(h.informer.stats.restarts).toBe(0);
    h.informer.stop();
  });

  it('relists on a 410 ERROR event and reconciles: deletes vanished objects, updates changed ones only', async () => {
    const h = harness();
    h.informer.start();
    h.pendingList().resolve({
      metadata: { resourceVersion: '100' },
      items: [pod('a', '10'), pod('b', '11'), pod('c', '12')],
    });
    await settle();
    h.seen.length = 0;
    h.lastWatch().event('ERROR', {
      kind: 'Status',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version',
    });
    expect(h.lastWatch().aborted).toBe(true);
    await settle();
    expect(h.lists).toHaveLength(2);
    h.pendingList().resolve({
      metadata: { resourceVersion: '200' },
      items: [pod('a', '10'), pod('c', '150'), pod('d', '160')],
    });
    await settle();
    expect(h.seen).toEqual(['delete b', 'update c@12->150', 'add d@160']);
    expect(h.lastWatch().query.resourceVersion).toBe('200');
    expect(h.informer.stats.expired).toBe(1);
    expect(h.informer.stats.restarts).toBe(0);
    h.informer.stop();
  });

  it('with retain: identityOf keeps only identities, and the same events still come out', async () => {
    const big = (name: string, rv: string) =>
      pod(name, rv, { spec: { nodeName: 'n1' }, status: { phase: 'Running' } });
    const h = harness({ retain: identityOf });
    h.informer.start();
    h.pendingList().resolve({
      metadata: { resourceVersion: '100' },
      items: [big('a', '10'), big('b', '11')],
    });
    await settle();
    h.lastWatch().event('MODIFIED', big('a', '12'));
    h.lastWatch().event('MODIFIED', big('a', '12'));
    h.lastWatch().event('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' });
    await settle();
    h.pendingList().resolve({ metadata: { resourceVersion: '200' }, items: [big('a', '12')] });
    await settle();
    expect(h.seen).toEqual(['add a@10', 'add b@11', 'update a@10->12', 'delete b']);
    expect(h.olds).toEqual([{ metadata: { namespace: 'ns', name: 'a', resourceVersion: '10' } }]);
    expect(h.deleted).toEqual([{ metadata: { namespace: 'ns', name: 'b', resourceVersion: '11' } }]);
    h.informer.stop();
  });

  it('relists when the watch request itself fails with HTTP 410', async () => {
    const h = harness();
    h.informer.start();
    h.pendingList().resolve({ metadata: { resourceVersion: '100' }, items: [] });
    await settle();
    h.lastWatch().done(Object.assign(new Error('Gone'), { statusCode: 410 }));
    await settle();
    expect(h.lists).toHaveLength(2);
    h.informer.stop();
  });

  it('restarts after any other watch error with exponential backoff, keeping its resourceVersion', async () => {
    const h = harness();
    h.informer.start();
    h.pendingList().resolve({ metadata: { resourceVersion: '100' }, items: [] });
    await settle();
    const reset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

    h.lastWatch().done(reset());
    await vi.advanceTimersByTimeAsync(999);
    expect(h.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.watches).toHaveLength(2);
    expect(h.lastWatch().query.resourceVersion).toBe('100');

    h.lastWatch().done(Object.assign(new Error('Internal Server Error'), { statusCode: 500 }));
    await vi.advanceTimersByTimeAsync(1999);
    expect(h.watches).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.watches).toHaveLength(3);

    // An event proves the connection works: the next failure starts from 1 s again.
    h.lastWatch().event('ADDED', pod('a', '101'));
    h.lastWatch().done(reset());
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.watches).toHaveLength(4);
    expect(h.lastWatch().query.resourceVersion).toBe('101');
    expect(h.lists).toHaveLength(1);
    expect(h.informer.stats.restarts).toBe(3);
    expect(h.informer.stats.lastError).toBe('socket hang up');
    h.informer.stop();
  });

  it('caps the backoff at 30 s', async () => {
    const h = harness();
    h.informer.start();
    for (let i = 0; i < 8; i++) {
      h.pendingList().reject(new Error('connection refused'));
      await vi.advanceTimersByTimeAsync(30_000);
    }
    expect(h.lists).toHaveLength(9);
    h.pendingList().reject(new Error('connection refused'));
    await vi.advanceTimersByTimeAsync(29_999);
    expect(h.lists).toHaveLength(9);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.lists).toHaveLength(10);
    h.informer.stop();
  });

  it('treats a 404 on list as retryable and says why', async () => {
    const h = harness();
    h.informer.start();
    h.pendingList().reject(Object.assign(new Error('HTTP-Code: 404'), { code: 404 }));
    await settle();
    expect(h.logs.some((l) => l.level === 40 && l.status === 404 && /not served \(404\)/.test(l.msg))).toBe(
      true,
    );
    expect(h.informer.hasSynced()).toBe(false);
    await vi.advanceTimersByTimeAsync(1000);
    h.pendingList().resolve({ metadata: { resourceVersion: '5' }, items: [] });
    await settle();
    expect(h.informer.hasSynced()).toBe(true);
    h.informer.stop();
  });

  it('re-watches at once after client-node’s inactivity timeout, without counting a restart', async () => {
    const h = harness();
    h.informer.start();
    h.pendingList().resolve({ metadata: { resourceVersion: '100' }, items: [] });
    await settle();
    h.lastWatch().done(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    await settle();
    expect(h.watches).toHaveLength(2);
    expect(h.informer.stats).toMatchObject({ watchTimeouts: 1, restarts: 0 });
    h.informer.stop();
  });

  it('treats a watch the server closes immediately without events as a failure (no hot loop)', async () => {
    const h = harness();
    h.informer.start();
    h.pendingList().resolve({ metadata: { resourceVersion: '100' }, items: [] });
    await settle();
    h.lastWatch().done(null);
    await settle();
    expect(h.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.watches).toHaveLength(2);
    h.informer.stop();
  });

  it('restarts a watch that has been silent (no event, no reconnect) for 60 s', async () => {
    const h = harness();
    h.informer.start();
    h.pendingList().resolve({ metadata: { resourceVersion: '100' }, items: [] });
    await settle();
    const stuck = h.lastWatch();
    await vi.advanceTimersByTimeAsync(45_000);
    stuck.event('BOOKMARK', { metadata: { resourceVersion: '120' } });
    await vi.advanceTimersByTimeAsync(45_000);
    expect(h.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(stuck.aborted).toBe(true);
    expect(h.watches).toHaveLength(2);
    expect(h.lastWatch().query.resourceVersion).toBe('120');
    expect(h.informer.stats.silentRestarts).toBe(1);
    // Late callbacks of the abandoned watch change nothing.
    stuck.event('ADDED', pod('ghost', '121'));
    stuck.done(new Error('late'));
    await vi.advanceTimersByTimeAsync(5000);
    expect(h.seen).toEqual([]);
    expect(h.watches).toHaveLength(2);
    h.informer.stop();
  });

  it('never resurrects after stop(): not from the AbortError, a late list, or start()', async () => {
    const h = harness();
    h.informer.start();
    h.pendingList().resolve({ metadata: { resourceVersion: '100' }, items: [] });
    await settle();
    const w = h.lastWatch();
    h.informer.stop();
    expect(w.aborted).toBe(true);
    w.done(new DOMException('This operation was aborted', 'AbortError'));
    h.informer.start();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(h.watches).toHaveLength(1);
    expect(h.lists).toHaveLength(1);

    const h2 = harness();
    h2.informer.start();
    h2.informer.stop(); // while the list is in flight
    h2.pendingList().resolve({ metadata: { resourceVersion: '1' }, items: [pod('a', '1')] });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(h2.watches).toHaveLength(0);
    expect(h2.seen).toEqual([]);
  });

  it('aborts a watch that connects after stop()', async () => {
    let release!: () => void;
    const aborted: boolean[] = [];
    const informer = new ResilientInformer(
      {
        name: 'pods',
        path: '/api/v1/pods',
        list: async () => ({ metadata: { resourceVersion: '1' }, items: [] }),
        watch: async () => {
          await new Promise<void>((r) => {
            release = r;
          });
          return { abort: () => aborted.push(true) };
        },
        log: pino({ level: 'silent' }),
      },
      {},
    );
    informer.start();
    await settle();
    informer.stop();
    release();
    await settle();
    expect(aborted).toEqual([true]);
  });

  it('in poll mode lists every interval and reconciles with versionOf', async () => {
    const h = harness({
      watch: undefined,
      pollIntervalMs: 15_000,
      versionOf: (o) => String(o.timestamp),
    });
    h.informer.start();
    h.pendingList().resolve({
      items: [
        { metadata: { name: 'n1' }, timestamp: 't1' },
        { metadata: { name: 'n2' }, timestamp: 't1' },
      ],
    });
    await settle();
    expect(h.informer.hasSynced()).toBe(true);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(h.lists).toHaveLength(2);
    h.pendingList().resolve({ items: [{ metadata: { name: 'n1' }, timestamp: 't2' }] });
    await settle();
    expect(h.seen).toEqual([
      'add n1@undefined',
      'add n2@undefined',
      'delete n2',
      'update n1@undefined->undefined',
    ]);
    h.pendingList();
    await vi.advanceTimersByTimeAsync(15_000);
    expect(h.lists).toHaveLength(3);
    expect(h.watches).toHaveLength(0);
    h.informer.stop();
  });

  it('a throwing handler is logged and does not stop the informer', async () => {
    const logs: Array<{ level: number }> = [];
    const informer = new ResilientInformer(
      {
        name: 'pods',
        path: '/api/v1/pods',
        list: async () => ({ metadata: { resourceVersion: '1' }, items: [pod('a', '1'), pod('b', '1')] }),
        watch: async () => ({ abort() {} }),
        log: pino({}, { write: (l: string) => logs.push(JSON.parse(l)) }),
      },
      {
        add: (o) => {
          if (o.metadata?.name === 'a') throw new Error('bad handler');
        },
      },
    );
    informer.start();
    await informer.synced;
    expect(informer.size).toBe(2);
    expect(logs.filter((l) => l.level === 50)).toHaveLength(1);
    informer.stop();
  });
});

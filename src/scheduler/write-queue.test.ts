import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { TokenBucket } from './ratelimit.js';
import { type Write, type WriteKind, WriteQueue } from './write-queue.js';

const log = pino({ level: 'silent' });

/** A queue whose writes wait until released, so what is queued and in which order can be read. */
function harness(
  maxPendingEvents: number,
  concurrency = 1,
  more: { maxConcurrency?: number; eventsPerExtraWriter?: number } = {},
) {
  const ran: string[] = [];
  const releases: (() => void)[] = [];
  let drops = 0;
  const queue = new WriteQueue({
    bucket: new TokenBucket({ qps: 1e9, burst: 1e9 }),
    concurrency,
    ...more,
    maxPendingEvents,
    log,
    failureLevel: () => 'debug',
    describeError: String,
    onDrop: () => drops++,
  });
  const write = (key: string, kind: WriteKind, warning?: 'warning'): Write => ({
    key,
    kind,
    ...(warning ? { warning: true } : {}),
    run: () =>
      new Promise<void>((resolve) => {
        ran.push(key);
        releases.push(resolve);
      }),
  });
  /** Lets every started write finish, turn by turn, until the queue is empty. */
  const drain = async () => {
    while (queue.size > 0) {
      await new Promise((r) => setImmediate(r));
      for (const release of releases.splice(0)) release();
    }
  };
  return { queue, ran, write, drain, drops: () => drops };
}

describe('WriteQueue', () => {
  it.each([
    {
      name: 'drops an Event past the limit, counts it, and still takes pod writes',
      pushes: [
        ['blocker', 'pod'],
        ['e1', 'event'],
        ['e2', 'event'],
        ['e3', 'event'],
        ['status:a', 'pod'],
        ['preempt:b', 'pod'],
      ],
      accepted: [true, true, true, false, true, true],
      order: ['blocker', 'status:a', 'preempt:b', 'e1', 'e2'],
      dropped: 1,
    },
    {
      name: 'a newer write for a queued key replaces it in place, even when the Events are full',
      pushes: [
        ['blocker', 'pod'],
        ['e1', 'event'],
        ['e2', 'event'],
        ['e1', 'event'],
        ['status:a', 'pod'],
        ['status:a', 'pod'],
      ],
      accepted: [true, true, true, true, true, true],
      order: ['blocker', 'status:a', 'e2', 'e1'],
      dropped: 0,
    },
    {
      name: "a Warning finding the Events full takes the oldest Normal one's place",
      pushes: [
        ['blocker', 'pod'],
        ['e1', 'event'],
        ['e2', 'event'],
        ['w1', 'event', 'warning'],
      ],
      accepted: [true, true, true, true],
      order: ['blocker', 'w1', 'e2'],
      dropped: 1,
    },
    {
      name: 'a Warning is dropped when every queued Event is a Warning, and a Normal one too',
      pushes: [
        ['blocker', 'pod'],
        ['w1', 'event', 'warning'],
        ['w2', 'event', 'warning'],
        ['w3', 'event', 'warning'],
        ['e1', 'event'],
      ],
      accepted: [true, true, true, false, false],
      order: ['blocker', 'w1', 'w2'],
      dropped: 2,
    },
    {
      name: 'Warnings are written before Normal Events queued earlier, after pod writes',
      pushes: [
        ['blocker', 'pod'],
        ['e1', 'event'],
        ['w1', 'event', 'warning'],
        ['status:a', 'pod'],
      ],
      accepted: [true, true, true, true],
      order: ['blocker', 'status:a', 'w1', 'e1'],
      dropped: 0,
    },
    {
      name: 'pod writes never drop, however many',
      pushes: Array.from({ length: 6 }, (_, i) => [`status:${i}`, 'pod']),
      accepted: Array.from({ length: 6 }, () => true),
      order: Array.from({ length: 6 }, (_, i) => `status:${i}`),
      dropped: 0,
    },
  ] as {
    name: string;
    pushes: [string, WriteKind, 'warning'?][];
    accepted: boolean[];
    order: string[];
    dropped: number;
  }[])('$name', async ({ pushes, accepted, order, dropped }) => {
    const h = harness(2);
    expect(pushes.map(([key, kind, warning]) => h.queue.push(h.write(key, kind, warning)))).toEqual(accepted);
    expect(h.queue.queued('event')).toBeLessThanOrEqual(2);
    await h.drain();
    expect(h.ran).toEqual(order);
    expect(h.drops()).toBe(dropped);
    expect(h.queue.dropped).toBe(dropped);
  });

  it('whenIdle resolves once every write has run, and clear drops what is still queued', async () => {
    const h = harness(10);
    for (const key of ['status:a', 'e1', 'e2'])
      h.queue.push(h.write(key, key.startsWith('e') ? 'event' : 'pod'));
    let idle = false;
    const waiting = h.queue.whenIdle().then(() => {
      idle = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(idle).toBe(false);
    h.queue.clear();
    expect(h.queue.queued('event')).toBe(0);
    await h.drain();
    await waiting;
    expect(idle).toBe(true);
    expect(h.ran).toEqual(['status:a']);
  });

  it("a key's next write waits for its running one; other keys pass it meanwhile", async () => {
    const h = harness(10, 4);
    h.queue.push(h.write('series:a', 'event'));
    await new Promise((r) => setImmediate(r));
    expect(h.ran).toEqual(['series:a']); // running, not released
    h.queue.push(h.write('series:a', 'event'));
    h.queue.push(h.write('e1', 'event'));
    await new Promise((r) => setImmediate(r));
    // Three slots free, but the second series:a must not run beside the first.
    expect(h.ran).toEqual(['series:a', 'e1']);
    expect(h.queue.queued('event')).toBe(1);
    await h.drain();
    expect(h.ran).toEqual(['series:a', 'e1', 'series:a']);
  });

  it('a failed write is logged, not thrown, and the queue goes on', async () => {
    const h = harness(10);
    h.queue.push({ key: 'bad', kind: 'pod', run: () => Promise.reject(new Error('boom')) });
    h.queue.push(h.write('status:a', 'pod'));
    await h.drain();
    expect(h.ran).toEqual(['status:a']);
    expect(h.queue.size).toBe(0);
  });

  it.each([
    { name: 'few Events queued: the base concurrency', events: 1, started: 1 },
    { name: 'one more writer per 2 queued Events', events: 5, started: 3 },
    { name: 'never past maxConcurrency', events: 40, started: 4 },
  ])('an Event backlog recruits writers: $name', async ({ events, started }) => {
    const h = harness(100, 1, { maxConcurrency: 4, eventsPerExtraWriter: 2 });
    // A running pod write holds the one base slot while the Events are queued behind it.
    h.queue.push(h.write('blocker', 'pod'));
    for (let i = 0; i < events; i++) h.queue.push(h.write(`e${i}`, 'event'));
    await new Promise((r) => setImmediate(r));
    expect(h.ran).toHaveLength(started);
    await h.drain();
    expect(h.ran).toHaveLength(events + 1);
  });
});

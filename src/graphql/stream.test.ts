import { describe, expect, it } from 'vitest';
import { EventBus } from '../events/bus.js';
import { eventStream } from './stream.js';

type Topics = { event: { n: number; ns: string } };

function subscribeOn(bus: EventBus<Topics>) {
  return (listener: (e: Topics['event']) => void) => bus.on('event', listener);
}

async function take<T>(it: AsyncIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

describe('eventStream', () => {
  it('hands every subscriber the very same event object, filtered per subscriber', async () => {
    const bus = new EventBus<Topics>();
    const all = eventStream(subscribeOn(bus))[Symbol.asyncIterator]();
    const shop = eventStream(subscribeOn(bus), (e) => e.ns === 'shop')[Symbol.asyncIterator]();
    // Repeaters start on the first next(): pull once so both are listening before events flow.
    const firstAll = all.next();
    const firstShop = shop.next();
    expect(bus.listenerCount('event')).toBe(2);
    const a = { n: 1, ns: 'ops' };
    const b = { n: 2, ns: 'shop' };
    bus.emit('event', a);
    bus.emit('event', b);
    expect((await firstAll).value).toBe(a);
    expect((await firstShop).value).toBe(b);
    expect((await all.next()).value).toBe(b);
    await all.return?.();
    await shop.return?.();
    expect(bus.listenerCount('event')).toBe(0);
  });

  it('drops the oldest events of a subscriber that falls too far behind', async () => {
    const bus = new EventBus<Topics>();
    const it = eventStream(subscribeOn(bus), undefined, 3)[Symbol.asyncIterator]();
    const first = it.next();
    for (let n = 1; n <= 10; n++) bus.emit('event', { n, ns: 'x' });
    expect((await first).value.n).toBe(1);
    expect((await take(it, 3)).map((e) => e.n)).toEqual([8, 9, 10]);
    await it.return?.();
  });

  it('keeps the order of events when a verdict comes later (a review), and ends the stream when it fails', async () => {
    const bus = new EventBus<Topics>();
    const reviews = new Map<string, (ok: boolean) => void>();
    const known = new Map<string, boolean>([['shop', true]]);
    const accept = (e: Topics['event']) =>
      known.get(e.ns) ??
      new Promise<boolean>((resolve, reject) => {
        if (e.ns === 'broken') reject(new Error('review failed'));
        else reviews.set(e.ns, resolve);
      });
    const it = eventStream(subscribeOn(bus), accept)[Symbol.asyncIterator]();
    const first = it.next();
    bus.emit('event', { n: 1, ns: 'ops' }); // waits for its review
    bus.emit('event', { n: 2, ns: 'shop' }); // known, but must not overtake n=1
    bus.emit('event', { n: 3, ns: 'team' });
    reviews.get('ops')?.(true);
    expect((await first).value.n).toBe(1);
    expect((await it.next()).value.n).toBe(2);
    const third = it.next();
    reviews.get('team')?.(false);
    bus.emit('event', { n: 4, ns: 'shop' });
    expect((await third).value.n).toBe(4);
    bus.emit('event', { n: 5, ns: 'broken' });
    await expect(it.next()).rejects.toThrow('review failed');
  });
});

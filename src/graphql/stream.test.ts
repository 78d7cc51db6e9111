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
});

import { describe, expect, it } from 'vitest';
import { EventBus } from './bus.js';

type Topics = { change: { id: number }; ready: undefined };

function collectingBus() {
  const errors: [unknown, string][] = [];
  const bus = new EventBus<Topics>({ onListenerError: (err, topic) => errors.push([err, topic]) });
  return { bus, errors };
}

describe('EventBus', () => {
  it('delivers payloads to every listener of the topic, in subscription order', () => {
    const { bus } = collectingBus();
    const seen: string[] = [];
    bus.on('change', (p) => seen.push(`a${p.id}`));
    bus.on('change', (p) => seen.push(`b${p.id}`));
    bus.on('ready', () => seen.push('ready'));
    bus.emit('change', { id: 1 });
    bus.emit('ready');
    expect(seen).toEqual(['a1', 'b1', 'ready']);
  });

  it('unsubscribe stops delivery and is idempotent', () => {
    const { bus } = collectingBus();
    const seen: number[] = [];
    const off = bus.on('change', (p) => seen.push(p.id));
    bus.emit('change', { id: 1 });
    off();
    off();
    bus.emit('change', { id: 2 });
    expect(seen).toEqual([1]);
    expect(bus.listenerCount('change')).toBe(0);
  });

  it('a throwing listener is reported and the others still run', () => {
    const { bus, errors } = collectingBus();
    const seen: number[] = [];
    bus.on('change', () => {
      throw new Error('boom');
    });
    bus.on('change', (p) => seen.push(p.id));
    expect(() => bus.emit('change', { id: 7 })).not.toThrow();
    expect(seen).toEqual([7]);
    expect(errors.map(([e, t]) => [(e as Error).message, t])).toEqual([['boom', 'change']]);
  });

  it('a rejected async listener is reported', async () => {
    const { bus, errors } = collectingBus();
    bus.on('ready', async () => {
      throw new Error('later');
    });
    bus.emit('ready');
    await new Promise((r) => setImmediate(r));
    expect(errors.map(([e, t]) => [(e as Error).message, t])).toEqual([['later', 'ready']]);
  });

  it('listeners may unsubscribe and subscribe during dispatch without affecting that dispatch', () => {
    const { bus } = collectingBus();
    const seen: string[] = [];
    const offB = bus.on('change', () => {
      seen.push('a');
      offC();
      bus.on('change', () => seen.push('late'));
    });
    const offC = bus.on('change', () => seen.push('c'));
    bus.emit('change', { id: 1 });
    expect(seen).toEqual(['a', 'c']);
    seen.length = 0;
    offB();
    bus.emit('change', { id: 2 });
    expect(seen).toEqual(['late']);
  });

  it('a failing error reporter does not break the emitter', () => {
    const bus = new EventBus<Topics>({
      onListenerError: () => {
        throw new Error('reporter broken');
      },
    });
    bus.on('ready', () => {
      throw new Error('listener broken');
    });
    expect(() => bus.emit('ready')).not.toThrow();
  });

  it('emitting a topic nobody listens to is a no-op', () => {
    const { bus, errors } = collectingBus();
    bus.emit('change', { id: 1 });
    expect(errors).toEqual([]);
  });
});

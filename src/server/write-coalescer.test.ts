import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createWriteCoalescer } from './write-coalescer.js';

/** A loopback connection: the client side writes, the server side counts the reads that arrive. */
async function connection() {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
  const client = net.connect(port, '127.0.0.1');
  await new Promise<void>((r) => client.once('connect', () => r()));
  const peer = await accepted;
  const reads: string[] = [];
  peer.setEncoding('utf8');
  peer.on('data', (d: string) => reads.push(d));
  return {
    client,
    reads,
    close: async () => {
      client.destroy();
      peer.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const waitFor = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

describe('WriteCoalescer', () => {
  it('sends the writes of one window as one, in order, once the window ends', async () => {
    const c = await connection();
    closers.push(c.close);
    // Long enough that three turns of a starved test process fit in it.
    const coalescer = createWriteCoalescer({ minWindowMs: 300 });
    for (const n of [1, 2, 3]) {
      coalescer.hold(c.client);
      c.client.write(`m${n};`);
      await new Promise((r) => setImmediate(r)); // separate ticks, as decisions are
    }
    expect(coalescer.held).toBe(1);
    expect(c.client.writableCorked).toBe(1);
    await waitFor(() => c.reads.join('') === 'm1;m2;m3;');
    expect(c.reads).toEqual(['m1;m2;m3;']);
    expect(coalescer.held).toBe(0);
    expect(c.client.writableCorked).toBe(0);
  });

  it('reports each flush that wrote something: connections and seconds (onFlush, for the metrics)', async () => {
    const [a, b] = [await connection(), await connection()];
    closers.push(a.close, b.close);
    const flushes: [number, number][] = [];
    const coalescer = createWriteCoalescer({ minWindowMs: 60_000, onFlush: (n, s) => flushes.push([n, s]) });
    coalescer.flush();
    expect(flushes).toEqual([]);
    for (const c of [a, b, a]) {
      coalescer.hold(c.client);
      c.client.write('x');
    }
    coalescer.flush();
    expect(flushes.map(([n]) => n)).toEqual([2]);
    expect(flushes[0]?.[1]).toBeGreaterThanOrEqual(0);
    await waitFor(() => a.reads.join('') === 'xx' && b.reads.join('') === 'x');
  });

  it('flush() sends at once; a window of 0 never holds', async () => {
    const c = await connection();
    closers.push(c.close);
    const coalescer = createWriteCoalescer({ minWindowMs: 60_000 });
    coalescer.hold(c.client);
    c.client.write('a');
    coalescer.flush();
    await waitFor(() => c.reads.join('') === 'a');
    const off = createWriteCoalescer({ minWindowMs: 0 });
    off.hold(c.client);
    expect(off.held).toBe(0);
    expect(c.client.writableCorked).toBe(0);
  });

  it('widens the window while flushing costs more than its share, within its bounds', async () => {
    const c = await connection();
    closers.push(c.close);
    const costly = createWriteCoalescer({ minWindowMs: 5, maxWindowMs: 40, flushShare: 1e-9 });
    const cheap = createWriteCoalescer({ minWindowMs: 5, maxWindowMs: 40, flushShare: 1e9 });
    for (const co of [costly, cheap]) {
      co.hold(c.client);
      c.client.write('x');
    }
    await waitFor(() => c.reads.join('') === 'xx');
    await waitFor(() => costly.windowMs === 40);
    expect(cheap.windowMs).toBe(5);
  });

  it('flushes many connections at once, each once', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    let received = '';
    server.on('connection', (s) => s.on('data', (d) => (received += String(d))));
    const clients = await Promise.all(
      Array.from(
        { length: 150 },
        () =>
          new Promise<net.Socket>((r) => {
            const s = net.connect(port, '127.0.0.1', () => r(s));
          }),
      ),
    );
    closers.push(async () => {
      for (const s of clients) s.destroy();
      server.close();
    });
    const coalescer = createWriteCoalescer({ minWindowMs: 5 });
    for (const s of clients) {
      coalescer.hold(s);
      s.write('.');
    }
    expect(coalescer.held).toBe(150);
    await waitFor(() => received.length === 150);
    expect(clients.every((s) => s.writableCorked === 0)).toBe(true);
  });

  it('leaves a socket that ended meanwhile alone', async () => {
    const c = await connection();
    closers.push(c.close);
    const coalescer = createWriteCoalescer({ minWindowMs: 10 });
    coalescer.hold(c.client);
    c.client.end('last');
    await waitFor(() => c.reads.join('') === 'last');
    coalescer.flush();
    expect(c.client.writableCorked).toBe(0);
  });

  it('later: a task runs once per window, before the uncork, and what it writes leaves with that flush', async () => {
    const c = await connection();
    closers.push(c.close);
    const flushes: number[] = [];
    const coalescer = createWriteCoalescer({ minWindowMs: 60_000, onFlush: (n) => flushes.push(n) });
    let runs = 0;
    const task = () => {
      runs++;
      coalescer.hold(c.client);
      c.client.write('gathered;');
    };
    coalescer.hold(c.client);
    c.client.write('first;');
    coalescer.later(task);
    coalescer.later(task);
    expect(runs).toBe(0);
    coalescer.flush();
    expect(runs).toBe(1);
    expect(c.client.writableCorked).toBe(0);
    expect(coalescer.held).toBe(0);
    expect(flushes).toEqual([1]);
    await waitFor(() => c.reads.join('') === 'first;gathered;');
    coalescer.flush();
    expect(runs).toBe(1);
  });

  it('later with a window of 0 runs the task at once', () => {
    const coalescer = createWriteCoalescer({ minWindowMs: 0 });
    let runs = 0;
    coalescer.later(() => runs++);
    expect(runs).toBe(1);
  });
});

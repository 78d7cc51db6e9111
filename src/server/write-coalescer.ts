/**
 * Coalesces the writes of long-lived push streams (SSE subscriptions, graphql-ws sockets) into one
 * system call per connection per window. The first write to a connection in a window corks its socket;
 * one timer for all connections uncorks them at the window's end, and Node sends what each gathered
 * with one writev.
 *
 * Why: every scheduling decision goes to every subscriber. In the fan-out bench's profile (200
 * subscribers, ~90 decisions/s) one write per decision per subscriber made writev the largest cost of
 * the gateway (a fifth of its busy time, ~27 µs per loopback write); 1,000 subscribers took the
 * scheduler from 94 to 10 pods/s. Batching bounds that cost by the window, not by the decision rate.
 * The price is latency: a message waits at most one window (20–100 ms, see below) before it leaves.
 *
 * Corking saves the system calls but not the work of each write (a stream chunk, its chunked-encoding
 * or WebSocket framing, per message and subscriber). So a transport may also gather the messages
 * themselves (`later`): it keeps a connection's messages of the window and writes them as one chunk
 * when the window ends (event-stream.ts, websocket.ts), and a decision costs each subscriber an array
 * push instead of a write.
 */
import type { Socket } from 'node:net';

export interface CoalescerOptions {
  /** The shortest window (default 20 ms): what a message waits at most when few connections are held. */
  minWindowMs?: number;
  /** The longest (default 100 ms), which the window grows to when flushing gets expensive. */
  maxWindowMs?: number;
  /** The share of the time flushing may take (default 0.25): the window is the last flush's cost ÷ it. */
  flushShare?: number;
  /** Told after every flush (metrics): how many connections it uncorked, in how many seconds. */
  onFlush?: (connections: number, seconds: number) => void;
}

export const DEFAULT_COALESCE_WINDOW_MS = 20;
const MAX_WINDOW_MS = 100;
const FLUSH_SHARE = 0.25;

export interface WriteCoalescer {
  /** Call before writing to `socket`: it stays corked until the window ends. */
  hold(socket: Socket): void;
  /**
   * Runs `task` when the window ends, once however often it is passed (a connection's writer of what it
   * gathered), before the held sockets are uncorked: what it writes leaves with this flush.
   */
  later(task: () => void): void;
  /** Uncorks every held socket now (also what the window's timer does). */
  flush(): void;
  /** Connections currently held. */
  readonly held: number;
  /** The current window, ms. */
  readonly windowMs: number;
}

/**
 * With `windowMs` 0 nothing is held. The window adapts: one system call per connection is the floor of
 * the cost (~20–30 µs per loopback write, more on a busy machine), so with 1,000 subscribers a 20 ms
 * window would spend most of the time flushing; the window widens until flushing takes `flushShare` of
 * the time, up to `maxWindowMs`, and narrows again as connections leave.
 */
export function createWriteCoalescer(opts: CoalescerOptions = {}): WriteCoalescer {
  const minWindow = opts.minWindowMs ?? DEFAULT_COALESCE_WINDOW_MS;
  const maxWindow = Math.max(minWindow, opts.maxWindowMs ?? MAX_WINDOW_MS);
  const share = opts.flushShare ?? FLUSH_SHARE;
  let held = new Set<Socket>();
  let tasks = new Set<() => void>();
  let timer: NodeJS.Timeout | undefined;
  let flushing = false;
  let windowMs = minWindow;
  const arm = () => {
    if (!flushing) timer ??= setTimeout(flushAll, windowMs);
  };
  const uncork = (socket: Socket) => {
    // One uncork per cork: the socket's own cork/uncork pairs (http's per-tick cork, ws's per frame)
    // nest inside ours.
    if (socket.writableCorked > 0) socket.uncork();
  };
  /** The gathered messages are written first (into corked sockets), then every socket uncorks. */
  const take = (): Socket[] => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    flushing = true;
    try {
      const due = tasks;
      tasks = new Set();
      for (const task of due) task();
    } finally {
      flushing = false;
    }
    const sockets = [...held];
    held = new Set();
    return sockets;
  };
  /**
   * Uncorks every held connection in one task; its cost sets the next window. Not in chunks a turn of
   * the event loop apart: on a busy loop each turn can take tens of milliseconds, and a flush of 1,000
   * connections spread over 16 turns held messages for seconds (fan-out bench).
   */
  const flushAll = () => {
    const started = performance.now();
    const sockets = take();
    for (const socket of sockets) uncork(socket);
    const cost = performance.now() - started;
    windowMs = Math.min(maxWindow, Math.max(minWindow, cost / share));
    if (sockets.length > 0) opts.onFlush?.(sockets.length, cost / 1000);
  };
  return {
    hold(socket) {
      if (minWindow <= 0 || held.has(socket) || socket.destroyed) return;
      socket.cork();
      held.add(socket);
      arm();
    },
    later(task) {
      if (minWindow <= 0 || flushing) {
        task();
        return;
      }
      tasks.add(task);
      arm();
    },
    flush: flushAll,
    get held() {
      return held.size;
    },
    get windowMs() {
      return windowMs;
    },
  };
}

/** Every write of `res` (a streaming response) goes through `coalescer`'s window. */
export function coalesceResponseWrites(
  res: { write: (...args: never[]) => boolean; socket: Socket | null },
  coalescer: WriteCoalescer,
): void {
  const write = res.write;
  res.write = function (this: unknown, ...args: never[]) {
    if (res.socket) coalescer.hold(res.socket);
    return write.apply(this, args);
  } as typeof res.write;
}

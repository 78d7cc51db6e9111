/**
 * How long the calling thread has waited for a CPU while runnable, in ms since it started: Linux's
 * schedstat `run_delay`, the second field of /proc/thread-self/schedstat, read with one pread on a
 * descriptor kept open (~2 µs, no allocation). The kernel adds to it each time the thread gets a core
 * back, so its growth across a stretch of synchronous code is the time the OS ran other work in the
 * middle of it: the scheduling cycle's wall time less that is its time on a CPU (GC pauses included).
 *
 * Why not process.threadCpuUsage: getrusage's per-thread times advance by scheduler ticks (4 ms steps
 * were seen here), too coarse for cycles of a few milliseconds.
 *
 * Undefined where the file cannot be read (not Linux, or a kernel without schedstats). One descriptor per
 * thread: module state lives per isolate, and each isolate runs on one thread.
 */
import { closeSync, openSync, readSync } from 'node:fs';

let reader: (() => number) | undefined | null = null;

export function threadRunDelayReader(): (() => number) | undefined {
  if (reader === null) reader = openReader();
  return reader;
}

function openReader(): (() => number) | undefined {
  let fd: number;
  const buf = Buffer.alloc(96);
  const read = () => readSync(fd, buf, 0, buf.length, 0);
  try {
    // /proc/thread-self names the thread that opens it: the caller's, for the descriptor's lifetime.
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return undefined;
  }
  try {
    if (Number.isNaN(parseRunDelayNs(buf, read()))) throw new Error('unexpected schedstat format');
  } catch {
    closeSync(fd);
    return undefined;
  }
  return () => parseRunDelayNs(buf, read()) / 1e6;
}

/** The second space-separated decimal field of `buf[0, length)` ("<runtime ns> <run_delay ns> <count>"). */
export function parseRunDelayNs(buf: Uint8Array, length: number): number {
  let i = 0;
  while (i < length && buf[i] !== 0x20) i++;
  i++;
  let value = 0;
  let digits = 0;
  for (; i < length; i++) {
    const c = buf[i] as number;
    if (c < 0x30 || c > 0x39) break;
    value = value * 10 + (c - 0x30);
    digits++;
  }
  return digits > 0 ? value : Number.NaN;
}

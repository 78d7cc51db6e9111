/**
 * Returning the heap's idle memory to the OS once a burst is over. While pods are scheduled in a burst
 * V8 grows the young generation to its maximum (2 × --max-semi-space-size: 64 MiB with the Deployment's
 * flags) and the old generation past what stays live, and keeps those pages afterwards: Node never tells
 * V8 the process is idle, and a regular full GC shrinks the young generation but keeps its pages pooled.
 * Measured with the Deployment's flags: after a burst, RSS 430 MiB; after two regular full GCs 430 MiB;
 * after one memory-reducing ("last resort") GC 109 MiB, in a 385 ms pause at 40 MiB live. In the gateway at
 * 1,000 nodes after 3,000 pods (memory bench): RSS 331 → 206 MiB, heap committed 264 → 92 MiB, 634 ms.
 *
 * So when the event loop has been quiet for `idleAfterMs` after being busy, and the heap holds more than
 * `minSlackBytes` it does not use, one memory-reducing GC runs: one pause of up to a second,
 * once per busy → quiet transition, at a time nothing is queued. The next burst grows the heap again;
 * the peak, which sizes the pod's memory limit, does not change — the steady state does.
 *
 * Needs `node --expose-gc` (the Deployment's NODE_OPTIONS); without it the gateway logs so and does nothing.
 */
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';

export interface IdleReclaimOptions {
  /** Quiet time after a busy period before the heap is compacted; 0 turns reclaiming off. */
  idleAfterMs: number;
  /** Event-loop utilisation at or above which a sampling interval counts as busy. */
  busyUtilization: number;
  /** Heap committed beyond what is used, below which a reclaim is not worth its pause. */
  minSlackBytes: number;
}

export const IDLE_RECLAIM_DEFAULTS = {
  busyUtilization: 0.25,
  minSlackBytes: 48 * 2 ** 20,
} as const;

/**
 * When to reclaim, as a pure state machine over samples of (time, loop utilisation since the last
 * sample, heap slack). A reclaim is due once per busy period: after the last busy sample, `idleAfterMs`
 * of quiet ones, with enough slack. The process starting counts as busy (its initial lists grow the heap).
 */
export class IdleReclaimPolicy {
  private armed = true;
  private lastBusyAt: number;

  constructor(
    private readonly opts: IdleReclaimOptions,
    startedAt: number,
  ) {
    this.lastBusyAt = startedAt;
  }

  /** Whether to reclaim now; the caller reclaims when it says so. */
  sample(now: number, utilization: number, slackBytes: number): boolean {
    if (this.opts.idleAfterMs <= 0) return false;
    if (utilization >= this.opts.busyUtilization) {
      this.armed = true;
      this.lastBusyAt = now;
      return false;
    }
    if (!this.armed || now - this.lastBusyAt < this.opts.idleAfterMs) return false;
    // Quiet long enough: one try per busy period, whether or not the slack made it worth it.
    this.armed = false;
    return slackBytes >= this.opts.minSlackBytes;
  }
}

type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** The gc() --expose-gc installs, when it did (Node's typings do not declare the options form). */
function exposedGc(): GcFunction | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as GcFunction) : undefined;
}

function heapSlackBytes(): number {
  const h = v8.getHeapStatistics();
  return h.total_heap_size - h.used_heap_size;
}

const MIB = 2 ** 20;

/** Samples the loop every few seconds and reclaims when the policy says so; returns the stop function. */
export function startIdleMemoryReclaim(
  opts: IdleReclaimOptions,
  deps: { log: Logger; registry: Registry },
): () => void {
  if (opts.idleAfterMs <= 0) return () => {};
  const gc = exposedGc();
  if (!gc) {
    deps.log.info(
      'idle memory reclaim off: node runs without --expose-gc (the Deployment sets it in NODE_OPTIONS)',
    );
    return () => {};
  }
  const reclaims = new Counter({
    name: 'nodeload_idle_memory_reclaims_total',
    help: 'Memory-reducing garbage collections run after a busy period, to return the heap the burst grew to the OS.',
    registers: [deps.registry],
  });
  const policy = new IdleReclaimPolicy(opts, performance.now());
  let previous = performance.eventLoopUtilization();
  const timer = setInterval(
    () => {
      const current = performance.eventLoopUtilization();
      const { utilization } = performance.eventLoopUtilization(current, previous);
      previous = current;
      const slack = heapSlackBytes();
      if (!policy.sample(performance.now(), utilization, slack)) return;
      const rssBefore = process.memoryUsage.rss();
      const started = performance.now();
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      reclaims.inc();
      deps.log.info(
        {
          pauseMs: Math.round(performance.now() - started),
          rssMiB: { before: Math.round(rssBefore / MIB), after: Math.round(process.memoryUsage.rss() / MIB) },
          heapSlackMiB: Math.round(slack / MIB),
        },
        'idle: returned unused heap memory to the OS',
      );
    },
    Math.max(1000, Math.min(5000, opts.idleAfterMs / 3)),
  );
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Where a cycle's milliseconds go, for cycle.bench's --breakdown: the once-per-cycle extension points
 * timed per plugin (PreFilter, PreScore, NormalizeScore: the profile's plugin objects wrapped, so the
 * runtime is the one the scheduler runs), the rest of the cycle (Filter and Score, node by node, and the
 * runtime around them) as one remainder — timing each per-node call would cost more than many of them —
 * and garbage collection pauses attributed to the cycle they fell in ('gc' entries by start time).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import type { Profile } from '../../src/scheduler/framework/runtime.js';

/** Per cycle: label ("InterPodAffinity.preFilter", "gc") → ms. */
export type CycleParts = Map<string, number>;

export class CycleBreakdown {
  private current: CycleParts = new Map();
  readonly cycles: CycleParts[] = [];
  private readonly spans: { start: number; end: number; parts: CycleParts }[] = [];
  private readonly gc: { start: number; ms: number }[] = [];
  private readonly observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.gc.push({ start: e.startTime, ms: e.duration });
  });

  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** The profile with every plugin method timed into the current cycle. */
  wrap(profile: Profile): Profile {
    const timed = <T extends object>(plugin: T, methods: string[]): T => {
      const out = Object.create(plugin) as Record<string, unknown>;
      const name = (plugin as { name: string }).name;
      for (const m of methods) {
        const f = (plugin as Record<string, unknown>)[m];
        if (typeof f !== 'function') continue;
        const label = `${name}.${m}`;
        out[m] = (...args: unknown[]) => {
          const t0 = performance.now();
          try {
            return f.apply(plugin, args);
          } finally {
            this.add(label, performance.now() - t0);
          }
        };
      }
      return out as T;
    };
    return {
      ...profile,
      preFilter: profile.preFilter.map((p) => timed(p, ['preFilter'])),
      preScore: profile.preScore.map((p) => timed(p, ['preScore'])),
      score: profile.score.map((e) => ({ ...e, plugin: timed(e.plugin, ['normalizeScore']) })),
    };
  }

  private add(label: string, ms: number): void {
    this.current.set(label, (this.current.get(label) ?? 0) + ms);
  }

  /** Closes the cycle that ran from `start` to `end` (performance.now()). */
  endCycle(start: number, end: number): void {
    let timed = 0;
    for (const ms of this.current.values()) timed += ms;
    this.current.set('rest: Filter, Score, runtime', end - start - timed);
    this.spans.push({ start, end, parts: this.current });
    this.cycles.push(this.current);
    this.current = new Map();
  }

  /** Attributes GC pauses to cycles (call after the run; the observer delivers entries asynchronously). GC
   * time is part of the phase it interrupted as well: 'gc' says how much of the cycle was collection. */
  async settle(): Promise<void> {
    await new Promise((r) => setTimeout(r, 50));
    this.observer.disconnect();
    let i = 0;
    for (const g of this.gc.sort((a, b) => a.start - b.start)) {
      while (i < this.spans.length && (this.spans[i]?.end ?? 0) < g.start) i++;
      const span = this.spans[i];
      if (span && span.start <= g.start) span.parts.set('gc', (span.parts.get('gc') ?? 0) + g.ms);
    }
  }

  /** Mean ms per label over the cycles at `indices`, largest first, as "label ms" lines. */
  summary(indices: readonly number[], top = 8): string {
    const sum = new Map<string, number>();
    for (const i of indices) {
      for (const [k, v] of this.cycles[i] ?? []) sum.set(k, (sum.get(k) ?? 0) + v);
    }
    return [...sum]
      .map(([k, v]) => [k, v / Math.max(1, indices.length)] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => `    ${k.padEnd(44)} ${v.toFixed(3)} ms`)
      .join('\n');
  }
}

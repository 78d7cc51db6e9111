// A Prometheus histogram read off a /metrics page, so the scheduler bench can compare kube-scheduler's and
// nodeload's own timing of the algorithm (scheduling_algorithm_duration_seconds) phase by phase.

/** Cumulative bucket counts by upper bound (`le`, +Inf included), summed over every label set. */
export type Buckets = Map<number, number>;

/** The `<name>_bucket` series of the exposition text, summed per `le` across labels. */
export function parseBuckets(text: string, name: string): Buckets {
  const buckets: Buckets = new Map();
  const re = new RegExp(`^${name}_bucket\\{(?:[^}]*,)?le="([^"]+)"[^}]*\\} (\\S+)`, 'gm');
  for (const m of text.matchAll(re)) {
    const le = m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]);
    buckets.set(le, (buckets.get(le) ?? 0) + Number(m[2]));
  }
  return buckets;
}

/** A histogram's `_sum` and `_count` per value of `label` (e.g. prom-client's GC pauses by `kind`). */
export type SumCounts = Map<string, { sum: number; count: number }>;

export function parseSumCounts(text: string, name: string, label: string): SumCounts {
  const out: SumCounts = new Map();
  const re = new RegExp(`^${name}_(sum|count)\\{(?:[^}]*,)?${label}="([^"]+)"[^}]*\\} (\\S+)`, 'gm');
  for (const m of text.matchAll(re)) {
    const key = m[2] as string;
    const entry = out.get(key) ?? { sum: 0, count: 0 };
    entry[m[1] as 'sum' | 'count'] += Number(m[3]);
    out.set(key, entry);
  }
  return out;
}

/** after − before, or the sum of two, per label value. */
export function combineSumCounts(a: SumCounts, b: SumCounts, sign: 1 | -1): SumCounts {
  const out: SumCounts = new Map([...a].map(([k, v]) => [k, { ...v }]));
  for (const [k, v] of b) {
    const entry = out.get(k) ?? { sum: 0, count: 0 };
    entry.sum += sign * v.sum;
    entry.count += sign * v.count;
    out.set(k, entry);
  }
  return out;
}

/** after − before per bucket: what one phase observed. */
export function subtractBuckets(after: Buckets, before: Buckets): Buckets {
  return new Map([...after].map(([le, n]) => [le, n - (before.get(le) ?? 0)]));
}

export function addBuckets(a: Buckets, b: Buckets): Buckets {
  const sum = new Map(a);
  for (const [le, n] of b) sum.set(le, (sum.get(le) ?? 0) + n);
  return sum;
}

/**
 * The q-quantile as PromQL's histogram_quantile estimates it: linear within the bucket it falls in (from
 * 0 for the first); the highest finite bound if it falls in +Inf; NaN with no observations.
 */
export function histogramQuantile(q: number, buckets: Buckets): number {
  const bounds = [...buckets].sort(([a], [b]) => a - b);
  const total = bounds.at(-1)?.[1] ?? 0;
  if (total <= 0) return Number.NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, count] of bounds) {
    if (count >= rank) {
      if (le === Number.POSITIVE_INFINITY) return lower;
      return count === below ? le : lower + ((le - lower) * (rank - below)) / (count - below);
    }
    lower = le;
    below = count;
  }
  return lower;
}

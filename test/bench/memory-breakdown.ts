// Where a Node process's resident memory goes, read off its prom-client default metrics: V8's heap by
// space (committed and used), memory outside the heap that V8 is told of (Buffers, ArrayBuffers), and the
// rest of the RSS (Node's and V8's native memory: code, stacks, TLS, libuv, malloc's slack).

export interface MemoryBreakdown {
  residentBytes: number;
  /** V8's heap, committed, and in use. */
  heapTotalBytes: number;
  heapUsedBytes: number;
  /** Buffers and ArrayBuffers (nodejs_external_memory_bytes). */
  externalBytes: number;
  /** Per heap space ("new", "old", "code", "large_object", …): committed and used bytes. */
  spaces: Map<string, { total: number; used: number }>;
}

/** From a /metrics page whose default metrics carry `prefix` (e.g. "nodeload_"); undefined without them. */
export function parseMemoryBreakdown(text: string, prefix: string): MemoryBreakdown | undefined {
  const gauge = (name: string) => {
    const m = new RegExp(`^${prefix}${name} (\\S+)`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const resident = gauge('process_resident_memory_bytes');
  const heapTotal = gauge('nodejs_heap_size_total_bytes');
  if (resident === undefined || heapTotal === undefined) return undefined;
  const spaces = new Map<string, { total: number; used: number }>();
  const re = new RegExp(
    `^${prefix}nodejs_heap_space_size_(total|used)_bytes\\{space="([^"]+)"\\} (\\S+)`,
    'gm',
  );
  for (const m of text.matchAll(re)) {
    const space = spaces.get(m[2] as string) ?? { total: 0, used: 0 };
    space[m[1] as 'total' | 'used'] = Number(m[3]);
    spaces.set(m[2] as string, space);
  }
  return {
    residentBytes: resident,
    heapTotalBytes: heapTotal,
    heapUsedBytes: gauge('nodejs_heap_size_used_bytes') ?? Number.NaN,
    externalBytes: gauge('nodejs_external_memory_bytes') ?? Number.NaN,
    spaces,
  };
}

const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)}`;

/** "RSS 357 MiB: V8 heap 250 committed (new 128, old 110 with 90 in use, …), external 20, other 87". */
export function describeMemory(m: MemoryBreakdown): string {
  const shown = [...m.spaces]
    .filter(([, s]) => s.total >= 2 ** 20)
    .sort(([, a], [, b]) => b.total - a.total)
    .map(([name, s]) => `${name} ${mib(s.total)}${name === 'old' ? ` with ${mib(s.used)} in use` : ''}`);
  const other = m.residentBytes - m.heapTotalBytes - m.externalBytes;
  return (
    `RSS ${mib(m.residentBytes)} MiB: V8 heap ${mib(m.heapTotalBytes)} committed (${shown.join(', ')}; ` +
    `${mib(m.heapUsedBytes)} in use in all), Buffers and ArrayBuffers ${mib(m.externalBytes)}, ` +
    `the rest ${mib(other)} (native: code, stacks, TLS, allocator slack)`
  );
}

import { describe, expect, it } from 'vitest';
import { describeMemory, parseMemoryBreakdown } from './memory-breakdown.js';

const MiB = 2 ** 20;
const PAGE = `# HELP nodeload_process_resident_memory_bytes Resident memory size in bytes.
nodeload_process_resident_memory_bytes ${360 * MiB}
nodeload_nodejs_heap_size_total_bytes ${250 * MiB}
nodeload_nodejs_heap_size_used_bytes ${180 * MiB}
nodeload_nodejs_external_memory_bytes ${20 * MiB}
nodeload_nodejs_heap_space_size_total_bytes{space="new"} ${128 * MiB}
nodeload_nodejs_heap_space_size_total_bytes{space="old"} ${110 * MiB}
nodeload_nodejs_heap_space_size_total_bytes{space="code"} ${12 * MiB}
nodeload_nodejs_heap_space_size_total_bytes{space="shared"} 0
nodeload_nodejs_heap_space_size_used_bytes{space="new"} ${60 * MiB}
nodeload_nodejs_heap_space_size_used_bytes{space="old"} ${100 * MiB}
other_process_resident_memory_bytes 1
`;

describe('parseMemoryBreakdown', () => {
  it('reads the RSS, the heap, external memory and every space under the prefix', () => {
    const m = parseMemoryBreakdown(PAGE, 'nodeload_');
    expect(m).toMatchObject({
      residentBytes: 360 * MiB,
      heapTotalBytes: 250 * MiB,
      heapUsedBytes: 180 * MiB,
      externalBytes: 20 * MiB,
    });
    expect(m?.spaces.get('old')).toEqual({ total: 110 * MiB, used: 100 * MiB });
    expect(m?.spaces.get('code')).toEqual({ total: 12 * MiB, used: 0 });
    expect([...(m?.spaces.keys() ?? [])]).toEqual(['new', 'old', 'code', 'shared']);
  });
  it('is undefined without the default metrics', () => {
    expect(parseMemoryBreakdown(PAGE, 'absent_')).toBeUndefined();
    expect(parseMemoryBreakdown('', 'nodeload_')).toBeUndefined();
  });
});

describe('describeMemory', () => {
  it('names the spaces of a MiB or more, largest first, and what is outside the heap', () => {
    const m = parseMemoryBreakdown(PAGE, 'nodeload_');
    if (!m) throw new Error('no breakdown');
    expect(describeMemory(m)).toBe(
      'RSS 360 MiB: V8 heap 250 committed (new 128, old 110 with 100 in use, code 12; 180 in use in all), ' +
        'Buffers and ArrayBuffers 20, the rest 90 (native: code, stacks, TLS, allocator slack)',
    );
  });
});

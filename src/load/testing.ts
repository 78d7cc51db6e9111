import type { NodeLoad } from './types.js';

/**
 * A requests-based NodeLoad at given percentages of a 4-CPU / 8 GiB / 110-pod node, for unit tests of
 * code that reads load figures (rules, operator, scheduler) without computing them.
 */
export function loadAt(
  node: string,
  cpuPercent: number,
  memoryPercent = 0,
  overrides: Partial<NodeLoad> = {},
): NodeLoad {
  const zero = { cpuMilli: 0, memoryBytes: 0 };
  return {
    node,
    allocatable: { cpuMilli: 4000, memoryBytes: 8 * 2 ** 30, pods: 110 },
    requested: zero,
    podCount: 0,
    estimated: zero,
    estimatedPods: 0,
    effective: zero,
    cpuPercent,
    memoryPercent,
    source: 'requests',
    timestamp: '',
    metricsStale: false,
    unavailable: false,
    ...overrides,
  };
}

import { describe, expect, it } from 'vitest';
import { PlacementLog } from './placement-log.js';
import { NOW } from './testing.js';

function setup(maxWindowSeconds?: number) {
  let now = NOW;
  const log = new PlacementLog({ now: () => now, ...(maxWindowSeconds ? { maxWindowSeconds } : {}) });
  return {
    log,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('PlacementLog', () => {
  it('counts placements per node over a sliding window', () => {
    const { log, advance } = setup();
    log.record('ns/a', 'n1', []);
    advance(4000);
    log.record('ns/b', 'n1', []);
    log.record('ns/c', 'n2', []);
    expect(log.placements('n1', 10)).toBe(2);
    expect(log.placements('n1', 3)).toBe(1);
    expect(log.placements('n2', 10)).toBe(1);
    expect(log.placements('n3', 10)).toBe(0);
    advance(6000);
    // a was placed exactly 10 s ago: outside a 10 s window.
    expect(log.placements('n1', 10)).toBe(1);
  });

  it('narrows the count to a rule', () => {
    const { log } = setup();
    log.record('ns/a', 'n1', ['ns/web']);
    log.record('ns/b', 'n1', ['ns/web', 'ns/all']);
    log.record('ns/c', 'n1', []);
    expect(log.placements('n1', 60, 'ns/web')).toBe(2);
    expect(log.placements('n1', 60, 'ns/all')).toBe(1);
    expect(log.placements('n1', 60)).toBe(3);
  });

  it('takes a placement back when its bind fails', () => {
    const { log } = setup();
    log.record('ns/a', 'n1', ['ns/web']);
    log.record('ns/b', 'n1', ['ns/web']);
    log.remove('ns/a');
    expect(log.placements('n1', 60, 'ns/web')).toBe(1);
    log.remove('ns/unknown');
    expect(log.placements('n1', 60)).toBe(1);
  });

  it('re-recording a pod moves its placement', () => {
    const { log } = setup();
    log.record('ns/a', 'n1', []);
    log.record('ns/a', 'n2', []);
    expect(log.placements('n1', 60)).toBe(0);
    expect(log.placements('n2', 60)).toBe(1);
  });

  it('forgets placements older than the longest window', () => {
    const { log, advance } = setup(60);
    log.record('ns/a', 'n1', []);
    advance(61_000);
    log.record('ns/b', 'n1', []);
    expect(log.placements('n1', 3600)).toBe(1);
    // The pruned pod's removal is a no-op and does not touch the newer placement.
    log.remove('ns/a');
    expect(log.placements('n1', 60)).toBe(1);
  });
});

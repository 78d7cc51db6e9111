import { describe, expect, it } from 'vitest';
import { PlacementLog } from '../placement-log.js';
import { buildProfile } from './build.js';
import { loadProfileConfig } from './config.js';

describe('manifests/scheduler/profile.yaml', () => {
  it('parses and builds, with the weights and args it documents', () => {
    const config = loadProfileConfig('manifests/scheduler/profile.yaml', 'nodeload-scheduler');
    const profile = buildProfile('nodeload-scheduler', config, {
      placements: new PlacementLog({ now: () => 0 }),
    });
    const weights = Object.fromEntries(profile.score.map((s) => [s.plugin.name, s.weight]));
    expect(weights).toMatchObject({ LoadAware: 5, TaintToleration: 3, NodeAffinity: 2, InterPodAffinity: 2 });
    expect(profile.filter.map((p) => p.name)).toContain('NodeLoadRules');
  });
});

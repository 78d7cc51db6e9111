import { describe, expect, it } from 'vitest';
import { PlacementLog } from '../placement-log.js';
import { cycleOf, specNode, specPod } from '../plugins/plugin.testing.js';
import { NOW, node, pod } from '../testing.js';
import { buildProfile } from './build.js';
import type { ProfileConfig } from './config.js';
import { DEFAULT_PLUGINS } from './registry.js';

const deps = () => ({ placements: new PlacementLog({ now: () => NOW }) });
const build = (config?: Partial<ProfileConfig>) =>
  buildProfile('nodeload-scheduler', config ? { pluginConfig: [], ...config } : undefined, deps());
const names = (list: readonly { name: string }[]) => list.map((p) => p.name);
const weights = (p: ReturnType<typeof build>) =>
  Object.fromEntries(p.score.map((s) => [s.plugin.name, s.weight]));

describe('buildProfile defaults', () => {
  const profile = build();

  it('names the profile after the scheduler', () => {
    expect(profile.schedulerName).toBe('nodeload-scheduler');
  });

  it('runs upstream’s filters first, in upstream’s order, and nodeload’s after them', () => {
    const filters = names(profile.filter);
    expect(filters.slice(0, 6)).toEqual([
      'NodeUnschedulable',
      'NodeName',
      'TaintToleration',
      'NodeAffinity',
      'NodePorts',
      'NodeResourcesFit',
    ]);
    expect(filters.slice(-2)).toEqual(['NodeLoadRules', 'BurstGuard']);
    // Every default plugin with a Filter, in DEFAULT_PLUGINS order.
    const order = DEFAULT_PLUGINS.map((e) => e.name);
    expect([...filters].sort((a, b) => order.indexOf(a) - order.indexOf(b))).toEqual(filters);
  });

  it('scores with upstream’s weights and LoadAware at 5, instead of NodeResourcesFit', () => {
    expect(weights(profile)).toMatchObject({
      TaintToleration: 3,
      NodeAffinity: 2,
      NodeResourcesBalancedAllocation: 1,
      ImageLocality: 1,
      LoadAware: 5,
    });
    expect(names(profile.score.map((s) => s.plugin))).not.toContain('NodeResourcesFit');
    expect(names(profile.preEnqueue)).toEqual(['SchedulingGates']);
  });

  it('builds each plugin once and places it at every point it implements', () => {
    const inFilter = profile.filter.find((p) => p.name === 'TaintToleration');
    const inScore = profile.score.find((s) => s.plugin.name === 'TaintToleration')?.plugin;
    const inPreScore = profile.preScore.find((p) => p.name === 'TaintToleration');
    expect(inFilter).toBeDefined();
    expect(inScore).toBe(inFilter);
    expect(inPreScore).toBe(inFilter);
  });
});

describe('buildProfile from a configuration', () => {
  it('multiPoint disabled "*" removes every default; enabled adds back in the given order', () => {
    const p = build({
      plugins: {
        multiPoint: {
          disabled: [{ name: '*' }],
          enabled: [{ name: 'NodeResourcesFit' }, { name: 'LoadAware', weight: 4 }],
        },
      },
    });
    expect(names(p.filter)).toEqual(['NodeResourcesFit']);
    expect(names(p.preFilter)).toEqual(['NodeResourcesFit']);
    expect(p.score.map((s) => [s.plugin.name, s.weight])).toEqual([['LoadAware', 4]]);
    expect(p.preEnqueue).toEqual([]);
  });

  it('a plugin enabled without a weight scores with weight 1', () => {
    const p = build({
      plugins: { multiPoint: { disabled: [{ name: '*' }], enabled: [{ name: 'ImageLocality' }] } },
    });
    expect(p.score.map((s) => [s.plugin.name, s.weight])).toEqual([['ImageLocality', 1]]);
  });

  it('disables a plugin at one point only', () => {
    const p = build({ plugins: { score: { disabled: [{ name: 'TaintToleration' }] } } });
    expect(names(p.filter)).toContain('TaintToleration');
    expect(names(p.score.map((s) => s.plugin))).not.toContain('TaintToleration');
    expect(names(p.preScore)).toContain('TaintToleration');
  });

  it('disables every default of one point with "*"', () => {
    const p = build({
      plugins: { score: { disabled: [{ name: '*' }], enabled: [{ name: 'NodeAffinity' }] } },
    });
    expect(p.score.map((s) => [s.plugin.name, s.weight])).toEqual([['NodeAffinity', 1]]);
    expect(names(p.filter)).toEqual(names(build().filter));
  });

  it('overrides a default weight in place, keeping the order', () => {
    const p = build({
      plugins: {
        score: {
          enabled: [
            { name: 'LoadAware', weight: 1 },
            { name: 'TaintToleration', weight: 9 },
          ],
        },
      },
    });
    expect(names(p.score.map((s) => s.plugin))).toEqual(names(build().score.map((s) => s.plugin)));
    expect(weights(p)).toMatchObject({ LoadAware: 1, TaintToleration: 9 });
    // Re-enabling without a weight keeps the default one.
    expect(weights(build({ plugins: { score: { enabled: [{ name: 'LoadAware' }] } } }))['LoadAware']).toBe(5);
  });

  it('hands pluginConfig args to the plugin', () => {
    const gpuPod = specPod('p', {
      containers: [{ name: 'c', resources: { requests: { 'example.com/gpu': '1' } } }],
    });
    const n = specNode('n');
    expect(cycleOf(build(), gpuPod, { nodes: [n] }).verdicts[0]?.feasible).toBe(false);
    const ignoring = build({
      pluginConfig: [{ name: 'NodeResourcesFit', args: { ignoredResources: ['example.com/gpu'] } }],
    });
    expect(cycleOf(ignoring, gpuPod, { nodes: [n] }).verdicts[0]?.feasible).toBe(true);

    const pinned = build({
      pluginConfig: [
        {
          name: 'NodeAffinity',
          args: {
            addedAffinity: {
              required: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['x'] }] }],
            },
          },
        },
      ],
    });
    const { verdicts } = cycleOf(pinned, pod('p'), {
      nodes: [node('in', { labels: { pool: 'x' } }), node('out')],
    });
    expect(verdicts.map((v) => [v.node, v.feasible])).toEqual([
      ['in', true],
      ['out', false],
    ]);
  });

  it('LoadAware takes its weights from args, else from the scheduler’s flags', () => {
    const nodes = [node('n')];
    const pods = [pod('x', { nodeName: 'n', cpu: '2', memory: '6Gi' })];
    const p = pod('p', { cpu: '0', memory: '0' });
    const loadAwareScore = (profile: ReturnType<typeof build>) =>
      cycleOf(profile, p, { nodes, pods }).ranked[0]?.scores.find((s) => s.plugin === 'LoadAware')?.score;
    // cpu 50% and memory 75% after placement.
    expect(loadAwareScore(build())).toBeCloseTo(37.5, 9);
    expect(
      loadAwareScore(
        build({ pluginConfig: [{ name: 'LoadAware', args: { cpuWeight: 3, memoryWeight: 1 } }] }),
      ),
    ).toBeCloseTo(43.75, 9);
    const flags = buildProfile('s', undefined, { ...deps(), loadWeights: { cpu: 1, memory: 3 } });
    expect(loadAwareScore(flags)).toBeCloseTo(31.25, 9);
  });

  it('NodeResourcesBalancedAllocation takes its resources from args', () => {
    const p = build({
      plugins: {
        multiPoint: { disabled: [{ name: '*' }], enabled: [{ name: 'NodeResourcesBalancedAllocation' }] },
      },
      pluginConfig: [
        { name: 'NodeResourcesBalancedAllocation', args: { resources: [{ name: 'cpu', weight: 1 }] } },
      ],
    });
    // One resource: nothing to balance, so the pod leaves the balance as it was: 75 (with cpu and memory
    // it would be 68, from 100 to 87).
    expect(cycleOf(p, pod('p', { cpu: '1' }), { nodes: [node('n')] }).ranked[0]?.score).toBe(75);
  });

  it('refuses unknown plugins with a clear error', () => {
    expect(() => build({ plugins: { multiPoint: { enabled: [{ name: 'Nope' }] } } })).toThrow(
      /^unknown scheduler plugin "Nope" \(known: .*LoadAware/,
    );
    expect(() => build({ plugins: { filter: { enabled: [{ name: 'Nope' }] } } })).toThrow(
      /unknown scheduler plugin "Nope"/,
    );
    expect(() => build({ pluginConfig: [{ name: 'Nope', args: {} }] })).toThrow(
      'pluginConfig names unknown plugin "Nope"',
    );
  });

  it('refuses a plugin at a point it does not implement', () => {
    expect(() => build({ plugins: { score: { enabled: [{ name: 'NodePorts' }] } } })).toThrow(
      'plugin NodePorts does not implement score',
    );
  });
});

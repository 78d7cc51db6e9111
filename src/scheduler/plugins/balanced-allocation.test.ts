import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../cluster/model.js';
import { balancedAllocation } from './balanced-allocation.js';
import { container, cycleOf, scoresOf, specNode, specPod } from './plugin.testing.js';

const requesting = (name: string, requests: Record<string, string>, nodeName?: string) =>
  specPod(name, { containers: [container('c', requests)], ...(nodeName ? { nodeName } : {}) });

describe('NodeResourcesBalancedAllocation', () => {
  const nodes = [specNode('even'), specNode('skew'), specNode('over'), specNode('idle')];
  const bound: PodInfo[] = [
    requesting('e', { cpu: '1', memory: '2Gi' }, 'even'),
    requesting('s', { cpu: '3' }, 'skew'),
    // More than allocatable (the fit filter is not in this profile): the fraction is capped at 1.
    requesting('o', { cpu: '8' }, 'over'),
  ];

  it.each<{ name: string; pod: PodInfo; want: Record<string, number | undefined> }>([
    {
      // (1 − |cpu − mem| / 2) × 100 with the pod placed: even 2/4 vs 3/8, skew 4/4 vs 1/8, idle 1/4 vs 1/8.
      name: 'scores (1 − std of the fractions) × 100, with the pod placed',
      pod: requesting('p', { cpu: '1', memory: '1Gi' }),
      want: { even: 93.75, skew: 56.25, over: 56.25, idle: 93.75 },
    },
    {
      name: 'a pod requesting only cpu is scored (memory fraction from the node’s pods)',
      pod: requesting('p', { cpu: '1' }),
      want: { even: 87.5, skew: 50, over: 50, idle: 87.5 },
    },
    {
      name: 'BestEffort pods are skipped (PreScore)',
      pod: requesting('p', {}),
      want: { even: undefined, skew: undefined, over: undefined, idle: undefined },
    },
  ])('$name', ({ pod, want }) => {
    expect(scoresOf(balancedAllocation(), pod, { nodes, pods: bound })).toEqual(want);
  });

  it('ranks the evenly used nodes first, ties by name', () => {
    const { ranked } = cycleOf(balancedAllocation(), requesting('p', { cpu: '1', memory: '1Gi' }), {
      nodes,
      pods: bound,
    });
    expect(ranked.map((r) => r.node)).toEqual(['even', 'idle', 'over', 'skew']);
  });

  it('takes the configured resources; one the node lacks is left out', () => {
    const gpuNode = specNode('g', {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110', 'example.com/gpu': '4' },
    });
    const plain = specNode('plain');
    const pod = requesting('p', { cpu: '2', memory: '2Gi', 'example.com/gpu': '0' });
    const scores = scoresOf(balancedAllocation(['cpu', 'memory', 'example.com/gpu']), pod, {
      nodes: [gpuNode, plain],
    });
    // g: fractions .5, .25, 0 → population std √(1/24); plain: .5 and .25 only → std .125.
    expect(scores['g']).toBeCloseTo((1 - Math.sqrt(1 / 24)) * 100, 9);
    expect(scores['plain']).toBeCloseTo(87.5, 9);
  });

  it('is 100 with fewer than two resources to compare', () => {
    const pod = requesting('p', { cpu: '1' });
    expect(scoresOf(balancedAllocation(['cpu']), pod, { nodes: [specNode('n')] })).toEqual({ n: 100 });
  });
});

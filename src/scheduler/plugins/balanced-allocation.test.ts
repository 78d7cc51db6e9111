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
      // balance = ⌊(1 − |cpu − mem| / 2) × 100⌋ before and with the pod; score = 50 + ⌊(50 + with − before) / 2⌋.
      // even 1/4, 2/8 → 2/4, 3/8: 100 → 93; skew 3/4, 0 → 1, 1/8: 62 → 56; over 1 (capped), 0 → 1, 1/8:
      // 50 → 56; idle 0, 0 → 1/4, 1/8: 100 → 93.
      name: 'scores how the pod changes the balance: 50 + ⌊(50 + with − before) / 2⌋',
      pod: requesting('p', { cpu: '1', memory: '1Gi' }),
      want: { even: 71, skew: 72, over: 78, idle: 71 },
    },
    {
      // even 100 → 87 (2/4 vs 2/8); skew 62 → 50; over 50 → 50 (unchanged: 75); idle 100 → 87.
      name: 'a pod requesting only cpu is scored (memory fraction from the node’s pods)',
      pod: requesting('p', { cpu: '1' }),
      want: { even: 68, skew: 69, over: 75, idle: 68 },
    },
    {
      name: 'BestEffort pods are skipped (PreScore)',
      pod: requesting('p', {}),
      want: { even: undefined, skew: undefined, over: undefined, idle: undefined },
    },
  ])('$name', ({ pod, want }) => {
    expect(scoresOf(balancedAllocation(), pod, { nodes, pods: bound })).toEqual(want);
  });

  it('ranks the nodes the pod evens out first — not the already even ones, as before v1.36 — ties by name', () => {
    const { ranked } = cycleOf(balancedAllocation(), requesting('p', { cpu: '1', memory: '1Gi' }), {
      nodes,
      pods: bound,
    });
    expect(ranked.map((r) => r.node)).toEqual(['over', 'skew', 'even', 'idle']);
  });

  it('takes the configured resources; one the node lacks, or an extended one the pod does not request, is left out', () => {
    const gpuNode = specNode('g', {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110', 'example.com/gpu': '4' },
    });
    const plain = specNode('plain');
    const three = balancedAllocation(['cpu', 'memory', 'example.com/gpu']);
    const asking = requesting('p', { cpu: '2', memory: '2Gi', 'example.com/gpu': '1' });
    // g: .5, .25, .25 → population std √((1/36 + 2/144) / 3) = √(1/72) → 88, from 100: 50 + ⌊38 / 2⌋;
    // plain has no GPU: .5 and .25 only → std .125 → 87, from 100: 50 + ⌊37 / 2⌋.
    expect(scoresOf(three, asking, { nodes: [gpuNode, plain] })).toEqual({ g: 69, plain: 68 });
    // Asking no GPU: the GPU's fraction (0) is not counted on g either, as upstream skips a scalar resource
    // the pod does not request.
    const notAsking = requesting('p', { cpu: '2', memory: '2Gi', 'example.com/gpu': '0' });
    expect(scoresOf(three, notAsking, { nodes: [gpuNode, plain] })).toEqual({ g: 68, plain: 68 });
  });

  it('is 75 with fewer than two resources to compare: nothing to balance, so the pod leaves it as it was', () => {
    const pod = requesting('p', { cpu: '1' });
    expect(scoresOf(balancedAllocation(['cpu']), pod, { nodes: [specNode('n')] })).toEqual({ n: 75 });
  });

  it('takes two resources’ std as |f₀ − f₁| / 2, as upstream: the truncation sees its last bit', () => {
    // 100 CPU / 100Gi with 1 CPU and 72Gi taken, the pod 3 CPU: .01, .72 → .04, .72. |.04 − .72| / 2 gives
    // (1 − std) × 100 = 66 exactly; the general √(Σ(f − mean)² / 2) gives 65.99999999999999, truncated to 65,
    // which would make the score 75 instead of upstream's 50 + ⌊(50 + 66 − 64) / 2⌋ = 76.
    const n = specNode('n', { allocatable: { cpu: '100', memory: '100Gi', pods: '110' } });
    const busy = requesting('b', { cpu: '1', memory: '72Gi' }, 'n');
    expect(
      scoresOf(balancedAllocation(), requesting('p', { cpu: '3' }), { nodes: [n], pods: [busy] }),
    ).toEqual({
      n: 76,
    });
  });
});

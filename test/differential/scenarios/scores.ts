// Score plugins of the default profile where no other scenario decides the winner: TaintToleration's
// count of untolerated PreferNoSchedule taints, NodeAffinity's sum of preferred weights (and the empty
// preference it skips), InterPodAffinity's preferred terms of the incoming pod and of the existing pods
// (symmetry, hardPodAffinityWeight), PodTopologySpread's ScheduleAnyway scoring (nodes lacking the key,
// maxSkew > 1) and BalancedAllocation's resources (cpu and memory only).
//
// Weights (kube-scheduler v1.36.3 default profile): TaintToleration 3, NodeAffinity 2, PodTopologySpread 2,
// InterPodAffinity 2, NodeResourcesFit (LeastAllocated) 1, BalancedAllocation 1, ImageLocality 1. nodeload
// scores LoadAware (weight 5) in LeastAllocated's place. In every scenario the candidate nodes carry the
// same requests (and the pod the same), so LeastAllocated / LoadAware tie and BalancedAllocation ties (or is
// skipped for best-effort pods); the plugin under test decides. nodeload breaks exact ties by node name and
// kube-scheduler at random, so the expected winner sorts after a node that would tie with it if the plugin
// under test were wrong.
import type { V1PodAffinityTerm, V1PreferredSchedulingTerm } from '@kubernetes/client-node';
import {
  cpu,
  existing,
  expr,
  HOSTNAME,
  node,
  pod,
  podTerm,
  selector,
  spread,
  taint,
  toleration,
  ZONE,
} from '../build.js';
import type { Scenario } from '../types.js';

const GPU = 'example.com/gpu';
const web = { app: 'web' };
const exact = (r: Record<string, string>) => ({ requests: r, limits: r });

/** spec.affinity.nodeAffinity with only preferred terms. */
function preferNodes(...terms: V1PreferredSchedulingTerm[]) {
  return { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: terms } } };
}

/** A weighted pod (anti-)affinity term. */
function weighted(weight: number, podAffinityTerm: V1PodAffinityTerm) {
  return { weight, podAffinityTerm };
}

/** spec with one preferred pod affinity or anti-affinity term of `weight`. */
function prefersPods(kind: 'podAffinity' | 'podAntiAffinity', weight: number, term: V1PodAffinityTerm) {
  return {
    affinity: { [kind]: { preferredDuringSchedulingIgnoredDuringExecution: [weighted(weight, term)] } },
  };
}

/** `n` existing pods on `nodeName`, named <prefix>-1..n, each requesting 100m / 64Mi. */
function filler(
  prefix: string,
  nodeName: string,
  n: number,
  labels: Record<string, string> = { app: 'filler' },
) {
  return Array.from({ length: n }, (_, i) =>
    existing(`${prefix}-${i + 1}`, nodeName, { ...cpu('100m'), labels }),
  );
}

export const scoreScenarios: Scenario[] = [
  {
    name: 'score: untolerated PreferNoSchedule taints are counted per node, fewest wins',
    area: 'TaintToleration',
    description:
      'Score = number of PreferNoSchedule taints not tolerated by the pod’s tolerations whose effect is ' +
      'PreferNoSchedule or empty; NormalizeScore reversed: 100 − 100 × count / max. n1 {p, q}: the ' +
      'toleration of q has effect NoSchedule, so it does not count: 2. n2 {a, b=v1, r}: a tolerated (effect ' +
      'PreferNoSchedule), b=v1 tolerated (Equal v1, empty effect), r not: 1. n3 {b=v2, t, u, w}: b=v2 does not ' +
      'equal v1: 4. Normalized n1 100 − 50 = 50, n2 100 − 25 = 75, n3 0; × 3: n1 150, n2 225, n3 0, so n2. ' +
      'Best-effort pod on empty nodes: every other score ties. Counting the NoSchedule toleration or ignoring ' +
      'the empty-effect one would tie n1 and n2.',
    orderIndependent: true,
    nodes: [
      node('n1', { taints: [taint('p', 'PreferNoSchedule'), taint('q', 'PreferNoSchedule', '1')] }),
      node('n2', {
        taints: [
          taint('a', 'PreferNoSchedule'),
          taint('b', 'PreferNoSchedule', 'v1'),
          taint('r', 'PreferNoSchedule'),
        ],
      }),
      node('n3', {
        taints: [
          taint('b', 'PreferNoSchedule', 'v2'),
          taint('t', 'PreferNoSchedule'),
          taint('u', 'PreferNoSchedule'),
          taint('w', 'PreferNoSchedule'),
        ],
      }),
    ],
    pods: [
      pod('tolerant', {
        spec: {
          tolerations: [
            toleration('q', 'NoSchedule'),
            toleration('a', 'PreferNoSchedule'),
            toleration('b', undefined, 'v1'),
          ],
        },
      }),
    ],
    expect: { unschedulable: [], placements: { tolerant: ['n2'] } },
  },
  {
    name: 'score: preferred node affinity weights add up, matchFields included',
    area: 'NodeAffinity',
    description:
      'Score = Σ weights of the preferred terms matching the node; NormalizeScore 100 × s / max. Terms: ' +
      'disk In [ssd] 60, gpu Exists 30, matchFields metadata.name In [n2] 40. n1 (disk=ssd) 60, n2 (gpu) ' +
      '30 + 40 = 70, n3 0. Normalized n1 ⌊6000/70⌋ = 85, n2 100, n3 0; × 2: n1 170, n2 200, so n2. ' +
      'Best-effort pod on empty nodes: every other score ties. Taking the best term instead of the sum, or ' +
      'skipping matchFields in preferred terms, would give n1.',
    orderIndependent: true,
    nodes: [node('n1', { labels: { disk: 'ssd' } }), node('n2', { labels: { gpu: '' } }), node('n3')],
    pods: [
      pod('prefers', {
        spec: preferNodes(
          { weight: 60, preference: { matchExpressions: [expr('disk', 'In', ['ssd'])] } },
          { weight: 30, preference: { matchExpressions: [expr('gpu', 'Exists')] } },
          { weight: 40, preference: { matchFields: [expr('metadata.name', 'In', ['n2'])] } },
        ),
      }),
    ],
    expect: { unschedulable: [], placements: { prefers: ['n2'] } },
  },
  {
    name: 'score: an empty preferred node affinity term matches nothing (seen through normalization)',
    area: 'NodeAffinity',
    description:
      'Terms: an empty preference of weight 100 and tier In [x] of weight 10. Upstream skips empty ' +
      'preferences (NewPreferredSchedulingTerms), so NodeAffinity is n1 0, n2 (tier=x) 10, n3 0 → ' +
      'normalized 0, 100, 0; × 2: 0, 200, 0. TaintToleration: n1 no taint, n2 1, n3 3 PreferNoSchedule → ' +
      '100, 100 − ⌊100/3⌋ = 67, 0; × 3: 300, 201, 0. n1 300 < n2 401, so n2. Were the empty term to match ' +
      'every node, NodeAffinity would be 100 / 110 / 100 → 90, 100, 90 and n1 (300 + 180) would beat n2 ' +
      '(201 + 200). Best-effort pod on empty nodes: every other score ties.',
    orderIndependent: true,
    nodes: [
      node('n1'),
      node('n2', { labels: { tier: 'x' }, taints: [taint('a', 'PreferNoSchedule')] }),
      node('n3', {
        taints: [
          taint('a', 'PreferNoSchedule'),
          taint('b', 'PreferNoSchedule'),
          taint('c', 'PreferNoSchedule'),
        ],
      }),
    ],
    pods: [
      pod('prefers', {
        spec: preferNodes(
          { weight: 100, preference: {} },
          { weight: 10, preference: { matchExpressions: [expr('tier', 'In', ['x'])] } },
        ),
      }),
    ],
    expect: { unschedulable: [], placements: { prefers: ['n2'] } },
  },
  {
    name: "score: the incoming pod's preferred pod (anti-)affinity counts every matching pod",
    area: 'InterPodAffinity',
    description:
      'The pod prefers app=cache on its node (weight 10) and avoids app=noisy in its zone (weight 25); ' +
      'each matching pod adds ± weight to its topology domain. n1, n2 in zone a, n3 in zone b; n1 holds 1 ' +
      'cache pod, n2 3 cache + 1 noisy, n3 2 cache (every node 4 pods of 100m, so load ties). n1 10 − 25 = ' +
      '−15, n2 30 − 25 = 5, n3 20. NormalizeScore 100 × (s − min) / (max − min): n1 0, n2 ⌊100 × 20/35⌋ = ' +
      '57, n3 100; × 2: n3 wins by 86. Counting each term once per node instead of per pod would give n1 ' +
      '−15, n2 −15, n3 10: still n3; ignoring the anti-affinity gives n2 (30).',
    orderIndependent: true,
    nodes: [
      node('n1', { labels: { [ZONE]: 'a' } }),
      node('n2', { labels: { [ZONE]: 'a' } }),
      node('n3', { labels: { [ZONE]: 'b' } }),
    ],
    existingPods: [
      ...filler('n1-cache', 'n1', 1, { app: 'cache' }),
      ...filler('n1-other', 'n1', 3),
      ...filler('n2-cache', 'n2', 3, { app: 'cache' }),
      ...filler('n2-noisy', 'n2', 1, { app: 'noisy' }),
      ...filler('n3-cache', 'n3', 2, { app: 'cache' }),
      ...filler('n3-other', 'n3', 2),
    ],
    pods: [
      pod('web', {
        ...cpu('100m'),
        labels: web,
        spec: {
          affinity: {
            podAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                weighted(10, podTerm(HOSTNAME, selector({ app: 'cache' }))),
              ],
            },
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                weighted(25, podTerm(ZONE, selector({ app: 'noisy' }))),
              ],
            },
          },
        },
      }),
    ],
    expect: { unschedulable: [], placements: { web: ['n3'] } },
  },
  {
    name: "score: existing pods' preferred (anti-)affinity terms selecting the incoming pod count (symmetry)",
    area: 'InterPodAffinity',
    description:
      'The incoming web pod has no affinity of its own. Existing pods (one per node, 100m each): on n1 one ' +
      'preferring to avoid app=web on its node (weight 30), on n2 one preferring app=db (weight 50: does not ' +
      'select web), on n3 one preferring app=web (weight 10), on n4 one in namespace other preferring app=web ' +
      '(weight 100) — its term means its own namespace, so it does not select our pod. Scores n1 −30, n2 0, ' +
      'n3 10, n4 0; normalized 100 × (s + 30) / 40: n1 0, n2 75, n3 100, n4 75; × 2: n3 wins by 50. Ignoring ' +
      'existing pods’ preferred terms ties all (n1 by name); ignoring the namespace gives n4.',
    orderIndependent: true,
    namespaces: [{ name: 'other' }],
    nodes: [node('n1'), node('n2'), node('n3'), node('n4')],
    existingPods: [
      existing('shy', 'n1', {
        ...cpu('100m'),
        labels: { app: 'shy' },
        spec: prefersPods('podAntiAffinity', 30, podTerm(HOSTNAME, selector(web))),
      }),
      existing('db-fan', 'n2', {
        ...cpu('100m'),
        labels: { app: 'db-fan' },
        spec: prefersPods('podAffinity', 50, podTerm(HOSTNAME, selector({ app: 'db' }))),
      }),
      existing('fan', 'n3', {
        ...cpu('100m'),
        labels: { app: 'fan' },
        spec: prefersPods('podAffinity', 10, podTerm(HOSTNAME, selector(web))),
      }),
      existing('foreign-fan', 'n4', {
        ...cpu('100m'),
        namespace: 'other',
        labels: { app: 'fan' },
        spec: prefersPods('podAffinity', 100, podTerm(HOSTNAME, selector(web))),
      }),
    ],
    pods: [pod('web', { ...cpu('100m'), labels: web })],
    expect: { unschedulable: [], placements: { web: ['n3'] } },
  },
  {
    name: "score: an existing pod's required affinity selecting the incoming pod weighs hardPodAffinityWeight",
    area: 'InterPodAffinity',
    description:
      'The incoming web pod has no affinity. n1 holds a pod preferring to avoid app=web on its node (weight ' +
      '1), n2 a pod without terms, n3 a pod whose REQUIRED affinity selects app=web (it was bound directly, so ' +
      'never filtered): upstream adds hardPodAffinityWeight (1 by default) for it. Scores n1 −1, n2 0, n3 1; ' +
      'normalized 100 × (s + 1) / 2: 0, 50, 100; × 2: n3 wins by 100. Every node holds one 100m pod. Not ' +
      'scoring required terms of existing pods would tie n2 and n3 (n2 by name).',
    orderIndependent: true,
    nodes: [node('n1'), node('n2'), node('n3')],
    existingPods: [
      existing('shy', 'n1', {
        ...cpu('100m'),
        labels: { app: 'shy' },
        spec: prefersPods('podAntiAffinity', 1, podTerm(HOSTNAME, selector(web))),
      }),
      existing('plain', 'n2', { ...cpu('100m'), labels: { app: 'plain' } }),
      existing('needs-web', 'n3', {
        ...cpu('100m'),
        labels: { app: 'needs-web' },
        spec: {
          affinity: {
            podAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [podTerm(HOSTNAME, selector(web))],
            },
          },
        },
      }),
    ],
    pods: [pod('web', { ...cpu('100m'), labels: web })],
    expect: { unschedulable: [], placements: { web: ['n3'] } },
  },
  {
    name: 'score: ScheduleAnyway spreading scores a node lacking the topology key 0',
    area: 'PodTopologySpread',
    description:
      'Soft zone constraint (maxSkew 1). n1 has no zone label: with the pod’s own constraints upstream puts ' +
      'it in IgnoredNodes, scored 0 after normalization. Zones a (n2, 2 web pods) and b (n3, 1 web pod): ' +
      'weight ln(2 + 2) = 1.386, raw n2 round(2.77) = 3, n3 round(1.39) = 1; normalized 100 × (max + min − s) ' +
      '/ max: n2 ⌊100/3⌋ = 33, n3 100, n1 0; × 2: n3 wins. Every node holds two 100m pods (fillers on n1 ' +
      'and n3). Counting n1 as an empty domain would score it best (n1 100, n3 33).',
    orderIndependent: true,
    nodes: [node('n1'), node('n2', { labels: { [ZONE]: 'a' } }), node('n3', { labels: { [ZONE]: 'b' } })],
    existingPods: [
      ...filler('n1-other', 'n1', 2),
      ...filler('n2-web', 'n2', 2, web),
      ...filler('n3-web', 'n3', 1, web),
      ...filler('n3-other', 'n3', 1),
    ],
    pods: [
      pod('web', {
        ...cpu('100m'),
        labels: web,
        spec: {
          topologySpreadConstraints: [spread(ZONE, selector(web), { whenUnsatisfiable: 'ScheduleAnyway' })],
        },
      }),
    ],
    expect: { unschedulable: [], placements: { web: ['n3'] } },
  },
  {
    name: 'score: a larger maxSkew waters the spreading score down',
    area: 'PodTopologySpread',
    description:
      'Soft zone constraint with maxSkew 5: raw = count × ln(2 + 2) + (maxSkew − 1). n1 (zone a, 0 web pods) ' +
      '4, n2 (zone b, 2 web pods) round(2.77 + 4) = 7; normalized 100 × (max + min − s) / max: n1 100, n2 ' +
      '⌊400/7⌋ = 57; × 2: n1 200, n2 114. Preferred node affinity (pool=x 50 on both, fast=true 50 on n2): ' +
      'n1 50, n2 100 → 50, 100; × 2: n1 100, n2 200. n1 300 < n2 314, so n2. With maxSkew 1 (raw 0 and 3 → ' +
      '100 and 0) n1 would win 300 to 200. Each node holds two 100m pods (web on n2, fillers on n1).',
    orderIndependent: true,
    nodes: [
      node('n1', { labels: { [ZONE]: 'a', pool: 'x' } }),
      node('n2', { labels: { [ZONE]: 'b', pool: 'x', fast: 'true' } }),
    ],
    existingPods: [...filler('n1-other', 'n1', 2), ...filler('n2-web', 'n2', 2, web)],
    pods: [
      pod('web', {
        ...cpu('100m'),
        labels: web,
        spec: {
          topologySpreadConstraints: [
            spread(ZONE, selector(web), { whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 5 }),
          ],
          ...preferNodes(
            { weight: 50, preference: { matchExpressions: [expr('pool', 'In', ['x'])] } },
            { weight: 50, preference: { matchExpressions: [expr('fast', 'In', ['true'])] } },
          ),
        },
      }),
    ],
    expect: { unschedulable: [], placements: { web: ['n2'] } },
  },
  {
    name: 'score: balanced allocation counts cpu and memory only, not a requested extended resource',
    area: 'NodeResourcesBalancedAllocation',
    description:
      'Default NodeResourcesBalancedAllocationArgs resources are cpu and memory. 8 CPU / 8Gi / 2 GPU nodes: n1 ' +
      'holds 3 CPU / 3Gi, n2 2 CPU / 4Gi + 1 GPU; the pod asks 1 CPU + 1 GPU. Balance ⌊(1 − |f_cpu − f_mem| / 2) ' +
      '× 100⌋, score 50 + ⌊(50 + after − before) / 2⌋: n1 before 100, after 93 → 71; n2 before 87, after 93 ' +
      '→ 78, so n2. LoadAware ties (both 56.25); LeastAllocated gives n1 55, n2 54 (weight 1): kube-scheduler ' +
      '126 vs 132. Counting the GPU as a third resource would score n1 81, n2 67 and pick n1.',
    orderIndependent: true,
    nodes: [
      node('n1', { cpu: '8', memory: '8Gi', extra: { [GPU]: '2' } }),
      node('n2', { cpu: '8', memory: '8Gi', extra: { [GPU]: '2' } }),
    ],
    existingPods: [
      existing('even', 'n1', exact({ cpu: '3', memory: '3Gi' })),
      existing('gpu-user', 'n2', exact({ cpu: '2', memory: '4Gi', [GPU]: '1' })),
    ],
    pods: [pod('gpu-job', exact({ cpu: '1', [GPU]: '1' }))],
    expect: { unschedulable: [], placements: { 'gpu-job': ['n2'] } },
  },
];

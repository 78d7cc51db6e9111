// DefaultPreemption (kube-scheduler v1.36.3, pkg/scheduler/framework/plugins/defaultpreemption and
// framework/preemption): when no node fits, pods of lower priority are evicted on the node where that
// costs least. On each candidate node every lower-priority pod is removed, then they are added back most
// important first (PDB-violating ones first) while the preemptor still fits; the rest are the victims.
// The node is picked by, in order: fewest PDB violations, lowest highest-victim priority, smallest sum
// of victim priorities, fewest victims, latest start of the highest-priority victims. The preemptor is
// nominated there and bound once the victims are gone. The victim sets must match kube-scheduler's.
import { cpu, existing, node, pod, selector, spread, taint, toleration, ZONE } from '../build.js';
import type { PriorityClassDef, Scenario } from '../types.js';

const CLASSES: PriorityClassDef[] = [
  { name: 'low', value: 10 },
  { name: 'lower-mid', value: 20 },
  { name: 'mid', value: 500 },
  { name: 'high', value: 1000 },
  { name: 'high-never', value: 1000, preemptionPolicy: 'Never' },
];
const prio = (priorityClassName: string) => ({ priorityClassName });

export const preemptionScenarios: Scenario[] = [
  {
    name: 'a higher-priority pod preempts a lower-priority one',
    area: 'DefaultPreemption',
    description: 'n1 (4 CPU) holds a 3-CPU low pod; a 2-CPU high pod evicts it and is bound to n1.',
    orderIndependent: true,
    nodes: [node('n1')],
    objects: { priorityClasses: CLASSES },
    existingPods: [existing('low', 'n1', { ...cpu('3'), spec: prio('low') })],
    pods: [pod('high', { ...cpu('2'), spec: prio('high') })],
    expect: { unschedulable: [], placements: { high: ['n1'] }, victims: ['low'] },
  },
  {
    name: 'preemptionPolicy Never does not preempt',
    area: 'DefaultPreemption',
    description:
      'The same, with a class whose preemptionPolicy is Never: the pod stays Pending, nothing is evicted.',
    orderIndependent: true,
    nodes: [node('n1')],
    objects: { priorityClasses: CLASSES },
    existingPods: [existing('low', 'n1', { ...cpu('3'), spec: prio('low') })],
    pods: [pod('polite', { ...cpu('2'), spec: prio('high-never') })],
    expect: { unschedulable: ['polite'], victims: [] },
  },
  {
    name: 'equal priority never preempts',
    area: 'DefaultPreemption',
    description: 'Only pods of strictly lower priority are victims: a mid pod cannot evict a mid pod.',
    orderIndependent: true,
    nodes: [node('n1')],
    objects: { priorityClasses: CLASSES },
    existingPods: [existing('peer', 'n1', { ...cpu('3'), spec: prio('mid') })],
    pods: [pod('same', { ...cpu('2'), spec: prio('mid') })],
    expect: { unschedulable: ['same'], victims: [] },
  },
  {
    name: 'only as many victims as needed, the least important first',
    area: 'DefaultPreemption',
    description:
      'n1 has low-a (1.5 CPU, priority 10) and low-b (1.5 CPU, priority 20); a 2-CPU high pod needs 1 more ' +
      'CPU. Both are removed, low-b is added back first and still fits, low-a does not: only low-a goes.',
    orderIndependent: true,
    nodes: [node('n1')],
    objects: { priorityClasses: CLASSES },
    existingPods: [
      existing('low-a', 'n1', { ...cpu('1500m'), spec: prio('low') }),
      existing('low-b', 'n1', { ...cpu('1500m'), spec: prio('lower-mid') }),
    ],
    pods: [pod('high', { ...cpu('2'), spec: prio('high') })],
    expect: { unschedulable: [], placements: { high: ['n1'] }, victims: ['low-a'] },
  },
  {
    name: 'the node whose victims matter least is chosen',
    area: 'DefaultPreemption',
    description:
      'n1 would lose a priority-500 pod, n2 a priority-10 pod: the lowest highest-victim priority wins, n2.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    objects: { priorityClasses: CLASSES },
    existingPods: [
      existing('mid', 'n1', { ...cpu('3'), spec: prio('mid') }),
      existing('low', 'n2', { ...cpu('3'), spec: prio('low') }),
    ],
    pods: [pod('high', { ...cpu('2'), spec: prio('high') })],
    expect: { unschedulable: [], placements: { high: ['n2'] }, victims: ['low'] },
  },
  {
    name: 'a PodDisruptionBudget steers preemption to the unprotected node',
    area: 'DefaultPreemption',
    description:
      "Equal victims on n1 and n2, but n1's is covered by a budget with minAvailable 1 (0 disruptions " +
      'allowed): the node with fewer PDB violations, n2, is chosen.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    objects: {
      priorityClasses: CLASSES,
      podDisruptionBudgets: [{ name: 'guard', matchLabels: { app: 'guarded' }, minAvailable: 1 }],
    },
    existingPods: [
      existing('guarded', 'n1', { ...cpu('3'), labels: { app: 'guarded' }, spec: prio('low') }),
      existing('free', 'n2', { ...cpu('3'), labels: { app: 'free' }, spec: prio('low') }),
    ],
    pods: [pod('high', { ...cpu('2'), spec: prio('high') })],
    expect: { unschedulable: [], placements: { high: ['n2'] }, victims: ['free'] },
  },
  {
    name: "a pod in a budget's disruptedPods takes nothing more from it",
    area: 'DefaultPreemption',
    description:
      "guarded-a (n1) is in the budget's status.disruptedPods (its eviction was admitted), so the " +
      'controller counts only guarded-b healthy and allows 0 disruptions. Evicting guarded-a violates ' +
      'nothing; evicting guarded-b would. n1 wins although its victim has the higher priority.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    objects: {
      priorityClasses: CLASSES,
      podDisruptionBudgets: [
        { name: 'guard', matchLabels: { app: 'guarded' }, minAvailable: 1, disruptedPods: ['guarded-a'] },
      ],
    },
    existingPods: [
      existing('guarded-a', 'n1', { ...cpu('3'), labels: { app: 'guarded' }, spec: prio('lower-mid') }),
      existing('guarded-b', 'n2', { ...cpu('3'), labels: { app: 'guarded' }, spec: prio('low') }),
    ],
    pods: [pod('high', { ...cpu('2'), spec: prio('high') })],
    expect: { unschedulable: [], placements: { high: ['n1'] }, victims: ['guarded-a'] },
  },
  {
    name: 'a PodDisruptionBudget is violated when nothing else helps',
    area: 'DefaultPreemption',
    description:
      'The only victim is covered by a budget that allows no disruption: preemption still evicts it ' +
      '(budgets are respected where possible, not absolutely).',
    orderIndependent: true,
    nodes: [node('n1')],
    objects: {
      priorityClasses: CLASSES,
      podDisruptionBudgets: [{ name: 'guard', matchLabels: { app: 'guarded' }, minAvailable: 1 }],
    },
    existingPods: [existing('guarded', 'n1', { ...cpu('3'), labels: { app: 'guarded' }, spec: prio('low') })],
    pods: [pod('high', { ...cpu('2'), spec: prio('high') })],
    expect: { unschedulable: [], placements: { high: ['n1'] }, victims: ['guarded'] },
  },
  {
    name: 'a smaller sum of victim priorities wins',
    area: 'DefaultPreemption',
    description:
      'n1 must lose two priority-10 pods (three 1.2-CPU pods, one is added back), n2 one priority-10 pod: ' +
      'equal highest priority, so the smaller sum decides: n2.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    objects: { priorityClasses: CLASSES },
    existingPods: [
      existing('a1', 'n1', { ...cpu('1200m'), spec: prio('low') }),
      existing('a2', 'n1', { ...cpu('1200m'), spec: prio('low') }),
      existing('a3', 'n1', { ...cpu('1200m'), spec: prio('low') }),
      existing('b1', 'n2', { ...cpu('3'), spec: prio('low') }),
    ],
    pods: [pod('high', { ...cpu('2'), spec: prio('high') })],
    expect: { unschedulable: [], placements: { high: ['n2'] }, victims: ['b1'] },
  },
  {
    name: 'no preemption for a node the pod cannot use anyway',
    area: 'DefaultPreemption',
    description:
      'The low pod sits on a node with a taint the high pod does not tolerate: evicting it would not make ' +
      'the node fit (the taint is unresolvable), so nothing is evicted and the pod stays Pending.',
    orderIndependent: true,
    nodes: [node('n1', { taints: [taint('dedicated', 'NoSchedule', 'batch')] })],
    objects: { priorityClasses: CLASSES },
    existingPods: [
      existing('low', 'n1', {
        ...cpu('3'),
        spec: { ...prio('low'), tolerations: [toleration('dedicated', 'NoSchedule', 'batch')] },
      }),
    ],
    pods: [pod('high', { ...cpu('2'), spec: prio('high') })],
    expect: { unschedulable: ['high'], victims: [] },
  },
  ...nominationScenarios(),
];

/**
 * A nominated pod holds its node against pods of lower or equal priority in PodTopologySpread and
 * InterPodAffinity too (upstream's RunFilterPluginsWithNominatedPods calls their AddPod). To keep a
 * preemptor nominated, its victim `blocker` holds host port 8080 and a finalizer: preempted, it stays
 * terminating on n1, so `vip` (which needs the port) waits there, nominated, for good.
 */
function nominationScenarios(): Scenario[] {
  const port = { hostPorts: [[8080]] as Array<[number]> };
  const blocker = existing('blocker', 'n1', { ...cpu('100m'), ...port, spec: prio('low') });
  const held = { ...blocker, finalizers: ['nodeload.test/hold'] };
  const vip = (labels: Record<string, string>, spec: object = {}) =>
    pod('vip', { ...cpu('100m'), ...port, labels, spec: { ...prio('high'), ...spec } });
  const antiTo = (labels: Record<string, string>) => ({
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: selector(labels), topologyKey: 'kubernetes.io/hostname' },
        ],
      },
    },
  });
  const base = {
    area: 'Nomination',
    orderIndependent: false,
    compare: 'unschedulable-set' as const,
    nominationDecides: true,
    objects: { priorityClasses: CLASSES },
  };
  return [
    {
      ...base,
      name: "a nominated pod's labels count against a pod's anti-affinity on its node",
      description:
        'vip preempts blocker on n1 and stays nominated (blocker is held). shy (mid) has required ' +
        "anti-affinity to app=vip by hostname: n1's first Filter pass adds vip (priority 1000 ≥ 500), so " +
        'shy fits nowhere, and preempting cannot help (vip is not a victim).',
      nodes: [node('n1')],
      existingPods: [held],
      pods: [
        vip({ app: 'vip' }),
        pod('shy', { ...cpu('100m'), spec: { ...prio('mid'), ...antiTo({ app: 'vip' }) } }),
      ],
      expect: { unschedulable: ['vip', 'shy'], victims: ['blocker'] },
    },
    {
      ...base,
      name: 'a nominated pod counts in its zone for topology spread',
      description:
        'vip (app=web) is nominated to n1 (zone a; blocker held); busy (high) holds the port on n2 (zone b). ' +
        'web (mid, app=web, zone maxSkew 1): on n1 vip makes zone a 1 against 0, skew 2 > 1; n2 fits. Without ' +
        'vip both nodes tie and n1 wins by name.',
      nodes: [node('n1', { labels: { [ZONE]: 'a' } }), node('n2', { labels: { [ZONE]: 'b' } })],
      existingPods: [held, existing('busy', 'n2', { ...cpu('100m'), ...port, spec: prio('high') })],
      pods: [
        vip({ app: 'web' }),
        pod('web', {
          ...cpu('100m'),
          labels: { app: 'web' },
          spec: { ...prio('mid'), topologySpreadConstraints: [spread(ZONE, selector({ app: 'web' }))] },
        }),
      ],
      expect: { unschedulable: ['vip'], placements: { web: ['n2'] }, victims: ['blocker'] },
    },
    {
      ...base,
      name: "a nominated pod's anti-affinity is not seen by a pod with no terms (InterPodAffinity skipped)",
      description:
        "vip (nominated to n1) has anti-affinity to app=shy; shy has no terms and no placed pod's " +
        "anti-affinity selects it, so InterPodAffinity's PreFilter skips and its AddPod never runs: shy " +
        'binds to n1 (upstream keeps this asymmetry; so does nodeload).',
      nodes: [node('n1')],
      existingPods: [held],
      pods: [
        vip({ app: 'vip' }, antiTo({ app: 'shy' })),
        pod('shy', { ...cpu('100m'), labels: { app: 'shy' }, spec: prio('mid') }),
      ],
      expect: { unschedulable: ['vip'], placements: { shy: ['n1'] }, victims: ['blocker'] },
    },
    {
      ...base,
      name: "preemption's dry run keeps InterPodAffinity on after its victim leaves, and so sees a nominee",
      description:
        "guard (lower-mid, 3 CPU) has anti-affinity to app=shy, so shy's PreFilter keeps InterPodAffinity " +
        'on. shy (mid, 1 CPU) fits n1 only without guard; the dry run takes guard away on a copy of the ' +
        "cycle's state, and vip (nominated to n1, anti-affinity to app=shy) still fails shy there: nothing " +
        'is preempted. A fresh PreFilter without guard would skip the plugin and evict guard.',
      nodes: [node('n1')],
      existingPods: [
        held,
        existing('guard', 'n1', { ...cpu('3'), spec: { ...prio('lower-mid'), ...antiTo({ app: 'shy' }) } }),
      ],
      pods: [
        vip({ app: 'vip' }, antiTo({ app: 'shy' })),
        pod('shy', { ...cpu('1'), labels: { app: 'shy' }, spec: prio('mid') }),
      ],
      expect: { unschedulable: ['vip', 'shy'], victims: ['blocker'] },
    },
  ];
}

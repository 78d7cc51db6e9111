// PodTopologySpread (DoNotSchedule): maxSkew over zones, nodes lacking the key, minDomains,
// nodeAffinityPolicy, nodeTaintsPolicy and matchLabelKeys; and the system default constraints
// (ScheduleAnyway), whose selector comes from the Services selecting the pod.
import { cpu, existing, node, pod, pods, selector, spread, taint, ZONE } from '../build.js';
import type { Scenario } from '../types.js';

const web = { app: 'web' };

export const topologySpreadScenarios: Scenario[] = [
  {
    name: 'maxSkew 1 over zones; nodes without the zone label are not candidates',
    area: 'PodTopologySpread',
    description:
      'Zones a/b/c hold 2/1/0 web pods: the next one can only go to zone c (skew 1). n4 has no zone label ' +
      'and is never chosen. Later pods keep the skew at most 1 (checked on the final state).',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [
      node('n1', { labels: { [ZONE]: 'a' } }),
      node('n2', { labels: { [ZONE]: 'b' } }),
      node('n3', { labels: { [ZONE]: 'c' } }),
      node('n4'),
    ],
    existingPods: [
      existing('old-1', 'n1', { labels: web }),
      existing('old-2', 'n1', { labels: web }),
      existing('old-3', 'n2', { labels: web }),
    ],
    pods: pods('web', 4, { labels: web, spec: { topologySpreadConstraints: [spread(ZONE, selector(web))] } }),
    expect: { unschedulable: [], placements: { 'web-1': ['n3'] } },
  },
  {
    name: 'minDomains: fewer domains than minDomains means a global minimum of 0',
    area: 'PodTopologySpread',
    description:
      'Two zones, minDomains 3, maxSkew 1: each zone may hold only one matching pod, so of 4 replicas 2 bind ' +
      '(one per zone) and 2 are Unschedulable.',
    orderIndependent: true,
    compare: 'unschedulable-count',
    nodes: [node('n1', { labels: { [ZONE]: 'a' } }), node('n2', { labels: { [ZONE]: 'b' } })],
    pods: pods('web', 4, {
      labels: web,
      spec: { topologySpreadConstraints: [spread(ZONE, selector(web), { minDomains: 3 })] },
    }),
    expect: { boundCount: 2 },
  },
  {
    name: 'nodeAffinityPolicy Honor: only nodes the pod may use form domains',
    area: 'PodTopologySpread',
    description:
      'Pods select pool=x (zones a, b); zone c (pool=y) is not a domain. With a web pod in a, the first goes ' +
      'to b, the second to a or b: both bind.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [
      node('n1', { labels: { [ZONE]: 'a', pool: 'x' } }),
      node('n2', { labels: { [ZONE]: 'b', pool: 'x' } }),
      node('n3', { labels: { [ZONE]: 'c', pool: 'y' } }),
    ],
    existingPods: [existing('old', 'n1', { labels: web })],
    pods: pods('web', 2, {
      labels: web,
      spec: {
        nodeSelector: { pool: 'x' },
        topologySpreadConstraints: [spread(ZONE, selector(web), { nodeAffinityPolicy: 'Honor' })],
      },
    }),
    expect: { unschedulable: [], placements: { 'web-1': ['n2'] } },
  },
  {
    name: 'nodeAffinityPolicy Ignore: unusable nodes still count as domains',
    area: 'PodTopologySpread',
    description:
      'As above with Ignore: empty zone c keeps the global minimum at 0, so after web-1 goes to b, web-2 fits ' +
      'nowhere it may go. The zone key is run-private (Ignore counts every node in the cluster having it).',
    orderIndependent: false,
    compare: 'unschedulable-set',
    privateKeys: [ZONE],
    nodes: [
      node('n1', { labels: { [ZONE]: 'a', pool: 'x' } }),
      node('n2', { labels: { [ZONE]: 'b', pool: 'x' } }),
      node('n3', { labels: { [ZONE]: 'c', pool: 'y' } }),
    ],
    existingPods: [existing('old', 'n1', { labels: web })],
    pods: pods('web', 2, {
      labels: web,
      spec: {
        nodeSelector: { pool: 'x' },
        topologySpreadConstraints: [spread(ZONE, selector(web), { nodeAffinityPolicy: 'Ignore' })],
      },
    }),
    expect: { unschedulable: ['web-2'], placements: { 'web-1': ['n2'] } },
  },
  {
    name: 'nodeTaintsPolicy Honor: untolerated tainted nodes are not domains',
    area: 'PodTopologySpread',
    description:
      "Zone c's only node is tainted NoSchedule. Honor leaves domains a (1 pod) and b: web-1 → b, web-2 binds too.",
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [
      node('n1', { labels: { [ZONE]: 'a' } }),
      node('n2', { labels: { [ZONE]: 'b' } }),
      node('n3', { labels: { [ZONE]: 'c' }, taints: [taint('dedicated', 'NoSchedule', 'infra')] }),
    ],
    existingPods: [existing('old', 'n1', { labels: web })],
    pods: pods('web', 2, {
      labels: web,
      spec: { topologySpreadConstraints: [spread(ZONE, selector(web), { nodeTaintsPolicy: 'Honor' })] },
    }),
    expect: { unschedulable: [], placements: { 'web-1': ['n2'] } },
  },
  {
    name: 'nodeTaintsPolicy Ignore (default): tainted nodes still count as domains',
    area: 'PodTopologySpread',
    description:
      'Same nodes, default policy: empty zone c keeps the minimum at 0, so web-2 is Unschedulable after web-1 → b.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [
      node('n1', { labels: { [ZONE]: 'a' } }),
      node('n2', { labels: { [ZONE]: 'b' } }),
      node('n3', { labels: { [ZONE]: 'c' }, taints: [taint('dedicated', 'NoSchedule', 'infra')] }),
    ],
    existingPods: [existing('old', 'n1', { labels: web })],
    pods: pods('web', 2, { labels: web, spec: { topologySpreadConstraints: [spread(ZONE, selector(web))] } }),
    expect: { unschedulable: ['web-2'], placements: { 'web-1': ['n2'] } },
  },
  {
    name: 'matchLabelKeys counts only pods of the same revision',
    area: 'PodTopologySpread',
    description:
      'Zone a has 2 old-revision web pods, zone b 1 new-revision. With matchLabelKeys [rev] only rev=new is ' +
      'counted (a 0, b 1), so new-1 must go to zone a; without it, it would have to go to b.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [node('n1', { labels: { [ZONE]: 'a' } }), node('n2', { labels: { [ZONE]: 'b' } })],
    existingPods: [
      existing('old-1', 'n1', { labels: { ...web, rev: 'old' } }),
      existing('old-2', 'n1', { labels: { ...web, rev: 'old' } }),
      existing('new-0', 'n2', { labels: { ...web, rev: 'new' } }),
    ],
    pods: [
      pod('new-1', {
        labels: { ...web, rev: 'new' },
        spec: { topologySpreadConstraints: [spread(ZONE, selector(web), { matchLabelKeys: ['rev'] })] },
      }),
    ],
    expect: { unschedulable: [], placements: { 'new-1': ['n1'] } },
  },
  {
    name: 'only pods of the same namespace are counted',
    area: 'PodTopologySpread',
    description:
      'Zone a holds 3 web pods of another namespace, zone b 1 of ours: ours count a 0, b 1, so web-1 must go ' +
      'to zone a.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    namespaces: [{ name: 'other' }],
    nodes: [node('n1', { labels: { [ZONE]: 'a' } }), node('n2', { labels: { [ZONE]: 'b' } })],
    existingPods: [
      ...[1, 2, 3].map((i) => existing(`foreign-${i}`, 'n1', { namespace: 'other', labels: web })),
      existing('ours', 'n2', { labels: web }),
    ],
    pods: pods('web', 1, { labels: web, spec: { topologySpreadConstraints: [spread(ZONE, selector(web))] } }),
    expect: { unschedulable: [], placements: { 'web-1': ['n1'] } },
  },
  {
    name: 'two constraints: nodes lacking either key are skipped; ScheduleAnyway is soft',
    area: 'PodTopologySpread',
    description:
      'Constraints on zone and rack (DoNotSchedule) plus hostname (ScheduleAnyway, maxSkew 1): n3 has no rack ' +
      'label so it is neither a candidate nor counted; 4 replicas fit n1 and n2 (zones a, b).',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: [
      node('n1', { labels: { [ZONE]: 'a', rack: 'r1' } }),
      node('n2', { labels: { [ZONE]: 'b', rack: 'r2' } }),
      node('n3', { labels: { [ZONE]: 'b' } }),
    ],
    pods: pods('web', 4, {
      labels: web,
      spec: {
        topologySpreadConstraints: [
          spread(ZONE, selector(web)),
          spread('rack', selector(web)),
          spread('kubernetes.io/hostname', selector(web), { whenUnsatisfiable: 'ScheduleAnyway' }),
        ],
      },
    }),
    expect: {
      unschedulable: [],
      placements: Object.fromEntries([1, 2, 3, 4].map((i) => [`web-${i}`, ['n1', 'n2']])),
    },
  },
  {
    name: 'system default spreading: a bare pod behind a Service spreads against the pods the Service selects',
    area: 'PodTopologySpread',
    description:
      'No pod has constraints of its own, so the System defaults apply (hostname maxSkew 3, zone maxSkew 5, ' +
      'ScheduleAnyway) with helper.DefaultSelector: the Service web selects app=web, so the bare web pod ' +
      'spreads against the 3 web pods on n1. Both nodes hold the same requests (3 × 100m vs 300m), so every ' +
      'other score ties: spreading alone sends the pod to n2. A scheduler that gives default constraints ' +
      'only to controller-owned pods ties, and takes n1 by name.',
    orderIndependent: true,
    compare: 'unschedulable-set',
    nodes: [node('n1'), node('n2')],
    objects: { services: [{ name: 'web', selector: web }] },
    existingPods: [
      existing('web-old-1', 'n1', { ...cpu('100m'), labels: web }),
      existing('web-old-2', 'n1', { ...cpu('100m'), labels: web }),
      existing('web-old-3', 'n1', { ...cpu('100m'), labels: web }),
      existing('batch', 'n2', { ...cpu('300m', '192Mi'), labels: { app: 'batch' } }),
    ],
    pods: [pod('web-new', { ...cpu('100m'), labels: web })],
    expect: { unschedulable: [], placements: { 'web-new': ['n2'] } },
  },
];

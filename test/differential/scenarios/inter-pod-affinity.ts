// InterPodAffinity: required affinity / anti-affinity, existing pods' anti-affinity (symmetry), the
// first-pod exception, namespaces / namespaceSelector and matchLabelKeys.
import {
  affinity,
  antiAffinity,
  existing,
  HOSTNAME,
  node,
  pod,
  pods,
  podTerm,
  selector,
  ZONE,
  zonedNodes,
} from '../build.js';
import type { Scenario } from '../types.js';

const web = { app: 'web' };

export const interPodAffinityScenarios: Scenario[] = [
  {
    name: 'anti-affinity on hostname: 5 replicas over 4 nodes',
    area: 'InterPodAffinity',
    description:
      'Each replica refuses a node holding another app=web pod: 4 bind (one per node), 1 is Unschedulable. ' +
      'All are created at once, so which one is left over depends on order: only the count is compared.',
    orderIndependent: true,
    compare: 'unschedulable-count',
    nodes: [node('n1'), node('n2'), node('n3'), node('n4')],
    pods: pods('web', 5, { labels: web, spec: { affinity: antiAffinity(podTerm(HOSTNAME, selector(web))) } }),
    expect: { boundCount: 4 },
  },
  {
    name: 'anti-affinity on zone: one replica per zone',
    area: 'InterPodAffinity',
    description:
      '4 nodes in 2 zones, 3 replicas with zone anti-affinity: 2 bind in different zones, 1 does not.',
    orderIndependent: true,
    compare: 'unschedulable-count',
    nodes: zonedNodes('n', 4, ['a', 'b']),
    pods: pods('db', 3, {
      labels: { app: 'db' },
      spec: { affinity: antiAffinity(podTerm(ZONE, selector({ app: 'db' }))) },
    }),
    expect: { boundCount: 2 },
  },
  {
    name: 'required affinity to existing pods',
    area: 'InterPodAffinity',
    description:
      'A cache pod runs on n2 (zone b): zone affinity allows only zone b (n2, n4), hostname affinity only n2; ' +
      'affinity to a label nobody has (and the pod itself lacks) is Unschedulable.',
    orderIndependent: true,
    nodes: zonedNodes('n', 4, ['a', 'b']),
    existingPods: [existing('cache', 'n2', { labels: { app: 'cache' } })],
    pods: [
      pod('zone-peer', { spec: { affinity: affinity(podTerm(ZONE, selector({ app: 'cache' }))) } }),
      pod('host-peer', { spec: { affinity: affinity(podTerm(HOSTNAME, selector({ app: 'cache' }))) } }),
      pod('no-peer', {
        labels: { app: 'lonely' },
        spec: { affinity: affinity(podTerm(HOSTNAME, selector({ app: 'db' }))) },
      }),
    ],
    expect: {
      unschedulable: ['no-peer'],
      placements: { 'zone-peer': ['n2', 'n4'], 'host-peer': ['n2'] },
    },
  },
  {
    name: 'affinity to itself: the first pod may go anywhere, the rest follow',
    area: 'InterPodAffinity',
    description:
      'When no pod matches the term anywhere and the pod matches its own term, it passes; later replicas must ' +
      'join its zone. The checker verifies they share one zone.',
    orderIndependent: false,
    compare: 'unschedulable-set',
    nodes: zonedNodes('n', 4, ['a', 'b']),
    pods: pods('group', 4, {
      labels: { app: 'group' },
      spec: { affinity: affinity(podTerm(ZONE, selector({ app: 'group' }))) },
    }),
    expect: { unschedulable: [] },
  },
  {
    name: "existing pods' anti-affinity repels incoming pods",
    area: 'InterPodAffinity',
    description:
      'A pod on n1 refuses app=web on its node: incoming web pods (without any affinity of their own) must go to n2.',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    existingPods: [
      existing('guard', 'n1', {
        labels: { app: 'guard' },
        spec: { affinity: antiAffinity(podTerm(HOSTNAME, selector(web))) },
      }),
    ],
    pods: [...pods('web', 2, { labels: web }), pod('api', { labels: { app: 'api' } })],
    expect: { unschedulable: [], placements: { 'web-1': ['n2'], 'web-2': ['n2'], api: ['n1', 'n2'] } },
  },
  {
    name: 'namespaces and namespaceSelector',
    area: 'InterPodAffinity',
    description:
      "Terms look at the pod's own namespace unless namespaces / namespaceSelector say otherwise ({} = all). " +
      'db pods run in team-a (n1) and team-b (n2).',
    orderIndependent: true,
    namespaces: [
      { name: 'team-a', labels: { team: 'a' } },
      { name: 'team-b', labels: { team: 'b' } },
    ],
    nodes: [node('n1'), node('n2'), node('n3')],
    existingPods: [
      existing('db-a', 'n1', { namespace: 'team-a', labels: { app: 'db' } }),
      existing('db-b', 'n2', { namespace: 'team-b', labels: { app: 'db' } }),
    ],
    pods: [
      pod('by-list', {
        spec: { affinity: affinity(podTerm(HOSTNAME, selector({ app: 'db' }), { namespaces: ['team-b'] })) },
      }),
      pod('by-selector', {
        spec: {
          affinity: affinity(
            podTerm(HOSTNAME, selector({ app: 'db' }), { namespaceSelector: selector({ team: 'a' }) }),
          ),
        },
      }),
      pod('anti-everywhere', {
        spec: {
          affinity: antiAffinity(podTerm(HOSTNAME, selector({ app: 'db' }), { namespaceSelector: {} })),
        },
      }),
      pod('own-namespace', { spec: { affinity: affinity(podTerm(HOSTNAME, selector({ app: 'db' }))) } }),
    ],
    expect: {
      unschedulable: ['own-namespace'],
      placements: { 'by-list': ['n2'], 'by-selector': ['n1'], 'anti-everywhere': ['n3'] },
    },
  },
  {
    name: 'matchLabelKeys narrows anti-affinity to the same version',
    area: 'InterPodAffinity',
    description:
      'labelSelector app=web + matchLabelKeys [version]: a v1 pod avoids only nodes with v1 web pods (n1), a ' +
      'v2 pod only those with v2 (n2).',
    orderIndependent: true,
    nodes: [node('n1'), node('n2')],
    existingPods: [
      existing('v1-old', 'n1', { labels: { app: 'web', version: 'v1' } }),
      existing('v2-old', 'n2', { labels: { app: 'web', version: 'v2' } }),
    ],
    pods: [
      pod('v1-new', {
        labels: { app: 'web', version: 'v1' },
        spec: { affinity: antiAffinity(podTerm(HOSTNAME, selector(web), { matchLabelKeys: ['version'] })) },
      }),
      pod('v2-new', {
        labels: { app: 'web', version: 'v2' },
        spec: { affinity: antiAffinity(podTerm(HOSTNAME, selector(web), { matchLabelKeys: ['version'] })) },
      }),
    ],
    expect: { unschedulable: [], placements: { 'v1-new': ['n2'], 'v2-new': ['n1'] } },
  },
  {
    name: 'several affinity terms must be met by the same pods',
    area: 'InterPodAffinity',
    description:
      "Required affinity counts only pods matching ALL terms (kube-scheduler's podMatchesAllAffinityTerms): " +
      'zone app=cache + hostname tier=db is met on n3 (pod w has both labels), not on n1 where cache and db ' +
      'are two different pods.',
    orderIndependent: true,
    nodes: [
      node('n1', { labels: { [ZONE]: 'a' } }),
      node('n2', { labels: { [ZONE]: 'a' } }),
      node('n3', { labels: { [ZONE]: 'b' } }),
    ],
    existingPods: [
      existing('db', 'n1', { labels: { tier: 'db' } }),
      existing('cache', 'n2', { labels: { app: 'cache' } }),
      existing('w', 'n3', { labels: { app: 'cache', tier: 'db' } }),
    ],
    pods: [
      pod('both-terms', {
        spec: {
          affinity: affinity(
            podTerm(ZONE, selector({ app: 'cache' })),
            podTerm(HOSTNAME, selector({ tier: 'db' })),
          ),
        },
      }),
    ],
    expect: { unschedulable: [], placements: { 'both-terms': ['n3'] } },
  },
  {
    name: 'preferred anti-affinity never filters',
    area: 'InterPodAffinity',
    description: 'Three replicas preferring distinct nodes on a single node: all bind.',
    orderIndependent: true,
    nodes: [node('n1')],
    pods: pods('soft', 3, {
      labels: web,
      spec: {
        affinity: {
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 100, podAffinityTerm: podTerm(HOSTNAME, selector(web)) },
            ],
          },
        },
      },
    }),
    expect: { unschedulable: [] },
  },
];

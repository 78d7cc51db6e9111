import { describe, expect, it } from 'vitest';
import { toPodInfo } from '../../cluster/convert.js';
import type { LabelSelector } from '../../cluster/model.js';
import { defaultSelectorOf } from './default-selector.js';
import { type WorkloadDef, workloadSelectors } from './default-selector.testing.js';

const web = { app: 'web' };

/** A pod of namespace `ns` with these labels and, optionally, a controller ownerReference. */
function pod(
  labels: Record<string, string>,
  owner?: [apiVersion: string, kind: string, name: string],
  ns = 'ns',
) {
  return toPodInfo({
    metadata: {
      namespace: ns,
      name: 'p',
      labels,
      ownerReferences: owner
        ? [{ apiVersion: owner[0], kind: owner[1], name: owner[2], controller: true }]
        : undefined,
    },
    spec: { containers: [{ name: 'c' }] },
  });
}

const svc = (name: string, selector?: Record<string, string>, namespace = 'ns'): WorkloadDef => ({
  namespace,
  name,
  ...(selector ? { selector: { matchLabels: selector } } : {}),
});
const ctl = (name: string, selector?: LabelSelector): WorkloadDef => ({
  namespace: 'ns',
  name,
  ...(selector ? { selector } : {}),
});

interface Case {
  name: string;
  pod: ReturnType<typeof pod>;
  services?: WorkloadDef[];
  replicationControllers?: WorkloadDef[];
  replicaSets?: WorkloadDef[];
  statefulSets?: WorkloadDef[];
  want: LabelSelector | undefined;
}

const cases: Case[] = [
  { name: 'a bare pod no Service selects: no default selector', pod: pod(web), want: undefined },
  {
    name: 'a bare pod behind a Service: the Service selector',
    pod: pod({ ...web, v: '1' }),
    services: [svc('web', web)],
    want: { matchLabels: web, matchExpressions: [] },
  },
  {
    name: "Services of another namespace, or that do not select the pod, or without a selector, don't count",
    pod: pod(web),
    services: [svc('other-ns', web, 'elsewhere'), svc('db', { app: 'db' }), svc('external')],
    want: undefined,
  },
  {
    name: 'several Services merge (they all select the pod)',
    pod: pod({ app: 'web', tier: 'front' }),
    services: [
      svc('a', { tier: 'front' }),
      svc('b', { app: 'web' }),
      svc('c', { app: 'web', tier: 'front' }),
    ],
    want: { matchLabels: { app: 'web', tier: 'front' }, matchExpressions: [] },
  },
  {
    name: "a ReplicaSet's pod: every requirement of the ReplicaSet's selector, matchLabels as In",
    pod: pod({ ...web, 'pod-template-hash': 'h1' }, ['apps/v1', 'ReplicaSet', 'web-h1']),
    replicaSets: [
      ctl('web-h1', {
        matchLabels: { app: 'web', 'pod-template-hash': 'h1' },
        matchExpressions: [{ key: 'track', operator: 'DoesNotExist', values: [] }],
      }),
    ],
    services: [svc('web', web)],
    want: {
      matchLabels: web,
      matchExpressions: [
        { key: 'app', operator: 'In', values: ['web'] },
        { key: 'pod-template-hash', operator: 'In', values: ['h1'] },
        { key: 'track', operator: 'DoesNotExist', values: [] },
      ],
    },
  },
  {
    name: "a StatefulSet's pod: its selector",
    pod: pod(web, ['apps/v1', 'StatefulSet', 'db']),
    statefulSets: [ctl('db', { matchLabels: web })],
    want: { matchLabels: {}, matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
  },
  {
    name: "a ReplicationController's pod: its selector map merges with the Services'",
    pod: pod({ app: 'web', rc: 'r' }, ['v1', 'ReplicationController', 'r']),
    replicationControllers: [ctl('r', { matchLabels: { rc: 'r' } })],
    services: [svc('web', web)],
    want: { matchLabels: { app: 'web', rc: 'r' }, matchExpressions: [] },
  },
  {
    name: 'a controller the cache does not hold yet: the Services alone',
    pod: pod(web, ['apps/v1', 'ReplicaSet', 'gone']),
    services: [svc('web', web)],
    want: { matchLabels: web, matchExpressions: [] },
  },
  {
    name: 'a ReplicaSet with a nil selector adds nothing; with {} nothing either',
    pod: pod(web, ['apps/v1', 'ReplicaSet', 'nil']),
    replicaSets: [ctl('nil'), ctl('empty', {})],
    want: undefined,
  },
  {
    name: 'a controller of another apiVersion is not read (upstream matches the GroupVersionKind exactly)',
    pod: pod(web, ['extensions/v1beta1', 'ReplicaSet', 'web']),
    replicaSets: [ctl('web', { matchLabels: web })],
    want: undefined,
  },
  {
    name: 'Jobs and DaemonSets are not among the kinds: only Services select their pods',
    pod: pod(web, ['batch/v1', 'Job', 'web']),
    replicaSets: [ctl('web', { matchLabels: web })],
    want: undefined,
  },
];

describe('defaultSelectorOf (helper.DefaultSelector)', () => {
  for (const c of cases) {
    it(c.name, () => {
      const workloads = workloadSelectors({
        services: c.services ?? [],
        replicationControllers: c.replicationControllers ?? [],
        replicaSets: c.replicaSets ?? [],
        statefulSets: c.statefulSets ?? [],
      });
      expect(defaultSelectorOf(c.pod, workloads)).toEqual(c.want);
    });
  }
});

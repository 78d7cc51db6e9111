/**
 * Preemption's dry run on the cycle's PreFilter state (upstream's SelectVictimsOnNode on state.Clone()):
 * victims leave PodTopologySpread, InterPodAffinity and VolumeRestrictions through their removePod, come
 * back through addPod, and a plugin the cycle's PreFilter skipped stays skipped.
 */
import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../../load/types.js';
import { runCycle } from '../cycle.js';
import { Nominator } from '../framework/nominator.js';
import { runPostFilter } from '../framework/runtime.js';
import { loadsFor, NOW, node, snapshotOf } from '../testing.js';
import { defaultPreemption } from './default-preemption.js';
import { interPodAffinity } from './inter-pod-affinity.js';
import { nodeResourcesFit } from './node-resources-fit.js';
import { container, profileOf, specPod } from './plugin.testing.js';
import { podTopologySpread } from './pod-topology-spread.js';
import { claim, storage } from './volume.testing.js';
import { volumeRestrictions } from './volume-restrictions.js';

const HOST = 'kubernetes.io/hostname';
const zoned = (name: string, zone: string) => node(name, { cpu: '2', labels: { zone, [HOST]: name } });

interface PodSpec {
  priority: number;
  cpu: string;
  labels?: Record<string, string>;
  nodeName?: string;
  spec?: object;
}

function p(name: string, o: PodSpec): PodInfo {
  return specPod(
    name,
    {
      priority: o.priority,
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      containers: [container('c', { cpu: o.cpu })],
      ...o.spec,
    },
    { meta: { labels: o.labels ?? {} }, ...(o.nodeName ? { phase: 'Running' } : {}) },
  );
}

const antiTo = (labels: Record<string, string>) => ({
  affinity: {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { labelSelector: { matchLabels: labels }, topologyKey: HOST },
      ],
    },
  },
});
const spreadZone = (maxSkew: number) => ({
  topologySpreadConstraints: [
    { maxSkew, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: WEB } },
  ],
});
const claimVolume = { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] };
const WEB = { app: 'web' };

interface Case {
  name: string;
  nodes: ReturnType<typeof zoned>[];
  placed: PodInfo[];
  preemptor: PodInfo;
  /** Pods nominated to n1. */
  nominated?: PodInfo[];
  node: string;
  victims?: string[];
}

const cases: Case[] = [
  {
    // The cycle's PreFilter keeps InterPodAffinity on (v's anti-affinity matches p), so the dry run counts
    // the nominee's anti-affinity after taking v away. A fresh PreFilter without v would skip the plugin and
    // preempt v for a node the nominee's anti-affinity still forbids.
    name: "InterPodAffinity skipped by no PreFilter of the cycle stays on: a nominee's anti-affinity blocks",
    nodes: [zoned('n1', 'z1')],
    placed: [
      p('v', { priority: 0, cpu: '2', nodeName: 'n1', labels: { app: 'v' }, spec: antiTo({ app: 'plain' }) }),
    ],
    nominated: [p('vip', { priority: 200, cpu: '100m', labels: WEB, spec: antiTo({ app: 'plain' }) })],
    preemptor: p('plain', { priority: 100, cpu: '1', labels: { app: 'plain' } }),
    node: '',
  },
  {
    name: 'PodTopologySpread: both web pods in z1 must go for skew 1 (removePod, then addPod fails each back)',
    nodes: [zoned('n1', 'z1'), zoned('n2', 'z2')],
    placed: [
      p('w1', { priority: 1, cpu: '100m', nodeName: 'n1', labels: WEB }),
      p('w2', { priority: 0, cpu: '100m', nodeName: 'n1', labels: WEB }),
      p('big', { priority: 1000, cpu: '2', nodeName: 'n2' }),
    ],
    preemptor: p('web', { priority: 100, cpu: '1', labels: WEB, spec: spreadZone(1) }),
    node: 'n1',
    victims: ['w1', 'w2'],
  },
  {
    name: 'PodTopologySpread: with maxSkew 2 the more important web pod is reprieved (addPod counts it again)',
    nodes: [zoned('n1', 'z1'), zoned('n2', 'z2')],
    placed: [
      p('w1', { priority: 1, cpu: '100m', nodeName: 'n1', labels: WEB }),
      p('w2', { priority: 0, cpu: '100m', nodeName: 'n1', labels: WEB }),
      p('w3', { priority: 0, cpu: '100m', nodeName: 'n1', labels: WEB }),
      p('big', { priority: 1000, cpu: '2', nodeName: 'n2' }),
    ],
    preemptor: p('web', { priority: 100, cpu: '1', labels: WEB, spec: spreadZone(2) }),
    node: 'n1',
    victims: ['w2', 'w3'],
  },
  {
    name: 'VolumeRestrictions: the pod holding the ReadWriteOncePod claim is the victim (removePod frees it)',
    nodes: [zoned('n1', 'z1'), zoned('n2', 'z2')],
    placed: [p('holder', { priority: 0, cpu: '100m', nodeName: 'n1', spec: claimVolume })],
    preemptor: p('claimant', { priority: 100, cpu: '1', spec: claimVolume }),
    node: 'n1',
    victims: ['holder'],
  },
];

describe('DefaultPreemption dry run from the cycle’s PreFilter state', () => {
  it.each(cases)('$name', (c) => {
    const profile = profileOf(
      nodeResourcesFit(),
      volumeRestrictions(storage({ claims: [claim('data', { modes: ['ReadWriteOncePod'] })] })),
      podTopologySpread(),
      interPodAffinity(),
      defaultPreemption({}, { random: () => 0 }),
    );
    const nominator = new Nominator();
    for (const n of c.nominated ?? []) nominator.nominate(n, 'n1');
    const snapshot = snapshotOf(c.nodes, c.placed);
    const cycle = runCycle({
      profile,
      pod: c.preemptor,
      snapshot,
      rules: [],
      loads: loadsFor(c.nodes, c.placed),
      loadOptions: DEFAULT_LOAD_OPTIONS,
      nominated: nominator,
      now: NOW,
    });
    expect(cycle.ranked, 'nothing fits before preemption').toEqual([]);
    const r = runPostFilter(profile, cycle.pre, cycle.ctx, cycle.verdicts);
    expect(r?.nominatedNode).toBe(c.node);
    expect((r?.victims?.map((v) => v.name) ?? []).sort()).toEqual(c.victims ?? []);
    // The dry runs worked on forks: the cycle's own state still fails every node as before.
    const again = runPostFilter(profile, cycle.pre, cycle.ctx, cycle.verdicts);
    expect(again?.nominatedNode).toBe(c.node);
  });
});

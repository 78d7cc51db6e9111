import { describe, expect, it } from 'vitest';
import { type PodInfo, podKey } from '../../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../../load/types.js';
import { rulesForPod } from '../../rules/rule.js';
import { runCycle } from '../cycle.js';
import { interPodAffinity } from '../plugins/inter-pod-affinity.js';
import { nodeLoadRules } from '../plugins/node-load-rules.js';
import { nodePorts } from '../plugins/node-ports.js';
import { nodeResourcesFit } from '../plugins/node-resources-fit.js';
import { container, profileOf, specPod } from '../plugins/plugin.testing.js';
import { podTopologySpread } from '../plugins/pod-topology-spread.js';
import { loadsFor, NOW, node, pod, rule, snapshotOf } from '../testing.js';
import { Nominator } from './nominator.js';
import type { Snapshot } from './snapshot.js';

const pending = (name: string, cpu: string, priority: number, extra: Partial<PodInfo> = {}): PodInfo => ({
  ...pod(name, { cpu, priority, labels: { app: 'web' } }),
  ...extra,
});

describe('Nominator', () => {
  it('follows the API for nominations it did not make', () => {
    const n = new Nominator();
    const p = pending('p', '1', 10, { nominatedNodeName: 'n1' });
    n.upsertPod(p);
    expect(n.nodeOf('default/p')).toBe('n1');
    expect([...n.forNode('n1')].map((x) => x.name)).toEqual(['p']);
    n.upsertPod({ ...p, nominatedNodeName: 'n2' });
    expect([n.nodeOf('default/p'), [...n.forNode('n1')]]).toEqual(['n2', []]);
    n.upsertPod({ ...p, nominatedNodeName: '' });
    expect(n.nodeOf('default/p')).toBeUndefined();
    expect(n.size).toBe(0);
  });

  it('keeps its own nomination over updates that predate the patch, then follows the API', () => {
    const n = new Nominator();
    const p = pending('p', '1', 10);
    n.nominate(p, 'n1');
    n.upsertPod({ ...p, resourceVersion: '2' });
    expect(n.nodeOf('default/p')).toBe('n1');
    n.upsertPod({ ...p, nominatedNodeName: 'n1' });
    n.upsertPod({ ...p, nominatedNodeName: '' });
    expect(n.nodeOf('default/p')).toBeUndefined();
  });

  it('forgets a pod once bound, terminating, deleted, or replaced by a pod of another uid', () => {
    const n = new Nominator();
    const p = pending('p', '1', 10, { nominatedNodeName: 'n1' });
    for (const gone of [{ nodeName: 'n1' }, { deleting: true }, { terminal: true }]) {
      n.upsertPod(p);
      n.upsertPod({ ...p, ...gone });
      expect(n.nodeOf('default/p')).toBeUndefined();
    }
    n.nominate(p, 'n1');
    n.upsertPod({ ...p, uid: 'other', nominatedNodeName: '' });
    expect(n.nodeOf('default/p')).toBeUndefined();
    n.nominate(p, 'n1');
    n.delete(podKey(p));
    expect([...n.forNode('n1')]).toEqual([]);
  });
});

/** Everything a what-if must put back. */
function fingerprint(s: Snapshot) {
  return s.list().map((n) => ({
    node: n.name,
    pods: [...n.pods.keys()].sort(),
    requested: { ...n.requested },
    ports: [...n.usedPorts.keys()].sort(),
    affinity: n.podsWithAffinity.size,
    podCount: n.podCount,
  }));
}

describe('Snapshot.edit', () => {
  it('removes and adds pods, then undoes exactly, assumptions included', () => {
    const s = snapshotOf([node('n1'), node('n2')], [pod('a', { nodeName: 'n1', cpu: '1' })]);
    s.assume(pod('b', { cpu: '500m' }), 'n1');
    const before = fingerprint(s);
    const edit = s.edit();
    expect(edit.remove('default/a')).toBe(true);
    expect(edit.remove('default/b')).toBe(true);
    expect(edit.remove('default/none')).toBe(false);
    edit.add('default/b', { ...pod('b', { cpu: '500m' }), nodeName: 'n1' }, 'n1');
    edit.add('default/c', { ...pod('c', { cpu: '2' }), nodeName: 'n2' }, 'n2');
    expect(s.get('n1')?.requested).toEqual({ cpu: 500 });
    expect(s.nodeOf('default/c')).toBe('n2');
    expect(() => edit.add('default/c', pod('c'), 'n1')).toThrow(/already counted/);
    edit.undo();
    expect(fingerprint(s)).toEqual(before);
    expect(s.isAssumed('default/b')).toBe(true);
    expect(s.nodeOf('default/c')).toBeUndefined();
  });
});

describe('Filter with nominated pods (addNominatedPods)', () => {
  const nodes = [node('n1', { cpu: '2' }), node('n2', { cpu: '2' })];
  const nominee = pending('nominee', '1500m', 100);

  function feasible(p: PodInfo, o: { rules?: ReturnType<typeof rule>[]; nominee?: PodInfo } = {}) {
    const nominator = new Nominator();
    nominator.nominate(o.nominee ?? nominee, 'n1');
    const snapshot = snapshotOf(nodes);
    const profile = profileOf(nodePorts(), nodeResourcesFit(), nodeLoadRules());
    const { verdicts, ranked } = runCycle({
      profile,
      pod: p,
      snapshot,
      rules: rulesForPod(o.rules ?? [], p),
      loads: loadsFor(nodes),
      loadOptions: DEFAULT_LOAD_OPTIONS,
      nominated: nominator,
      now: NOW,
    });
    expect(snapshot.get('n1')?.podCount).toBe(0);
    return { nodes: ranked.map((r) => r.node).sort(), verdicts };
  }

  it('holds the room of a pod nominated with priority ≥ the incoming pod’s', () => {
    const { nodes: fit, verdicts } = feasible(pending('low', '1', 10));
    expect(fit).toEqual(['n2']);
    expect(verdicts.find((v) => v.node === 'n1')?.reasons.map((r) => r.reason)).toEqual(['Insufficient cpu']);
    expect(feasible(pending('equal', '1', 100)).nodes).toEqual(['n2']);
  });

  it('does not hold it against a pod of higher priority, nor against the nominee itself', () => {
    expect(feasible(pending('high', '1', 200)).nodes).toEqual(['n1', 'n2']);
    expect(feasible(nominee).nodes).toEqual(['n1', 'n2']);
  });

  it('ignores a nominee that is already counted on a node (assumed or bound)', () => {
    const nominator = new Nominator();
    nominator.nominate(nominee, 'n1');
    const snapshot = snapshotOf(nodes);
    snapshot.assume(nominee, 'n2');
    const { ranked } = runCycle({
      profile: profileOf(nodeResourcesFit()),
      pod: pending('low', '1', 10),
      snapshot,
      rules: [],
      loads: loadsFor(nodes),
      loadOptions: DEFAULT_LOAD_OPTIONS,
      nominated: nominator,
      now: NOW,
    });
    expect(ranked.map((r) => r.node).sort()).toEqual(['n1']);
  });

  it('counts the nominee’s ports and its load against the rules', () => {
    const withPort = (name: string, priority: number) =>
      specPod(name, {
        priority,
        containers: [container('c', { cpu: '100m' }, { ports: [{ containerPort: 80, hostPort: 9000 }] })],
      });
    expect(feasible(withPort('low', 10), { nominee: withPort('nominee', 100) }).nodes).toEqual(['n2']);
    // 500m nominated + 500m = 50% > 40% on n1.
    const r = rule('cap', { maxCPU: 40, maxMemory: 100, podSelector: { matchLabels: { app: 'web' } } });
    const { nodes: fit, verdicts } = feasible(pending('low', '500m', 10), {
      rules: [r],
      nominee: pending('nominee', '500m', 100),
    });
    expect(fit).toEqual(['n2']);
    expect(verdicts.find((v) => v.node === 'n1')?.reasons.map((x) => x.code)).toEqual(['RuleCPUExceeded']);
  });
});

/**
 * PodTopologySpread and InterPodAffinity see a nominated pod through addPod on a fork of their PreFilter
 * state (upstream's AddPod in RunFilterPluginsWithNominatedPods): only on its node, only in the first
 * pass, and only for plugins whose PreFilter did not skip.
 */
describe('Filter with nominated pods: spread and inter-pod affinity (PreFilterExtensions.AddPod)', () => {
  const zoned = [
    node('n1', { labels: { zone: 'z1', 'kubernetes.io/hostname': 'n1' } }),
    node('n2', { labels: { zone: 'z2', 'kubernetes.io/hostname': 'n2' } }),
  ];
  const web = { app: 'web' };
  const term = (labels: Record<string, string>, topologyKey = 'kubernetes.io/hostname') => ({
    labelSelector: { matchLabels: labels },
    topologyKey,
  });
  const withMeta = (name: string, priority: number, labels: Record<string, string>, spec: object = {}) =>
    specPod(name, { priority, containers: [container('c', { cpu: '100m' })], ...spec }, { meta: { labels } });
  const spreadZone = {
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: 'zone',
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: web },
      },
    ],
  };

  function cycle(p: PodInfo, nominee: PodInfo, placed: PodInfo[] = []) {
    const nominator = new Nominator();
    nominator.nominate(nominee, 'n1');
    const profile = profileOf(podTopologySpread(), interPodAffinity());
    const snapshot = snapshotOf(zoned, placed);
    const run = (nominated?: Nominator) =>
      runCycle({
        profile,
        pod: p,
        snapshot,
        rules: [],
        loads: loadsFor(zoned),
        loadOptions: DEFAULT_LOAD_OPTIONS,
        ...(nominated ? { nominated } : {}),
        now: NOW,
      });
    const { verdicts, ranked } = run(nominator);
    const codes = Object.fromEntries(verdicts.map((v) => [v.node, v.reasons.map((r) => r.code).join(',')]));
    // Scores never see nominated pods: the other node scores as it does without any.
    const without = run();
    const n2 = (r: typeof ranked) => r.filter((x) => x.node === 'n2').map((x) => x.score);
    expect(n2(ranked)).toEqual(n2(without.ranked));
    return codes;
  }

  const cases: {
    name: string;
    pod: PodInfo;
    nominee: PodInfo;
    placed?: PodInfo[];
    want: Record<string, string>;
  }[] = [
    {
      name: 'a nominated web pod in z1 makes z1 one too many for a spread web pod (maxSkew 1)',
      pod: withMeta('web', 10, web, spreadZone),
      nominee: withMeta('vip', 100, web),
      want: { n1: 'TopologySpreadSkew', n2: '' },
    },
    {
      // n1 with the nominee: z1 1, z2 1, min 1, skew 1; without it: 0 + 1 − 0. n2 never sees it: 1 + 1 − 0.
      name: 'spread: the minimum rises with the nominee when its domain held it',
      pod: withMeta('web', 10, web, spreadZone),
      nominee: withMeta('vip', 100, web),
      placed: [withMeta('old', 0, web, { nodeName: 'n2' })],
      want: { n1: '', n2: 'TopologySpreadSkew' },
    },
    {
      name: 'spread: a nominee of lower priority holds nothing',
      pod: withMeta('web', 200, web, spreadZone),
      nominee: withMeta('vip', 100, web),
      want: { n1: '', n2: '' },
    },
    {
      name: 'spread: a nominee the selector does not pick, or of another namespace, counts nothing',
      pod: withMeta('web', 10, web, spreadZone),
      nominee: specPod('vip', { priority: 100 }, { meta: { labels: web, namespace: 'other' } }),
      want: { n1: '', n2: '' },
    },
    {
      name: "the pod's anti-affinity to a nominee fails the nominee's node",
      pod: withMeta(
        'shy',
        10,
        {},
        { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(web)] } } },
      ),
      nominee: withMeta('vip', 100, web),
      want: { n1: 'AntiAffinityRulesNotMatch', n2: '' },
    },
    {
      name: 'an affinity only a nominee satisfies fails in the second pass (it may never arrive)',
      pod: withMeta(
        'friend',
        10,
        {},
        { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(web)] } } },
      ),
      nominee: withMeta('vip', 100, web),
      want: { n1: 'AffinityRulesNotMatch', n2: 'AffinityRulesNotMatch' },
    },
    {
      name: "a nominee's anti-affinity is not seen by a pod InterPodAffinity's PreFilter skips (upstream too)",
      pod: withMeta('plain', 10, { app: 'plain' }),
      nominee: withMeta('vip', 100, web, {
        affinity: {
          podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'plain' })] },
        },
      }),
      want: { n1: '', n2: '' },
    },
    {
      name: "…but is once a placed pod's anti-affinity keeps the plugin on",
      pod: withMeta('plain', 10, { app: 'plain' }),
      nominee: withMeta('vip', 100, web, {
        affinity: {
          podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'plain' })] },
        },
      }),
      placed: [
        specPod('far', {
          nodeName: 'n2',
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'plain' }, 'zone')],
            },
          },
        }),
      ],
      want: { n1: 'ExistingAntiAffinityRulesNotMatch', n2: 'ExistingAntiAffinityRulesNotMatch' },
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      expect(cycle(c.pod, c.nominee, c.placed)).toEqual(c.want);
    });
  }
});

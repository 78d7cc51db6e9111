import { describe, expect, it } from 'vitest';
import type { DisruptionBudgetInfo, NodeInfo, NodeMetricsInfo, PodInfo } from '../../cluster/model.js';
import { computeNodeLoad } from '../../load/model.js';
import { DEFAULT_LOAD_OPTIONS, type LoadOptions, type NodeLoad } from '../../load/types.js';
import { rulesForPod } from '../../rules/rule.js';
import type { NodeLoadRule } from '../../rules/types.js';
import { runCycle } from '../cycle.js';
import { Nominator } from '../framework/nominator.js';
import { runPostFilter } from '../framework/runtime.js';
import type { Snapshot } from '../framework/snapshot.js';
import type { PostFilterResult } from '../framework/types.js';
import { loadsFor, NOW, node, pod, rule, snapshotOf } from '../testing.js';
import { type DefaultPreemptionArgs, defaultPreemption } from './default-preemption.js';
import { nodeAffinity } from './node-affinity.js';
import { nodeLoadRules } from './node-load-rules.js';
import { nodePorts } from './node-ports.js';
import { nodeResourcesFit } from './node-resources-fit.js';
import { nodeUnschedulable } from './node-unschedulable.js';
import { container, profileOf, specPod } from './plugin.testing.js';

/** A pod bound to `nodeName` (cpu request, priority, labels, and any PodInfo field). */
function bound(name: string, nodeName: string, cpu: string, priority: number, extra: Partial<PodInfo> = {}) {
  return {
    ...pod(name, { nodeName, cpu, priority, ...(extra.labels ? { labels: extra.labels } : {}) }),
    ...extra,
  };
}

function pending(name: string, cpu: string, priority: number, extra: Partial<PodInfo> = {}): PodInfo {
  return { ...pod(name, { cpu, priority, ...(extra.labels ? { labels: extra.labels } : {}) }), ...extra };
}

function pdb(name: string, app: string, disruptionsAllowed: number): DisruptionBudgetInfo {
  return {
    namespace: 'default',
    name,
    resourceVersion: '1',
    selector: { matchLabels: { app } },
    disruptionsAllowed,
  };
}

interface World {
  nodes: NodeInfo[];
  pods: PodInfo[];
  rules?: NodeLoadRule[];
  pdbs?: DisruptionBudgetInfo[];
  args?: DefaultPreemptionArgs;
  loadOptions?: LoadOptions;
  loads?: ReadonlyMap<string, NodeLoad>;
  nominator?: Nominator;
}

/** What a what-if must leave exactly as it found: every node's pods, sums, ports and load. */
function fingerprint(s: Snapshot) {
  return s.list().map((n) => ({
    node: n.name,
    pods: [...n.pods.keys()].sort(),
    requested: { ...n.requested },
    ports: [...n.usedPorts.keys()].sort(),
    load: n.load,
  }));
}

/** One cycle where nothing fits, then PostFilter; checks the snapshot is untouched by the dry run. */
function preempt(preemptor: PodInfo, w: World): PostFilterResult | undefined {
  const profile = profileOf(
    nodeUnschedulable(),
    nodeAffinity(),
    nodePorts(),
    nodeResourcesFit(),
    nodeLoadRules(),
    defaultPreemption(w.args ?? {}, { disruptionBudgets: () => w.pdbs ?? [], random: () => 0 }),
  );
  const loadOptions = w.loadOptions ?? DEFAULT_LOAD_OPTIONS;
  const snapshot = snapshotOf(w.nodes, w.pods);
  const cycle = runCycle({
    profile,
    pod: preemptor,
    snapshot,
    rules: rulesForPod(w.rules ?? [], preemptor),
    loads: w.loads ?? loadsFor(w.nodes, w.pods, loadOptions),
    loadOptions,
    nominated: w.nominator ?? new Nominator(),
    now: NOW,
  });
  expect(cycle.ranked, 'the preemptor must fit nowhere before preemption').toEqual([]);
  const before = fingerprint(snapshot);
  const result = runPostFilter(profile, cycle.pre, cycle.ctx, cycle.verdicts);
  expect(fingerprint(snapshot)).toEqual(before);
  return result;
}

const n2cpu = (name: string) => node(name, { cpu: '2' });
const app = (a: string) => ({ labels: { app: a } });
const at = (iso: string) => ({ scheduledAt: iso });

interface Case {
  name: string;
  preemptor: PodInfo;
  world: World;
  node?: string;
  victims?: string[];
  pdbViolations?: number;
  message?: string;
  explanation?: RegExp;
}

const web = rule('web', { maxCPU: 100, allowedNodes: ['n2'], podSelector: { matchLabels: { app: 'web' } } });
const halfCpu = rule('half', { maxCPU: 50, maxMemory: 100, podSelector: { matchLabels: { app: 'web' } } });

const cases: Case[] = [
  {
    name: 'fewest victims: one pod on n2 rather than two on n1 (smaller sum of priorities)',
    preemptor: pending('p', '2', 100),
    world: {
      nodes: [n2cpu('n1'), n2cpu('n2')],
      pods: [bound('a1', 'n1', '1', 1), bound('a2', 'n1', '1', 1), bound('b1', 'n2', '2', 1)],
    },
    node: 'n2',
    victims: ['b1'],
    pdbViolations: 0,
    explanation: /^preempting 1 pod\(s\) on node n2: default\/b1 \(priority 1\)\.$/,
  },
  {
    name: 'lowest highest-victim priority wins over fewer victims',
    preemptor: pending('p', '2', 100),
    world: {
      nodes: [n2cpu('n1'), n2cpu('n2')],
      pods: [bound('a', 'n1', '2', 50), bound('b1', 'n2', '1', 10), bound('b2', 'n2', '1', 10)],
    },
    node: 'n2',
    victims: ['b1', 'b2'],
  },
  {
    name: 'more important pods are reprieved first: only the lowest priority goes',
    preemptor: pending('p', '1', 100),
    world: { nodes: [n2cpu('n1')], pods: [bound('hi', 'n1', '1', 50), bound('lo', 'n1', '1', 1)] },
    node: 'n1',
    victims: ['lo'],
  },
  {
    name: 'ties go to the node whose victim started latest',
    preemptor: pending('p', '2', 100),
    world: {
      nodes: [n2cpu('n1'), n2cpu('n2')],
      pods: [
        bound('old', 'n1', '2', 1, at('2026-11-29T10:00:00Z')),
        bound('young', 'n2', '2', 1, at('2026-11-29T11:30:00Z')),
      ],
    },
    node: 'n2',
    victims: ['young'],
  },
  {
    name: 'a PodDisruptionBudget is respected where possible (a higher-priority victim instead)',
    preemptor: pending('p', '2', 100),
    world: {
      nodes: [n2cpu('n1'), n2cpu('n2')],
      pods: [bound('a', 'n1', '2', 1, app('a')), bound('b', 'n2', '2', 5, app('b'))],
      pdbs: [pdb('guard-a', 'a', 0)],
    },
    node: 'n2',
    victims: ['b'],
    pdbViolations: 0,
  },
  {
    name: 'a PodDisruptionBudget is violated when nothing else helps, and says so',
    preemptor: pending('p', '2', 100),
    world: {
      nodes: [n2cpu('n1')],
      pods: [bound('a', 'n1', '2', 1, app('a'))],
      pdbs: [pdb('guard-a', 'a', 0)],
    },
    node: 'n1',
    victims: ['a'],
    pdbViolations: 1,
    explanation: /violating 1 PodDisruptionBudget/,
  },
  {
    name: 'on one node, PDB-protected victims are reprieved before the others',
    preemptor: pending('p', '1', 100),
    world: {
      nodes: [n2cpu('n1')],
      pods: [bound('a', 'n1', '1', 1, app('a')), bound('b', 'n1', '1', 2, app('b'))],
      pdbs: [pdb('guard-a', 'a', 0)],
    },
    node: 'n1',
    victims: ['b'],
    pdbViolations: 0,
  },
  {
    name: 'a budget with disruptions left does not protect',
    preemptor: pending('p', '1', 100),
    world: {
      nodes: [n2cpu('n1')],
      pods: [bound('a', 'n1', '1', 1, app('a')), bound('b', 'n1', '1', 2, app('b'))],
      pdbs: [pdb('guard-a', 'a', 1)],
    },
    node: 'n1',
    victims: ['a'],
  },
  {
    name: 'preemptionPolicy Never: not eligible, the nomination is left alone',
    preemptor: pending('p', '2', 100, { preemptionPolicy: 'Never' }),
    world: { nodes: [n2cpu('n1')], pods: [bound('a', 'n1', '2', 1)] },
    message: 'preemption: not eligible due to preemptionPolicy=Never.',
  },
  {
    name: 'nothing of lower priority: no victims',
    preemptor: pending('p', '2', 100),
    world: { nodes: [n2cpu('n1')], pods: [bound('peer', 'n1', '2', 100)] },
    node: '',
    message: 'preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
  },
  {
    name: 'a node the rules forbid is never chosen, however cheap its victims',
    preemptor: pending('p', '2', 100, app('web')),
    world: {
      nodes: [n2cpu('n1'), n2cpu('n2')],
      pods: [bound('cheap', 'n1', '2', 1), bound('dear', 'n2', '2', 50)],
      rules: [web],
    },
    node: 'n2',
    victims: ['dear'],
  },
  {
    name: 'a forbidden node does not count as a candidate at all',
    preemptor: pending('p', '2', 100, app('web')),
    world: {
      nodes: [n2cpu('n1'), n2cpu('n2')],
      pods: [bound('cheap', 'n1', '2', 1), bound('peer', 'n2', '2', 100)],
      rules: [web],
    },
    node: '',
    message:
      'preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.',
  },
  {
    name: 'a load rule in requests mode is resolved by evicting, keeping what still fits under it',
    preemptor: pending('p', '1', 100, app('web')),
    world: {
      nodes: [node('n1', { cpu: '4' })],
      // 2 cpu of 4 = 50%; with p 75% > 50%. Without c: 50% with p, at the threshold: fits.
      pods: [bound('a', 'n1', '1', 2), bound('c', 'n1', '1', 1)],
      rules: [halfCpu],
    },
    node: 'n1',
    victims: ['c'],
  },
  {
    name: 'a victim pod on a hostPort makes room for the port',
    preemptor: specPodWithPort('p', 100),
    world: { nodes: [n2cpu('n1')], pods: [{ ...specPodWithPort('a', 1), nodeName: 'n1', phase: 'Running' }] },
    node: 'n1',
    victims: ['a'],
  },
  {
    name: 'the dry run stops at minCandidateNodesAbsolute candidates (from the offset)',
    preemptor: pending('p', '2', 100),
    world: {
      nodes: [n2cpu('n1'), n2cpu('n2'), n2cpu('n3')],
      pods: [bound('a', 'n1', '2', 50), bound('b', 'n2', '2', 1), bound('c', 'n3', '2', 1)],
      args: { minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 1 },
    },
    node: 'n1',
    victims: ['a'],
  },
  {
    name: 'without the bound, every potential node is a candidate',
    preemptor: pending('p', '2', 100),
    world: {
      nodes: [n2cpu('n1'), n2cpu('n2'), n2cpu('n3')],
      pods: [bound('a', 'n1', '2', 50), bound('b', 'n2', '2', 1), bound('c', 'n3', '2', 1)],
    },
    node: 'n2',
    victims: ['b'],
  },
  {
    name: 'already nominated with a victim still terminating: wait, nominate nothing new',
    preemptor: pending('p', '2', 100, { nominatedNodeName: 'n1' }),
    world: {
      nodes: [n2cpu('n1')],
      pods: [bound('going', 'n1', '2', 1, { deleting: true, terminatingByPreemption: true })],
    },
    message: 'preemption: not eligible due to a terminating pod on the nominated node.',
  },
  {
    // upstream's podTerminatingByPreemption: only a pod deleted with DisruptionTarget=PreemptionByScheduler.
    name: 'nominated, and a lower-priority pod there is deleted by something else (a rollout): preempt again',
    preemptor: pending('p', '2', 100, { nominatedNodeName: 'n1' }),
    world: { nodes: [n2cpu('n1')], pods: [bound('rolled', 'n1', '2', 1, { deleting: true })] },
    node: 'n1',
    victims: ['rolled'],
  },
];

function specPodWithPort(name: string, priority: number): PodInfo {
  return specPod(name, {
    priority,
    containers: [container('c', { cpu: '100m' }, { ports: [{ containerPort: 80, hostPort: 8080 }] })],
  });
}

describe('DefaultPreemption', () => {
  it.each(cases)('$name', (c) => {
    const r = preempt(c.preemptor, c.world);
    expect(r?.nominatedNode).toBe(c.node);
    if (c.victims) expect(r?.victims?.map((v) => v.name)).toEqual(c.victims);
    else expect(r?.victims).toBeUndefined();
    if (c.pdbViolations !== undefined) expect(r?.pdbViolations).toBe(c.pdbViolations);
    expect(r?.message).toBe(c.message);
    if (c.explanation) expect(r?.explanation).toMatch(c.explanation);
  });

  it('a load rule on measured load is not resolvable by evicting, and the explanation says why', () => {
    const loadOptions: LoadOptions = { ...DEFAULT_LOAD_OPTIONS, metricsServed: true };
    const n1 = node('n1', { cpu: '4' });
    const pods = [bound('a', 'n1', '1', 2), bound('c', 'n1', '1', 1)];
    const metrics: NodeMetricsInfo = {
      name: 'n1',
      timestamp: new Date(NOW - 10_000).toISOString(),
      windowSeconds: 30,
      usage: { cpuMilli: 2000, memoryBytes: 2 ** 30 },
    };
    const load = computeNodeLoad({ node: n1, pods, metrics, now: NOW, options: loadOptions });
    expect(load.source).toBe('metrics');
    const r = preempt(pending('p', '1', 100, app('web')), {
      nodes: [n1],
      pods,
      rules: [halfCpu],
      loadOptions,
      loads: new Map([['n1', load]]),
    });
    expect(r?.nominatedNode).toBe('');
    expect(r?.message).toBe(
      'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    );
    expect(r?.explanation).toMatch(/1 node\(s\) not considered: a rule's load there is measured/);
  });

  it('rejects bad args as kube-scheduler validates them', () => {
    expect(() => defaultPreemption({ minCandidateNodesPercentage: 101 })).toThrow(/\[0, 100\]/);
    expect(() => defaultPreemption({ minCandidateNodesAbsolute: -1 })).toThrow(/non-negative/);
    expect(() => defaultPreemption({ minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0 })).toThrow(
      /both be 0/,
    );
  });
});

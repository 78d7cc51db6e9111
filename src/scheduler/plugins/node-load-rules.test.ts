import { describe, expect, it } from 'vitest';
import type { NodeInfo, PodInfo } from '../../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../../load/types.js';
import type { NodeLoadRule } from '../../rules/types.js';
import { loadsFor, node, pod, rule } from '../testing.js';
import { placedLoadOf } from './load-after.js';
import { nodeLoadRules } from './node-load-rules.js';
import { reasonsOf, verdictOn } from './plugin.testing.js';
import { plainRuleCheck } from './verdict-figures.js';

interface Case {
  name: string;
  node: NodeInfo;
  pod: PodInfo;
  bound?: PodInfo[];
  rules: NodeLoadRule[];
  want: string[];
}

const cases: Case[] = [
  { name: 'no rule covers the pod', node: node('n2'), pod: pod('p', { cpu: '3' }), rules: [], want: [] },
  {
    name: 'a rule of another namespace does not cover the pod',
    node: node('n2'),
    pod: pod('p'),
    rules: [rule('web', { allowedNodes: ['n1'] }, 'other')],
    want: [],
  },
  {
    name: 'a rule whose podSelector does not match does not cover the pod',
    node: node('n2'),
    pod: pod('p', { labels: { app: 'api' } }),
    rules: [rule('web', { allowedNodes: ['n1'], podSelector: { matchLabels: { app: 'web' } } })],
    want: [],
  },
  {
    name: 'node outside allowedNodes',
    node: node('n2'),
    pod: pod('p'),
    rules: [rule('web', { allowedNodes: ['n1'] })],
    want: ['node(s) not allowed by rule web'],
  },
  {
    name: 'rule nodeSelector mismatch counts as not allowed',
    node: node('n', { labels: { pool: 'b' } }),
    pod: pod('p'),
    rules: [rule('web', { nodeSelector: { matchLabels: { pool: 'a' } } })],
    want: ['node(s) not allowed by rule web'],
  },
  {
    name: 'cpu after placement over the threshold',
    node: node('n', { cpu: '4' }),
    bound: [pod('b', { nodeName: 'n', cpu: '3' })],
    pod: pod('p', { cpu: '300m' }),
    rules: [rule('web', { maxCPU: 80 })],
    want: ['node(s) exceed rule web cpu 80%'],
  },
  {
    name: 'exactly at the threshold is within',
    node: node('n', { cpu: '4' }),
    bound: [pod('b', { nodeName: 'n', cpu: '3' })],
    pod: pod('p', { cpu: '200m' }),
    rules: [rule('web', { maxCPU: 80 })],
    want: [],
  },
  {
    name: 'memory over',
    node: node('n', { memory: '4Gi' }),
    pod: pod('p', { memory: '3584Mi' }),
    rules: [rule('db', { maxMemory: 75 })],
    want: ['node(s) exceed rule db memory 75%'],
  },
  {
    name: 'every covering rule is checked, in name order',
    node: node('n2', { cpu: '1' }),
    pod: pod('p', { cpu: '900m' }),
    rules: [rule('b-rule', { maxCPU: 50 }), rule('a-rule', { allowedNodes: ['n1'] })],
    want: [
      'node(s) not allowed by rule a-rule',
      'node(s) exceed rule a-rule cpu 80%',
      'node(s) exceed rule b-rule cpu 50%',
    ],
  },
  {
    name: 'DaemonSet pods bypass load thresholds',
    node: node('n', { cpu: '4' }),
    bound: [pod('b', { nodeName: 'n', cpu: '3900m' })],
    pod: pod('p', { cpu: '100m', daemonSet: true }),
    rules: [rule('web', { maxCPU: 50 })],
    want: [],
  },
  {
    name: 'a pod only naming a DaemonSet owner (not vouched for by the webhook) is held to thresholds',
    node: node('n', { cpu: '4' }),
    bound: [pod('b', { nodeName: 'n', cpu: '3900m' })],
    pod: pod('p', { cpu: '100m', claimsDaemonSet: true }),
    rules: [rule('web', { maxCPU: 50 })],
    want: ['node(s) exceed rule web cpu 50%'],
  },
  {
    name: 'DaemonSet pods still respect allowedNodes',
    node: node('n2'),
    pod: pod('p', { daemonSet: true }),
    rules: [rule('web', { allowedNodes: ['n1'] })],
    want: ['node(s) not allowed by rule web'],
  },
];

describe('NodeLoadRules', () => {
  it.each(cases)('$name', (c) => {
    const v = verdictOn(nodeLoadRules(), c.pod, c.node, { pods: c.bound ?? [], rules: c.rules });
    expect(reasonsOf(v)).toEqual(c.want);
    expect(v.reasons.every((r) => r.plugin === 'NodeLoadRules' && r.rule !== undefined)).toBe(true);
  });

  it('records the numbers behind a rule verdict', () => {
    const v = verdictOn(
      nodeLoadRules(),
      pod('p', { cpu: '1', memory: '2Gi' }),
      node('n', { cpu: '4', memory: '8Gi' }),
      {
        pods: [pod('b', { nodeName: 'n', cpu: '2', memory: '2Gi' })],
        rules: [rule('web', { maxCPU: 70, maxMemory: 60 })],
      },
    );
    expect(v.load).toMatchObject({
      source: 'requests',
      cpuPercent: 50,
      cpuPercentAfter: 75,
      memoryPercent: 25,
      memoryPercentAfter: 50,
      requestedCpuMilli: 2000,
      allocatableCpuMilli: 4000,
      podCount: 1,
    });
    expect(v.rules.map(plainRuleCheck)).toEqual([
      {
        rule: 'web',
        namespace: 'default',
        allowed: true,
        bypassed: false,
        maxCPU: 70,
        maxMemory: 60,
        cpuMargin: -5,
        memoryMargin: 10,
      },
    ]);
    expect(v.reasons).toEqual([
      {
        plugin: 'NodeLoadRules',
        code: 'RuleCPUExceeded',
        reason: 'node(s) exceed rule web cpu 70%',
        detail: 'rule web: cpu 75% > maxCPU 70% with this pod',
        rule: 'web',
      },
    ]);
  });

  it('serialises its checks as the plain figures, with the burst check once one is set', () => {
    const v = verdictOn(nodeLoadRules(), pod('p', { cpu: '3' }), node('n'), {
      rules: [rule('web', { maxCPU: 70, maxMemory: 60 })],
    });
    const check = v.rules[0];
    if (!check) throw new Error('no rule check');
    const plain = plainRuleCheck(check);
    expect(Object.keys(plain)).toHaveLength(8);
    expect(plain).toMatchObject({ rule: 'web', maxCPU: 70, cpuMargin: -5, memoryMargin: 60 });
    expect(JSON.parse(JSON.stringify(check))).toEqual(plain);
    check.burst = { placements: 1, maxPlacements: 3, windowSeconds: 10 };
    expect(JSON.parse(JSON.stringify(v.rules))).toEqual([{ ...plain, burst: check.burst }]);
  });

  it("builds the verdict's placed load once, on first read, with withPod's figures", () => {
    const v = verdictOn(
      nodeLoadRules(),
      pod('p', { cpu: '1', memory: '1Gi' }),
      node('n', { cpu: '4', memory: '8Gi' }),
    );
    const placed = placedLoadOf(v.load);
    expect(placed).toBeDefined();
    expect(placedLoadOf(v.load)).toBe(placed);
    expect([placed?.cpuPercent, placed?.memoryPercent, placed?.podCount]).toEqual([25, 12.5, 1]);
    expect([v.load?.cpuPercentAfter, v.load?.memoryPercentAfter]).toEqual([25, 12.5]);
  });

  it('marks a disallowed node unresolvable, a load breach not (load can drop)', () => {
    const v = verdictOn(nodeLoadRules(), pod('p', { cpu: '4' }), node('n2'), {
      rules: [rule('web', { allowedNodes: ['n1'], maxCPU: 50 })],
    });
    expect(v.reasons.map((r) => [r.code, r.unresolvable])).toEqual([
      ['RuleNotAllowed', true],
      ['RuleCPUExceeded', undefined],
    ]);
    expect(v.rules[0]).toMatchObject({ allowed: false });
  });

  it('shows the load figures even without rules, and marks DaemonSet checks bypassed', () => {
    const plain = verdictOn(nodeLoadRules(), pod('p', { cpu: '1' }), node('n'));
    expect(plain.load).toMatchObject({ cpuPercent: 0, cpuPercentAfter: 25 });
    expect(plain.rules).toEqual([]);
    const ds = verdictOn(nodeLoadRules(), pod('p', { cpu: '1', daemonSet: true }), node('n'), {
      rules: [rule('web', { maxCPU: 10 })],
    });
    expect(ds.rules[0]).toMatchObject({ bypassed: true, cpuMargin: -15 });
    expect(ds.feasible).toBe(true);
  });

  it('fails a node without a load figure while a rule applies, and passes it without rules', () => {
    const covered = verdictOn(nodeLoadRules(), pod('p'), node('n'), {
      rules: [rule('web')],
      loads: new Map(),
    });
    expect(covered.reasons.map((r) => r.code)).toEqual(['NoLoad']);
    expect(verdictOn(nodeLoadRules(), pod('p'), node('n'), { loads: new Map() }).feasible).toBe(true);
  });

  it('fails closed without fresh metrics when the policy says so', () => {
    const options = { ...DEFAULT_LOAD_OPTIONS, metricsServed: true, stalePolicy: 'fail-closed' as const };
    const n = node('n');
    const v = verdictOn(nodeLoadRules(), pod('p'), n, {
      rules: [rule('web')],
      loads: loadsFor([n], [], options),
      loadOptions: options,
    });
    expect(v.reasons).toEqual([
      expect.objectContaining({
        code: 'RuleLoadUnavailable',
        reason: 'node(s) have no fresh load metrics for rule web',
        rule: 'web',
      }),
    ]);
    expect(v.load).toMatchObject({ unavailable: true, metricsStale: true });
    // Fail-open falls back to requests.
    const open = { ...options, stalePolicy: 'fail-open' as const };
    expect(
      verdictOn(nodeLoadRules(), pod('p'), n, {
        rules: [rule('web')],
        loads: loadsFor([n], [], open),
        loadOptions: open,
      }).feasible,
    ).toBe(true);
  });
});

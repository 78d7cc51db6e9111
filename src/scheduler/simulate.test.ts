import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../load/types.js';
import type { NodeLoadRule } from '../rules/types.js';
import { simulateRule } from './simulate.js';
import { decide, defaultProfile, loadsFor, NOW, node, pod, rule, snapshotOf } from './testing.js';

// n1: 50% cpu, n2: 87.5% cpu, n3: idle but labelled pool=b.
const nodes = [
  node('n1', { cpu: '4' }),
  node('n2', { cpu: '4' }),
  node('n3', { cpu: '4', labels: { pool: 'b' } }),
];
const running = [
  pod('web-a', { nodeName: 'n1', cpu: '2', labels: { app: 'web' } }),
  pod('web-b', { nodeName: 'n2', cpu: '3500m', labels: { app: 'web' } }),
  pod('api-a', { nodeName: 'n2', cpu: '0', labels: { app: 'api' } }),
  pod('ds-a', { nodeName: 'n2', labels: { app: 'web' }, daemonSet: true }),
];
const loads = loadsFor(nodes, running);
const webSelector = { matchLabels: { app: 'web' } };

function simulate(next: NodeLoadRule, current: NodeLoadRule[], pending: PodInfo[]) {
  return simulateRule({
    rule: next,
    profile: defaultProfile(),
    snapshot: snapshotOf(nodes, running),
    loads,
    pendingPods: pending,
    rules: current,
    loadOptions: DEFAULT_LOAD_OPTIONS,
    now: NOW,
  });
}

describe('simulateRule', () => {
  it('reports nodes leaving and entering the eligible set', () => {
    const before = rule('web', { maxCPU: 90, podSelector: webSelector, allowedNodes: ['n1', 'n2'] });
    const after = rule('web', { maxCPU: 60, podSelector: webSelector });
    const r = simulate(after, [before], []);
    expect(r.nodesBecomingEligible).toEqual(['n3']);
    expect(r.nodesBecomingIneligible).toEqual([{ node: 'n2', reasons: ['cpu 87.5% > maxCPU 60%'] }]);
  });

  it('treats a new rule as a change from no constraint', () => {
    const r = simulate(
      rule('web', { podSelector: webSelector, nodeSelector: { matchLabels: { pool: 'b' } } }),
      [],
      [],
    );
    expect(r.nodesBecomingEligible).toEqual([]);
    expect(r.nodesBecomingIneligible.map((c) => c.node)).toEqual(['n1', 'n2']);
  });

  it('finds pending pods whose fate changes, and agrees with the filter', () => {
    const pending = [
      pod('web-new', { cpu: '1', labels: { app: 'web' } }),
      pod('api-new', { cpu: '1', labels: { app: 'api' } }),
      pod('web-big', { cpu: '3500m', labels: { app: 'web' } }),
    ];
    const before = rule('web', { maxCPU: 80, podSelector: webSelector, allowedNodes: ['n1', 'n2'] });
    const after = rule('web', { maxCPU: 80, podSelector: webSelector, allowedNodes: ['n3'] });
    const r = simulate(after, [before], pending);
    // web-big fits nowhere before (too big for n1 and n2) nor after (n3 would reach 87.5% > 80%).
    expect(r.pendingPodsBecomingSchedulable).toEqual([]);
    // web-new fit n1 before; now only n3 is allowed, and it fits there: unchanged.
    expect(r.pendingPodsBecomingUnschedulable).toEqual([]);

    const tighter = rule('web', { maxCPU: 20, podSelector: webSelector, allowedNodes: ['n1', 'n3'] });
    const r2 = simulate(tighter, [before], pending);
    expect(r2.pendingPodsBecomingUnschedulable).toEqual([
      {
        namespace: 'default',
        pod: 'web-new',
        // n2 is full (resources fail first, as in kube-scheduler); n1 and n3 would exceed 20%.
        message: '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) exceed rule web cpu 20%.',
      },
    ]);
    // A scheduling cycle with the new rule set says the same.
    expect(decide(pending[0] as PodInfo, { nodes, pods: running, rules: [tighter] }).ranked).toEqual([]);

    const looser = rule('web', { maxCPU: 95, podSelector: webSelector });
    const r3 = simulate(looser, [before], pending);
    expect(r3.pendingPodsBecomingSchedulable).toEqual([{ namespace: 'default', pod: 'web-big', node: 'n3' }]);
  });

  it('lists covered running pods on nodes that would break the rule, DaemonSet pods aside', () => {
    const r = simulate(rule('web', { maxCPU: 70, podSelector: webSelector }), [], []);
    expect(r.runningPodsBreaching).toEqual([
      { namespace: 'default', pod: 'web-b', node: 'n2', reasons: ['cpu 87.5% > maxCPU 70%'] },
    ]);
  });
});

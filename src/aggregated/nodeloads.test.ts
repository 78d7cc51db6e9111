import { describe, expect, it } from 'vitest';
import {
  decodeContinue,
  encodeContinue,
  matchesFilter,
  type NodeLoadObject,
  nodeLoadList,
  nodeLoadObject,
  nodeLoadSummary,
  roundPercent,
  ruleEligibility,
  sameContent,
} from './nodeloads.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { loadOf, nodeInfo, rule } from './testing.js';

const ALL = { labels: [], fields: [] };

function object(
  name: string,
  pods: { cpu?: string; memory?: string }[] = [],
  labels: Record<string, string> = {},
) {
  const node = nodeInfo(name, { labels });
  return nodeLoadObject(node, loadOf(node, pods), [], '7');
}

describe('nodeLoadObject', () => {
  it('carries the load figures as quantities, percents rounded to two decimals', () => {
    const node = nodeInfo('n1', { cpu: '3', memory: '8Gi', labels: { zone: 'a' } });
    const load = loadOf(node, [{ cpu: '1', memory: '1Gi' }, { cpu: '250m' }]);
    const obj = nodeLoadObject(node, load, [], '42');
    expect(obj).toMatchObject({
      apiVersion: 'nodeload.example.com/v1alpha1',
      kind: 'NodeLoad',
      metadata: {
        name: 'n1',
        resourceVersion: '42',
        creationTimestamp: '2026-11-29T10:00:00Z',
        labels: { zone: 'a' },
      },
      status: {
        capacity: { cpu: '3', memory: '8Gi', pods: '110' },
        allocatable: { cpu: '3', memory: '8Gi', pods: '110' },
        requested: { cpu: '1250m', memory: '1Gi' },
        effective: { cpu: '1250m', memory: '1Gi' },
        cpuPercent: 41.67,
        memoryPercent: 12.5,
        source: 'requests',
        pods: 2,
        metricsStale: false,
        unavailable: false,
      },
    });
    expect(obj.status.cpuPercent).toBe(roundPercent(load.cpuPercent));
    expect(obj.status.usage).toBeUndefined();
    expect(obj.status.window).toBeUndefined();
  });

  it('leaves labels out for a node without any', () => {
    expect(object('bare').metadata.labels).toBeUndefined();
  });
});

describe('ruleEligibility', () => {
  const node = nodeInfo('n1', { labels: { zone: 'a' } });
  const load = loadOf(node, [{ cpu: '3500m' }]); // 87.5% cpu
  it.each([
    ['default thresholds (80%)', rule('team', 'r1'), false, ['cpu 87.5% > maxCPU 80%']],
    ['a looser CPU limit', rule('team', 'r2', { maxCPU: 90 }), true, []],
    [
      'a node set without the node',
      rule('team', 'r3', { maxCPU: 95, allowedNodes: ['other'] }),
      false,
      ['not in allowedNodes'],
    ],
    [
      'a nodeSelector it does not match',
      rule('team', 'r4', { maxCPU: 95, nodeSelector: { matchLabels: { zone: 'b' } } }),
      false,
      ['node labels do not match nodeSelector'],
    ],
  ])('%s', (_what, r, eligible, reasons) => {
    const got = ruleEligibility(node, load, [r]);
    expect(got.eligibleRules).toEqual(eligible ? [{ namespace: 'team', name: r.name }] : []);
    expect(got.ineligibleRules).toEqual(eligible ? [] : [{ namespace: 'team', name: r.name, reasons }]);
  });

  it('sorts rules by namespace, then name', () => {
    const got = ruleEligibility(node, load, [
      rule('b', 'x', { maxCPU: 99 }),
      rule('a', 'y', { maxCPU: 99 }),
      rule('a', 'x', { maxCPU: 99 }),
    ]);
    expect(got.eligibleRules.map((r) => `${r.namespace}/${r.name}`)).toEqual(['a/x', 'a/y', 'b/x']);
  });
});

describe('sameContent', () => {
  it('ignores only the resourceVersion', () => {
    const a = object('n1');
    expect(sameContent(a, { ...a, metadata: { ...a.metadata, resourceVersion: '8' } })).toBe(true);
    expect(sameContent(a, object('n1', [{ cpu: '1' }]))).toBe(false);
  });
});

describe('nodeLoadList', () => {
  const objects = ['c', 'a', 'd', 'b'].map((n) => object(n, [], { zone: n < 'c' ? 'west' : 'east' }));

  it('lists every object sorted by name, with the store resourceVersion', () => {
    const list = nodeLoadList(objects, ALL, '99');
    expect(list.kind).toBe('NodeLoadList');
    expect(list.metadata).toEqual({ resourceVersion: '99' });
    expect(list.items.map((o) => o.metadata.name)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('filters by labels and metadata.name', () => {
    const byLabel = nodeLoadList(objects, { labels: parseLabelSelector('zone=east'), fields: [] }, '1');
    expect(byLabel.items.map((o) => o.metadata.name)).toEqual(['c', 'd']);
    const byName = nodeLoadList(objects, { labels: [], fields: parseFieldSelector('metadata.name=b') }, '1');
    expect(byName.items.map((o) => o.metadata.name)).toEqual(['b']);
  });

  it('pages with limit and continue until nothing remains', () => {
    const first = nodeLoadList(objects, ALL, '5', { limit: 3 });
    expect(first.items.map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(first.metadata.remainingItemCount).toBe(1);
    expect(first.metadata.continue).toBeDefined();
    const second = nodeLoadList(objects, ALL, '6', { limit: 3, continue: first.metadata.continue });
    expect(second.items.map((o) => o.metadata.name)).toEqual(['d']);
    expect(second.metadata.continue).toBeUndefined();
  });

  it('rejects a continue token it did not make', () => {
    expect(() => nodeLoadList(objects, ALL, '5', { continue: 'garbage' })).toThrow(
      'continue key is not valid',
    );
    expect(decodeContinue(encodeContinue({ rv: '5', start: 'b' }))).toEqual({ rv: '5', start: 'b' });
  });
});

describe('matchesFilter', () => {
  it('matches cluster-scoped objects on an empty metadata.namespace only', () => {
    const o: NodeLoadObject = object('n1');
    expect(matchesFilter(o, { labels: [], fields: parseFieldSelector('metadata.namespace=') })).toBe(true);
    expect(matchesFilter(o, { labels: [], fields: parseFieldSelector('metadata.namespace=default') })).toBe(
      false,
    );
  });
});

describe('nodeLoadSummary (GET /api/node-load)', () => {
  it("keeps the original's name and capacity cpu/memory strings and adds the load", () => {
    const node = nodeInfo('n1', { cpu: '8', memory: '32Gi' });
    const s = nodeLoadSummary(
      nodeLoadObject(node, loadOf(node, [{ cpu: '2', memory: '8Gi' }]), [rule('t', 'r')], '3'),
    );
    expect(s).toMatchObject({
      name: 'n1',
      cpu: '8',
      memory: '32Gi',
      cpuPercent: 25,
      memoryPercent: 25,
      source: 'requests',
      pods: 1,
      eligibleRules: [{ namespace: 't', name: 'r' }],
    });
  });
});

import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeCluster, FakeLoads } from '../../test/kit/fake-cluster.js';
import { FakeLeader } from '../../test/kit/fake-leader.js';
import { NOW } from '../../test/kit/objects.js';
import { toNodeInfo, toPodInfo } from '../cluster/convert.js';
import type { NodeLoadRule, RuleStatus } from '../rules/types.js';
import type { EventObject, EventSeriesPatch, RuleWriter } from './kube.js';
import { Operator } from './operator.js';

function makeRule(name: string, spec: Partial<NodeLoadRule['spec']> = {}, rv = '1'): NodeLoadRule {
  return {
    namespace: 'shop',
    name,
    uid: `uid-${name}`,
    generation: 1,
    resourceVersion: rv,
    creationTimestamp: '2026-11-29T00:00:00Z',
    spec: { maxCPU: 80, maxMemory: 80, allowedNodes: [], ...spec },
  };
}

class FakeWriter implements RuleWriter {
  readonly patches: { key: string; status: RuleStatus }[] = [];
  readonly events: EventObject[] = [];
  readonly seriesPatches: { name: string; series: EventSeriesPatch }[] = [];
  /** Event names the API server no longer has (expired). */
  readonly expired = new Set<string>();
  failNext = 0;
  constructor(private readonly cluster: FakeCluster) {}

  async patchStatus(namespace: string, name: string, status: RuleStatus): Promise<string> {
    if (this.failNext > 0) {
      this.failNext--;
      throw Object.assign(new Error('etcd leader changed'), { code: 500 });
    }
    const key = `${namespace}/${name}`;
    this.patches.push({ key, status });
    const rv = this.cluster.nextRv();
    // The watch echo arrives later, like the real informer's.
    setTimeout(() => this.cluster.echoStatus(key, status, rv), 5);
    return rv;
  }

  async createEvent(event: EventObject): Promise<void> {
    this.events.push(event);
  }

  async patchEventSeries(_namespace: string, name: string, series: EventSeriesPatch): Promise<void> {
    if (this.expired.has(name)) throw Object.assign(new Error('not found'), { code: 404 });
    this.seriesPatches.push({ name, series });
  }
}

function setup(opts: { leading?: boolean; loads?: Record<string, number> } = {}) {
  const cluster = new FakeCluster();
  const loads = new FakeLoads();
  for (const [name, cpu] of Object.entries(opts.loads ?? { 'node-a': 40, 'node-b': 10, 'node-c': 70 })) {
    cluster.addNode(toNodeInfo({ metadata: { name }, status: { allocatable: { cpu: '4', memory: '8Gi' } } }));
    loads.setLoad(name, cpu);
  }
  const leader = new FakeLeader(opts.leading ?? true);
  const writer = new FakeWriter(cluster);
  const registry = new Registry();
  const operator = new Operator({
    cache: cluster,
    loads,
    leader,
    writer,
    identity: 'test-instance',
    log: pino({ level: 'silent' }),
    registry,
    now: () => Date.now(),
  });
  return { cluster, loads, leader, writer, registry, operator };
}

/** Lets the debounce (250 ms, max 2 s), the write and the watch echo run. */
const settle = () => vi.advanceTimersByTimeAsync(3000);

beforeEach(() => {
  vi.useFakeTimers({ now: NOW });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Operator as leader', () => {
  it('writes every rule status once, then stays quiet when nothing changes', async () => {
    const { cluster, loads, writer, operator } = setup();
    cluster.addRule(makeRule('web'));
    cluster.addRule(makeRule('batch', { maxCPU: 30 }));
    operator.start();
    await settle();
    expect(writer.patches.map((p) => p.key).sort()).toEqual(['shop/batch', 'shop/web']);
    const web = writer.patches.find((p) => p.key === 'shop/web')?.status;
    expect(web?.eligibleNodes).toEqual(['node-a', 'node-b', 'node-c']);
    const batch = writer.patches.find((p) => p.key === 'shop/batch')?.status;
    expect(batch?.eligibleNodes).toEqual(['node-b']);
    expect(batch?.ineligibleNodes).toContainEqual({ node: 'node-c', reasons: ['cpu 70% > maxCPU 30%'] });
    // The echoes of our own writes come back as rule updates: they must not cause another write; nor
    // must a load change that moves no node across a limit or a whole point of headroom.
    loads.setLoad('node-b', 9.6);
    await settle();
    expect(writer.patches).toHaveLength(2);
    expect(writer.events).toEqual([]);
    await operator.stop();
  });

  it('a node going over the limit: status rewritten and one NodeIneligible Warning; back under: NodeEligible', async () => {
    const { cluster, loads, writer, operator } = setup();
    cluster.addRule(makeRule('web'));
    operator.start();
    await settle();
    loads.setLoad('node-b', 95);
    await settle();
    expect(writer.patches).toHaveLength(2);
    expect(writer.patches[1]?.status.eligibleNodes).toEqual(['node-a', 'node-c']);
    expect(writer.events.map((e) => [e.type, e.reason, e.related?.name, e.note])).toEqual([
      [
        'Warning',
        'NodeIneligible',
        'node-b',
        'node node-b is no longer eligible for rule web: cpu 95% > maxCPU 80%',
      ],
    ]);
    expect(writer.events[0]?.regarding).toMatchObject({
      kind: 'NodeLoadRule',
      namespace: 'shop',
      name: 'web',
    });
    expect(writer.events[0]?.reportingInstance).toBe('test-instance');
    loads.setLoad('node-b', 20);
    await settle();
    expect(writer.events.map((e) => [e.reason, e.related?.name])).toEqual([
      ['NodeIneligible', 'node-b'],
      ['NodeEligible', 'node-b'],
    ]);
    await operator.stop();
  });

  it('a node flapping across a limit: one Event per way, each later flap counted on its series', async () => {
    const { cluster, loads, writer, operator, registry } = setup();
    cluster.addRule(makeRule('web'));
    operator.start();
    await settle();
    for (const cpu of [95, 20, 91, 30, 97]) {
      loads.setLoad('node-b', cpu);
      await settle();
    }
    expect(writer.events.map((e) => [e.reason, e.related?.name, e.note])).toEqual([
      ['NodeIneligible', 'node-b', 'node node-b is no longer eligible for rule web: cpu 95% > maxCPU 80%'],
      [
        'NodeEligible',
        'node-b',
        'node node-b is eligible again for rule web: cpu 20% ≤ maxCPU 80%, memory 10% ≤ maxMemory 80%',
      ],
    ]);
    const [ineligible, eligible] = writer.events.map((e) => e.metadata.name);
    expect(writer.seriesPatches.map((p) => [p.name, p.series.count])).toEqual([
      [ineligible, 2],
      [eligible, 2],
      [ineligible, 3],
    ]);
    expect(writer.seriesPatches[2]?.series.lastObservedTime).toMatch(/^\d{4}-\d\d-\d\dT[\d:]+\.\d{6}Z$/);
    const counted = await registry.getSingleMetricAsString('nodeload_operator_events_total');
    expect(counted).toContain('reason="NodeIneligible",write="create"} 1');
    expect(counted).toContain('reason="NodeIneligible",write="series"} 2');
    expect(counted).toContain('reason="NodeEligible",write="series"} 1');

    // Past the window (six minutes after the last flap) a flap is a new Event; so is one whose Event expired.
    vi.advanceTimersByTime(6 * 60_000 + 1);
    loads.setLoad('node-b', 10);
    await settle();
    writer.expired.add(ineligible ?? '');
    loads.setLoad('node-b', 99);
    await settle();
    expect(writer.events.map((e) => [e.reason, e.note.match(/cpu \d+%/)?.[0]])).toEqual([
      ['NodeIneligible', 'cpu 95%'],
      ['NodeEligible', 'cpu 20%'],
      ['NodeEligible', 'cpu 10%'],
      ['NodeIneligible', 'cpu 99%'],
    ]);
    expect(writer.seriesPatches).toHaveLength(3);
    await operator.stop();
  });

  it('a node that joins: written into the status, with no NodeEligible Event (it was never ineligible)', async () => {
    const { cluster, loads, writer, operator } = setup();
    cluster.addRule(makeRule('web'));
    operator.start();
    await settle();
    vi.advanceTimersByTime(5000);
    const joined = new Date(Date.now()).toISOString();
    cluster.addNode(
      toNodeInfo({
        metadata: { name: 'node-d', creationTimestamp: joined },
        status: { allocatable: { cpu: '4', memory: '8Gi' } },
      }),
    );
    loads.setLoad('node-d', 10);
    await settle();
    expect(writer.patches.at(-1)?.status.eligibleNodes).toEqual(['node-a', 'node-b', 'node-c', 'node-d']);
    expect(writer.events).toEqual([]);
    await operator.stop();
  });

  it('coalesces a burst of load changes into one pass', async () => {
    // As a follower, so that no status echo causes a pass of its own.
    const { cluster, loads, operator } = setup({ leading: false });
    cluster.addRule(makeRule('web'));
    operator.start();
    await settle();
    const passes: string[][] = [];
    operator.onChange((c) => passes.push(c.rules));
    for (let i = 0; i < 20; i++) loads.setLoad('node-a', 40 + i);
    await settle();
    expect(passes).toEqual([['shop/web']]);
    await operator.stop();
  });

  it('retries a failed status write with backoff, and emits the Event only once it succeeded', async () => {
    const { cluster, loads, writer, operator } = setup();
    cluster.addRule(makeRule('web'));
    operator.start();
    await settle();
    writer.failNext = 2;
    loads.setLoad('node-b', 95);
    await vi.advanceTimersByTimeAsync(300);
    expect(writer.patches).toHaveLength(1);
    expect(writer.events).toEqual([]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(writer.patches).toHaveLength(2);
    expect(writer.patches[1]?.status.eligibleNodes).toEqual(['node-a', 'node-c']);
    expect(writer.events.map((e) => e.reason)).toEqual(['NodeIneligible']);
    await operator.stop();
  });

  it('forgets a deleted rule: no evaluation, no suggestions, no gauge series', async () => {
    const { cluster, operator, registry } = setup();
    cluster.addRule(makeRule('web'));
    operator.start();
    await settle();
    expect(operator.evaluation('shop', 'web')).toBeDefined();
    expect(await registry.getSingleMetricAsString('nodeload_rule_eligible_nodes')).toContain('rule="web"} 3');
    cluster.deleteRule('shop/web');
    await settle();
    expect(operator.evaluation('shop', 'web')).toBeUndefined();
    expect(operator.suggestions()).toEqual([]);
    expect(await registry.getSingleMetricAsString('nodeload_rule_eligible_nodes')).not.toContain(
      'rule="web"',
    );
    await operator.stop();
  });
});

describe('Operator as follower', () => {
  it('evaluates for the views but writes nothing until it leads, then reconciles everything', async () => {
    const { cluster, loads, leader, writer, operator } = setup({ leading: false });
    cluster.addRule(makeRule('web', { allowedNodes: ['node-a', 'node-c'] }));
    operator.start();
    await settle();
    expect(writer.patches).toEqual([]);
    expect(operator.evaluation('shop', 'web')?.eligible.map((v) => v.node)).toEqual(['node-a', 'node-c']);
    expect(operator.suggestions()).toEqual([
      { node: 'node-a', rule: 'web', namespace: 'shop', headroom: 40, cpuPercent: 40, memoryPercent: 10 },
      { node: 'node-c', rule: 'web', namespace: 'shop', headroom: 10, cpuPercent: 70, memoryPercent: 10 },
    ]);
    leader.set(true);
    await settle();
    expect(writer.patches.map((p) => p.key)).toEqual(['shop/web']);
    expect(writer.patches[0]?.status.ineligibleNodes).toEqual([
      { node: 'node-b', reasons: ['not in allowedNodes'] },
    ]);
    leader.set(false);
    loads.setLoad('node-a', 99);
    await settle();
    expect(writer.patches).toHaveLength(1);
    await operator.stop();
  });
});

describe('rebalanceHints', () => {
  it('names the covered running pods on an overloaded node and the node with most headroom', async () => {
    const { cluster, operator } = setup({ loads: { 'node-a': 95, 'node-b': 10, 'node-c': 50 } });
    const pod = (name: string, namespace: string) =>
      toPodInfo({
        metadata: { name, namespace, uid: name },
        spec: { nodeName: 'node-a', containers: [{ name: 'c' }] },
        status: { phase: 'Running' },
      });
    for (const p of [pod('web-1', 'shop'), pod('other', 'elsewhere')]) cluster.upsertPod(p);
    cluster.addRule(makeRule('web'));
    operator.start();
    await settle();
    expect(operator.rebalanceHints()).toEqual([
      {
        rule: 'web',
        pod: 'web-1',
        namespace: 'shop',
        from: 'node-a',
        to: 'node-b',
        reason: 'node node-a: cpu 95% > maxCPU 80%',
      },
    ]);
    await operator.stop();
  });
});

import { existsSync } from 'node:fs';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeCluster } from '../../test/kit/fake-cluster.js';
import { FakeLeader } from '../../test/kit/fake-leader.js';
import { type PodInfo, podKey } from '../cluster/model.js';
import { LoadTracker } from '../load/tracker.js';
import type { BindOutcome, SchedulerApi } from './binder.js';
import type { Decision } from './explain.js';
import type { Profile } from './framework/runtime.js';
import type { PreBindPlugin } from './framework/types.js';
import { nodeResourcesFit } from './plugins/node-resources-fit.js';
import { profileOf } from './plugins/plugin.testing.js';
import { Scheduler, type SchedulerOptions } from './scheduler.js';
import { node, pod, rule } from './testing.js';

/** The API server's side: binds land in the cluster (as the informer would report) after a short delay. */
class FakeApi implements SchedulerApi {
  /** Every bind call, as it is made (whatever its outcome). */
  attempts: string[] = [];
  binds: { pod: string; node: string }[] = [];
  unschedulable: { pod: string; message: string }[] = [];
  events: Decision[] = [];
  /** Answers for the next binds, in order; then 'bound'. */
  script: BindOutcome[] = [];
  /** nominatedNodeName writes, in order: "pod→node", "pod→" for a clear. */
  nominations: string[] = [];

  constructor(private readonly cluster: FakeCluster) {}

  async bind(p: PodInfo, nodeName: string): Promise<BindOutcome> {
    this.attempts.push(podKey(p));
    await new Promise((r) => setTimeout(r, 1));
    const outcome = this.script.shift() ?? { kind: 'bound' };
    if (outcome.kind === 'bound') {
      const current = this.cluster.pods.get(podKey(p));
      if (current?.nodeName)
        return {
          kind: 'already-bound',
          message: `pod ${p.name} is already assigned to node "${current.nodeName}"`,
        };
      this.binds.push({ pod: podKey(p), node: nodeName });
      setTimeout(() => this.cluster.upsertPod({ ...p, nodeName, phase: 'Running' }), 2);
    }
    return outcome;
  }
  markUnschedulable(p: PodInfo, message: string): void {
    this.unschedulable.push({ pod: podKey(p), message });
  }
  recordDecision(d: Decision): void {
    this.events.push(d);
  }
  async listDecisions(): Promise<Decision[]> {
    return [];
  }
  nominate(p: PodInfo, nodeName: string): void {
    this.nominations.push(`${podKey(p)}→${nodeName}`);
  }
  clearNomination(p: PodInfo): void {
    this.nominations.push(`${podKey(p)}→`);
  }
  async expectNode(p: PodInfo, nodeName: string): Promise<void> {
    this.nominations.push(`${podKey(p)}→${nodeName}`);
  }
  preempt(): void {}
  async drain(): Promise<void> {}
}

const running: Scheduler[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
});

/**
 * A scheduler over a fake cluster (pass `cluster` to run several instances against one). The leader
 * settle delay is off unless a test sets it, so no test waits for it.
 */
function setup(
  o: {
    leading?: boolean;
    options?: Partial<SchedulerOptions>;
    cluster?: FakeCluster;
    now?: () => number;
    profile?: Profile;
  } = {},
) {
  const cluster = o.cluster ?? new FakeCluster();
  const loads = new LoadTracker({ cache: cluster, refreshSeconds: 0 });
  loads.start();
  const api = new FakeApi(cluster);
  const leader = new FakeLeader(o.leading ?? true);
  const registry = new Registry();
  const scheduler = new Scheduler({
    cache: cluster,
    loads,
    api,
    leader,
    log: pino({ level: 'silent' }),
    ...(o.now ? { now: o.now } : {}),
    ...(o.profile ? { profile: o.profile } : {}),
    registry,
    options: {
      schedulerName: 'nodeload-scheduler',
      identity: 'test',
      bindQps: 10_000,
      bindBurst: 10_000,
      leaderSettleMs: 0,
      ...o.options,
    },
  });
  running.push(scheduler);
  return { cluster, loads, api, leader, scheduler, registry };
}

async function until(what: string, cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function requestedOn(cluster: FakeCluster, name: string): number {
  let cpu = 0;
  for (const p of cluster.podsOnNode(name).values()) cpu += p.requests.cpuMilli;
  return cpu;
}

describe('Scheduler', () => {
  it('places a burst without over-committing any node: the assume cache counts binds in flight', async () => {
    const { cluster, api, scheduler } = setup();
    for (let i = 0; i < 4; i++) cluster.addNode(node(`n${i}`, { cpu: '4', pods: '110' }));
    scheduler.start();
    for (let i = 0; i < 20; i++) cluster.upsertPod(pod(`p${i}`, { cpu: '1' }));
    await until(
      '16 pods bound and 4 unschedulable',
      () => cluster.unscheduledPods().length === 4 && scheduler.status().queues.unschedulable === 4,
    );
    for (let i = 0; i < 4; i++) expect(requestedOn(cluster, `n${i}`)).toBe(4000);
    expect(new Set(api.binds.map((b) => b.pod)).size).toBe(16);
    expect(api.unschedulable[0]?.message).toBe(
      '0/4 nodes are available: 4 Insufficient cpu. no new claims to deallocate, preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.',
    );
    expect(scheduler.status()).toMatchObject({ bound: 16, failed: 0, leader: true });
  });

  it('a pending pod whose event never reached the queue is found by the resync, logged, counted and bound', async () => {
    const { cluster, api, scheduler, registry } = setup({ options: { pendingResyncMs: 60_000 } });
    cluster.addNode(node('n0', { cpu: '4' }));
    scheduler.start();
    cluster.upsertPod(pod('seen', { cpu: '1' }));
    await until('the pod with an event bound', () => api.binds.length === 1);
    // In the cache without an event: what a missed or mishandled watch event leaves behind.
    const missed = pod('missed', { cpu: '1' });
    cluster.pods.set(podKey(missed), missed);
    expect(scheduler.status().queues.active).toBe(0);
    // The first check only suspects it (its event may be late); the second, still untracked, queues it.
    expect(scheduler.resyncPending()).toBe(0);
    expect(scheduler.resyncPending()).toBe(1);
    await until('the missed pod bound', () => api.binds.length === 2);
    expect(api.binds[1]).toEqual({ pod: podKey(missed), node: 'n0' });
    // Tracked now (bound, or queued while binding): later checks find nothing.
    expect(scheduler.resyncPending()).toBe(0);
    expect(scheduler.resyncPending()).toBe(0);
    const text = await registry.metrics();
    expect(text).toMatch(/^nodeload_scheduler_resynced_pods_total 1$/m);
  });

  it('spreads by load and keeps within rule thresholds', async () => {
    const { cluster, scheduler } = setup();
    for (const n of ['a', 'b', 'c']) cluster.addNode(node(n, { cpu: '10' }));
    cluster.addRule(
      rule('web', { maxCPU: 50, allowedNodes: ['a', 'b'], podSelector: { matchLabels: { app: 'web' } } }),
    );
    scheduler.start();
    for (let i = 0; i < 12; i++) cluster.upsertPod(pod(`web-${i}`, { cpu: '1', labels: { app: 'web' } }));
    await until(
      '10 pods bound',
      () => cluster.unscheduledPods().length === 2 && scheduler.status().queues.unschedulable === 2,
    );
    expect(requestedOn(cluster, 'a')).toBe(5000);
    expect(requestedOn(cluster, 'b')).toBe(5000);
    expect(requestedOn(cluster, 'c')).toBe(0);
    const failed = scheduler.history.query({ result: 'unschedulable' }).items[0];
    expect(failed?.message).toBe(
      '0/3 nodes are available: 1 node(s) not allowed by rule web, 2 node(s) exceed rule web cpu 50%. no new claims to deallocate, preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.',
    );
    expect(failed?.candidates.find((c) => c.node === 'a')?.rules[0]).toMatchObject({
      rule: 'web',
      maxCPU: 50,
      cpuMargin: -10,
    });
  });

  it('retries an unschedulable pod when a node is added, and records both decisions', async () => {
    const { cluster, api, scheduler } = setup({ options: { initialBackoffMs: 20 } });
    cluster.addNode(node('small', { cpu: '1' }));
    scheduler.start();
    cluster.upsertPod(pod('big', { cpu: '2' }));
    await until('unschedulable', () => scheduler.status().queues.unschedulable === 1);
    expect(api.events.map((d) => d.result)).toEqual(['unschedulable']);
    cluster.addNode(node('large', { cpu: '8' }));
    await until('bound', () => api.binds.length === 1);
    expect(api.binds[0]).toEqual({ pod: 'default/big', node: 'large' });
    await until('scheduled event', () => api.events.length === 2);
    expect(api.events[1]).toMatchObject({ result: 'scheduled', node: 'large', attempts: 2 });
    expect(scheduler.pendingPods()).toEqual([]);
  });

  it('drops a pod another instance bound (409 already assigned) without retrying', async () => {
    const { cluster, api, scheduler, loads } = setup();
    cluster.addNode(node('n'));
    api.script = [{ kind: 'already-bound', message: 'pod p is already assigned to node "m"' }];
    scheduler.start();
    cluster.upsertPod(pod('p', { cpu: '1' }));
    await until('conflict', () => scheduler.status().conflicts === 1);
    expect(scheduler.status().queues).toEqual({ active: 0, backoff: 0, unschedulable: 0, inFlight: 0 });
    expect(loads.isAssumed('default/p')).toBe(false);
    expect(api.binds).toEqual([]);
    expect(api.events).toEqual([]);
  });

  it('requeues with backoff after a rejected bind and unassumes meanwhile', async () => {
    const { cluster, api, scheduler, registry, loads } = setup({ options: { initialBackoffMs: 20 } });
    cluster.addNode(node('n'));
    api.script = [{ kind: 'failed', message: 'admission webhook "x" denied the request', status: 403 }];
    scheduler.start();
    cluster.upsertPod(pod('p', { cpu: '1' }));
    await until('the rejected bind', () => api.events.length === 1);
    expect(api.events[0]).toMatchObject({ result: 'error', node: 'n' });
    expect(loads.isAssumed('default/p') && scheduler.snapshot.isAssumed('default/p')).toBe(false);
    await until('bound after retry', () => api.binds.length === 1);
    expect(api.attempts).toEqual(['default/p', 'default/p']);
    expect(scheduler.status()).toMatchObject({ failed: 1, bound: 1 });
    expect(api.events.map((d) => d.result)).toEqual(['error', 'scheduled']);
    const text = await registry.metrics();
    expect(text).toMatch(/nodeload_scheduler_schedule_attempts_total\{result="error"\} 1/);
    expect(text).toMatch(/nodeload_scheduler_schedule_attempts_total\{result="scheduled"\} 1/);
    // Both attempts ran the algorithm; its time is the cycle's alone, so never more than the attempt's.
    expect(text).toMatch(/nodeload_scheduler_scheduling_algorithm_duration_seconds_count 2/);
    const sum = (name: string) =>
      [...text.matchAll(new RegExp(`^${name}_sum(?:\\{[^}]*\\})? (\\S+)`, 'gm'))].reduce(
        (a, m) => a + Number(m[1]),
        0,
      );
    expect(sum('nodeload_scheduler_scheduling_algorithm_duration_seconds')).toBeLessThanOrEqual(
      sum('nodeload_scheduler_scheduling_attempt_duration_seconds'),
    );
    // Time on a CPU is the same cycles' wall time less waiting for a core (Linux schedstat): never more.
    if (existsSync('/proc/thread-self/schedstat')) {
      expect(text).toMatch(/nodeload_scheduler_scheduling_algorithm_cpu_seconds_count 2/);
      expect(sum('nodeload_scheduler_scheduling_algorithm_cpu_seconds')).toBeLessThanOrEqual(
        sum('nodeload_scheduler_scheduling_algorithm_duration_seconds') + 1e-9,
      );
    }
  });

  it('keeps a bind of unknown outcome (5xx) assumed until the watch shows the pod', async () => {
    const { cluster, api, scheduler, loads } = setup({ options: { initialBackoffMs: 10 } });
    cluster.addNode(node('n', { cpu: '1' }));
    api.script = [{ kind: 'failed', message: 'etcdserver: request timed out', status: 500 }];
    scheduler.start();
    cluster.upsertPod(pod('p', { cpu: '1' }));
    await until('the failed bind', () => api.events.length === 1);
    expect(loads.isAssumed('default/p')).toBe(true);
    expect(scheduler.snapshot.isAssumed('default/p')).toBe(true);
    // The bind may have committed: its room stays taken, another pod does not get it.
    cluster.upsertPod(pod('q', { cpu: '1' }));
    await until('q unschedulable', () => api.unschedulable.some((u) => u.pod === 'default/q'));
    expect(api.unschedulable.find((u) => u.pod === 'default/q')?.message).toBe(
      '0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
    // It had: the watch shows p bound; p is never bound a second time.
    const p = cluster.pods.get('default/p') as PodInfo;
    cluster.upsertPod({ ...p, nodeName: 'n', phase: 'Running' });
    expect(scheduler.snapshot.isAssumed('default/p')).toBe(false);
    expect(scheduler.pendingPods().map((x) => x.pod)).toEqual(['q']);
    expect(api.attempts).toEqual(['default/p']);
  });

  it('gives up on a bind of unknown outcome at its deadline even across a leadership flap', async () => {
    // The deadline outlives stepping down: had it been dropped, the pod would stay assumed (its room
    // taken, its cycles requeued as "waiting for the outcome of a previous bind") for as long as no event
    // about it arrives — forever if the bind never committed.
    let clock = Date.now();
    const { cluster, api, scheduler, leader } = setup({
      options: { initialBackoffMs: 10 },
      now: () => clock,
    });
    cluster.addNode(node('n', { cpu: '1' }));
    api.script = [{ kind: 'failed', message: 'etcdserver: request timed out', status: 500 }];
    scheduler.start();
    cluster.upsertPod(pod('p', { cpu: '1' }));
    await until('the failed bind', () => api.events.length === 1);
    leader.set(false);
    leader.set(true);
    clock += 11_000;
    await until('p bound by a second attempt', () => cluster.pods.get('default/p')?.nodeName === 'n');
    expect(api.attempts).toEqual(['default/p', 'default/p']);
  });

  it('only the leader schedules; a new leader resyncs pending pods from the cache', async () => {
    const a = setup();
    const b = setup({ leading: false, cluster: a.cluster });
    const { cluster } = a;
    cluster.addNode(node('n'));
    a.scheduler.start();
    b.scheduler.start();
    cluster.upsertPod(pod('p', { cpu: '1' }));
    // The window: until the leader's bind has reached the cache. Both instances saw the same events in
    // it, and a bind is attempted within a few ticks of the pod event, so a non-leader that scheduled
    // would have tried to bind p (and its attempt is recorded at the call).
    await until('p bound by the leader', () => cluster.pods.get('default/p')?.nodeName === 'n');
    expect(a.api.binds).toEqual([{ pod: 'default/p', node: 'n' }]);
    expect(b.api.attempts).toEqual([]);
    expect(b.scheduler.status()).toMatchObject({
      leader: false,
      queues: { active: 0, backoff: 0, unschedulable: 0, inFlight: 0 },
    });
    expect(b.scheduler.history.size).toBe(0);

    // Hand-over: a steps down, q arrives while nobody leads, b takes over and finds q in the cache.
    a.leader.set(false);
    cluster.upsertPod(pod('q', { cpu: '1' }));
    expect(a.scheduler.status()).toMatchObject({ leader: false, queues: { active: 0 } });
    b.leader.set(true);
    await until('q bound by the new leader', () => cluster.pods.get('default/q')?.nodeName === 'n');
    expect(b.api.binds).toEqual([{ pod: 'default/q', node: 'n' }]);
    expect(a.api.attempts).toEqual(['default/p']);
  });

  it('a new leader waits leaderSettleMs before scheduling', async () => {
    const settling = setup({ options: { schedulerName: 'settling', leaderSettleMs: 3_600_000 } });
    const quick = setup({ cluster: settling.cluster });
    const { cluster } = settling;
    cluster.addNode(node('n'));
    settling.scheduler.start();
    quick.scheduler.start();
    cluster.upsertPod(pod('slow', { schedulerName: 'settling' }));
    cluster.upsertPod(pod('fast'));
    // In the window the settle-free instance needs to bind, the settling one binds nothing (stop()
    // in afterEach ends the wait).
    await until('fast bound', () => cluster.pods.get('default/fast')?.nodeName === 'n');
    expect(quick.api.attempts).toEqual(['default/fast']);
    expect(settling.api.attempts).toEqual([]);
    expect(settling.scheduler.status()).toMatchObject({ leader: true, bound: 0 });
    expect(cluster.pods.get('default/slow')?.nodeName).toBe('');
  });

  it('ignores pods of other schedulers and pods already bound', async () => {
    const { cluster, api, scheduler } = setup();
    cluster.addNode(node('n'));
    scheduler.start();
    cluster.upsertPod(pod('theirs', { schedulerName: 'default-scheduler' }));
    cluster.upsertPod(pod('bound', { nodeName: 'n' }));
    cluster.upsertPod(pod('mine'));
    await until('bound', () => api.binds.length === 1);
    expect(api.binds[0]?.pod).toBe('default/mine');
  });

  it('publishes each decision once to every subscriber, the same object', async () => {
    const { cluster, scheduler } = setup();
    cluster.addNode(node('n'));
    const a: Decision[] = [];
    const b: Decision[] = [];
    scheduler.onDecision((d) => a.push(d));
    const off = scheduler.onDecision((d) => b.push(d));
    scheduler.start();
    cluster.upsertPod(pod('p'));
    await until('decision', () => a.length === 1);
    expect(b[0]).toBe(a[0]);
    expect(scheduler.decision(a[0]?.id ?? '')).toBe(a[0]);
    off();
    cluster.upsertPod(pod('q'));
    await until('second decision', () => a.length === 2);
    expect(b).toHaveLength(1);
  });

  it('honours a rule burst limit across a burst', async () => {
    const { cluster, api, scheduler } = setup();
    cluster.addNode(node('n', { cpu: '100' }));
    cluster.addRule(rule('web', { maxCPU: 100, burst: { maxPlacements: 3, windowSeconds: 3600 } }));
    scheduler.start();
    for (let i = 0; i < 5; i++) cluster.upsertPod(pod(`p${i}`, { cpu: '100m' }));
    await until(
      '3 binds, 2 held back',
      () => api.binds.length === 3 && scheduler.status().queues.unschedulable === 2,
    );
    expect(api.unschedulable[0]?.message).toBe(
      '0/1 nodes are available: 1 node(s) hit burst limit of rule web. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    );
  });

  it('above 100 candidates keeps the key ones, each with its rule check; an unschedulable pod every one', async () => {
    const { cluster, scheduler } = setup();
    const names = Array.from({ length: 200 }, (_, i) => `n${String(i).padStart(3, '0')}`);
    for (const n of names) cluster.addNode(node(n, { cpu: '4' }));
    const allowed = new Set(names.filter((_, i) => i % 2 === 0));
    cluster.addRule(rule('web', { maxCPU: 50, allowedNodes: [...allowed] }));
    scheduler.start();
    cluster.upsertPod(pod('fits', { cpu: '1' }));
    await until('fits bound', () => scheduler.history.query({ result: 'scheduled' }).items.length === 1);
    // 3 cores are 75 % of every node, over the rule's 50 %.
    cluster.upsertPod(pod('too-big', { cpu: '3' }));
    await until(
      'too-big unschedulable',
      () => scheduler.history.query({ result: 'unschedulable' }).items.length > 0,
    );
    const check = (c: Decision['candidates'][number]) => {
      const r = c.rules[0];
      return [c.node, c.rules.length, r?.allowed, r && c.load && r.cpuMargin === 50 - c.load.cpuPercentAfter];
    };
    const scheduled = scheduler.history.query({ result: 'scheduled' }).items[0] as Decision;
    // The sample examined past the 100 feasible nodes it looked for (every other node is not allowed)
    // and kept the 10 best and one not allowed, each with the rule's check on an empty node (1 of 4 cores).
    expect([scheduled.examinedNodes, scheduled.candidates.length, scheduled.candidatesOmitted]).toEqual([
      199, 11, 188,
    ]);
    expect(scheduled.candidates.map(check)).toEqual(
      scheduled.candidates.map((c) => [c.node, 1, allowed.has(c.node), true]),
    );
    expect(scheduled.candidates.map((c) => c.rules[0]?.cpuMargin)).toEqual(Array(11).fill(25));
    const failed = scheduler.history.query({ result: 'unschedulable' }).items[0] as Decision;
    expect(failed.candidates).toHaveLength(200);
    expect(failed.candidates.map(check)).toEqual(
      failed.candidates.map((c) => [c.node, 1, allowed.has(c.node), true]),
    );
  });

  it('nominates a pod whose PreBind has work to its node first (NominatedNodeNameForExpectation), and clears it when PreBind fails', async () => {
    const order: string[] = [];
    const volumes: PreBindPlugin = {
      name: 'FakeVolumes',
      preBindPreFlight: (_s, ctx) => ctx.pod.name !== 'plain',
      async preBind(_s, ctx, node) {
        order.push(`preBind ${ctx.pod.name} on ${node}`);
        return ctx.pod.name === 'broken' ? 'provisioning failed' : undefined;
      },
    };
    const { cluster, api, scheduler } = setup({ profile: profileOf(nodeResourcesFit(), volumes) });
    cluster.addNode(node('n1'));
    scheduler.start();
    cluster.upsertPod(pod('waits', { cpu: '100m' }));
    await until('waits bound', () => api.binds.length === 1);
    expect(api.nominations).toEqual(['default/waits→n1']);
    cluster.upsertPod(pod('plain', { cpu: '100m' }));
    await until('plain bound', () => api.binds.length === 2);
    expect(api.nominations).toEqual(['default/waits→n1']);
    cluster.upsertPod(pod('broken', { cpu: '100m' }));
    await until('broken failed once', () => order.includes('preBind broken on n1'));
    await until('its nomination cleared', () => api.nominations.length === 3);
    expect(api.nominations.slice(1)).toEqual(['default/broken→n1', 'default/broken→']);
  });
});

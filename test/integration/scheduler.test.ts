// The load-aware scheduler against the real control plane with KWOK nodes: placement within allowed nodes
// and thresholds, a 500-pod burst on 20 nodes checked afterwards for over-commit, an unschedulable pod's
// condition and Event until a node frees up, a Deployment, and a leader failover mid-burst (no pod lost,
// none bound twice), plus the history rebuilt from Events by a fresh gateway.
//
// Other test files share the cluster and may run gateways too: every pod here carries a unique
// schedulerName and a nodeSelector for this file's own nodes, and every check is scoped to them.
import {
  AppsV1Api,
  CustomObjectsApi,
  EventsV1Api,
  type EventsV1Event,
  type V1Pod,
} from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { toNodeInfo, toPodInfo } from '../../src/cluster/convert.js';
import type { PodInfo } from '../../src/cluster/model.js';
import { parseConfig } from '../../src/config.js';
import type { LeaderElector } from '../../src/leader/lease.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { schedulerComponent } from '../../src/scheduler/component.js';
import type { Decision } from '../../src/scheduler/explain.js';
import { ERR_RESOURCE_CLAIMS } from '../../src/scheduler/plugins/dynamic-resources.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { createFakeNodes } from '../cluster/nodes.js';
import {
  coreApi,
  createNamespace,
  kubeConfig,
  removeTestResources,
  type TestNamespace,
  uniqueName,
  waitFor,
} from './context.js';

const POOL_LABEL = 'nodeload.test/pool';
const RULE = { group: RULE_GROUP, version: RULE_VERSION, plural: RULE_PLURAL };

interface RunningGateway {
  gateway: Gateway;
  leader: LeaderElector;
  scheduler: Scheduler;
}

let ns: TestNamespace;
const leaseNamespace = uniqueName('it-sched-lease');
const schedulerName = uniqueName('nodeload-it');
const createdNodes: string[] = [];
const gateways: RunningGateway[] = [];
let main: RunningGateway;

async function startSchedulerGateway(o: {
  schedulerName: string;
  leaseName: string;
  identity: string;
  bindQps?: number;
  bindBurst?: number;
  leaseDurationSeconds?: number;
}): Promise<RunningGateway> {
  const config = parseConfig({
    kubeconfig: inject('kubeconfig'),
    httpPort: 0,
    bindAddress: '127.0.0.1',
    // Reads the user port without a token (test/integration/authz.test.ts covers tokens).
    anonymousUserPort: true,
    schedulerName: o.schedulerName,
    leaderElect: true,
    namespace: leaseNamespace,
    leaseName: o.leaseName,
    leaseDurationSeconds: o.leaseDurationSeconds ?? 15,
    identity: o.identity,
    installCrd: false,
    bindQps: o.bindQps ?? 500,
    bindBurst: o.bindBurst ?? 1000,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
  });
  let scheduler!: Scheduler;
  const gateway = await startGateway(config, [
    (ctx) => {
      const component = schedulerComponent(ctx);
      scheduler = component.scheduler;
      return component;
    },
  ]);
  await gateway.cache.ready();
  const leader = gateway.leader;
  const running = { gateway, leader, scheduler };
  gateways.push(running);
  return running;
}

async function stopGateway(g: RunningGateway): Promise<void> {
  const i = gateways.indexOf(g);
  if (i >= 0) gateways.splice(i, 1);
  await g.gateway.stop();
}

/** Creates KWOK nodes labelled with a fresh pool; returns the pool and the node names. */
async function nodePool(
  prefix: string,
  count: number,
  spec: { cpu: number; memory: string; pods: number },
): Promise<{ pool: string; names: string[] }> {
  const pool = uniqueName(prefix);
  const names = Array.from({ length: count }, (_, i) => `${pool}-${String(i).padStart(2, '0')}`);
  await createFakeNodes(
    inject('kubeconfig'),
    names.map((name) => ({ name, ...spec, labels: { [POOL_LABEL]: pool } })),
  );
  createdNodes.push(...names);
  return { pool, names };
}

function podBody(
  name: string,
  o: { pool: string; cpu: string; memory?: string; labels?: Record<string, string>; scheduler?: string },
): V1Pod {
  return {
    metadata: { name, labels: o.labels ?? { app: 'web' } },
    spec: {
      schedulerName: o.scheduler ?? schedulerName,
      nodeSelector: { [POOL_LABEL]: o.pool },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: o.cpu, memory: o.memory ?? '64Mi' } },
        },
      ],
    },
  };
}

async function createPods(bodies: V1Pod[], concurrency = 16): Promise<void> {
  const core = coreApi();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++] as V1Pod;
        await core.createNamespacedPod({ namespace: ns.name, body });
      }
    }),
  );
}

async function podsWithLabel(selector: string): Promise<PodInfo[]> {
  const list = await coreApi().listNamespacedPod({ namespace: ns.name, labelSelector: selector });
  return list.items.map((p) => toPodInfo(p));
}

async function createRule(name: string, spec: Record<string, unknown>, gateway: Gateway): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      ...RULE,
      namespace: ns.name,
      body: { apiVersion: `${RULE_GROUP}/${RULE_VERSION}`, kind: 'NodeLoadRule', metadata: { name }, spec },
    });
  // The scheduler must know the rule before the pods it covers arrive.
  await waitFor(`rule ${name} in the cache`, () => gateway.cache.rules.has(`${ns.name}/${name}`));
}

/**
 * After the fact, from the API server: every pool node's bound pods fit its allocatable (cpu, memory,
 * pod count), and stay within each given rule's thresholds (requests-based load: no metrics-server here).
 */
async function expectNoOvercommit(
  pool: string,
  limits: { maxCPU: number; maxMemory: number } = { maxCPU: 100, maxMemory: 100 },
) {
  const core = coreApi();
  const nodes = (await core.listNode({ labelSelector: `${POOL_LABEL}=${pool}` })).items.map((n) =>
    toNodeInfo(n),
  );
  const pods = (await core.listNamespacedPod({ namespace: ns.name })).items.map((p) => toPodInfo(p));
  const perNode: Record<string, { pods: number; cpuPercent: number; memoryPercent: number }> = {};
  for (const node of nodes) {
    const onNode = pods.filter((p) => p.nodeName === node.name && !p.terminal);
    const cpu = onNode.reduce((s, p) => s + p.requests.cpuMilli, 0);
    const mem = onNode.reduce((s, p) => s + p.requests.memoryBytes, 0);
    perNode[node.name] = {
      pods: onNode.length,
      cpuPercent: (cpu / node.allocatable.cpuMilli) * 100,
      memoryPercent: (mem / node.allocatable.memoryBytes) * 100,
    };
    expect(onNode.length, `pods on ${node.name}`).toBeLessThanOrEqual(node.allocatable.pods);
    expect(cpu, `cpu requested on ${node.name}`).toBeLessThanOrEqual(node.allocatable.cpuMilli);
    expect(mem, `memory requested on ${node.name}`).toBeLessThanOrEqual(node.allocatable.memoryBytes);
    expect((cpu / node.allocatable.cpuMilli) * 100, `cpu% on ${node.name}`).toBeLessThanOrEqual(
      limits.maxCPU,
    );
    expect((mem / node.allocatable.memoryBytes) * 100, `memory% on ${node.name}`).toBeLessThanOrEqual(
      limits.maxMemory,
    );
  }
  return perNode;
}

async function schedulerEvents(controller: string, reason?: string): Promise<EventsV1Event[]> {
  const list = await kubeConfig()
    .makeApiClient(EventsV1Api)
    .listNamespacedEvent({ namespace: ns.name, fieldSelector: `reportingController=${controller}` });
  return list.items.filter((e) => reason === undefined || e.reason === reason);
}

/** Decisions this instance made itself (not rebuilt from Events). */
function ownDecisions(s: Scheduler, result: Decision['result']): Decision[] {
  const out: Decision[] = [];
  let after: string | undefined;
  do {
    const page = s.history.query({ namespace: ns.name, result, limit: 500, ...(after ? { after } : {}) });
    out.push(...page.items.filter((d) => !d.rebuilt));
    after = page.nextCursor;
  } while (after);
  return out;
}

beforeAll(async () => {
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  ns = await createNamespace('it-sched');
  main = await startSchedulerGateway({
    schedulerName,
    leaseName: uniqueName('sched'),
    identity: uniqueName('gw-main'),
  });
  await waitFor('the gateway to lead', () => main.leader.isLeader());
});

afterAll(async () => {
  for (const g of [...gateways].reverse()) await stopGateway(g);
  await removeTestResources({ namespace: ns, nodes: createdNodes, extraNamespaces: [leaseNamespace] });
});

describe('scheduler', () => {
  it('places pods only on allowed nodes and within the rule thresholds, and explains why', async () => {
    const { pool, names } = await nodePool('it-allow', 3, { cpu: 4, memory: '8Gi', pods: 20 });
    const [n0, n1, n2] = names as [string, string, string];
    await createRule(
      'web-tier',
      {
        maxCPU: 60,
        maxMemory: 80,
        allowedNodes: [n0, n1],
        podSelector: { matchLabels: { app: 'web', pool } },
      },
      main.gateway,
    );
    const labels = { app: 'web', pool };
    // 500m each: four per node reach 50%, a fifth would be 62.5% > 60%. Eight fit, the ninth does not.
    await createPods(
      Array.from({ length: 9 }, (_, i) => podBody(`allow-${i}`, { pool, cpu: '500m', labels })),
    );
    const bound = await waitFor('8 pods bound', async () => {
      const pods = await podsWithLabel(`pool=${pool}`);
      const b = pods.filter((p) => p.nodeName);
      return b.length === 8 ? pods : undefined;
    });
    for (const p of bound.filter((x) => x.nodeName)) expect([n0, n1]).toContain(p.nodeName);
    const perNode = await expectNoOvercommit(pool, { maxCPU: 60, maxMemory: 80 });
    expect(perNode[n2]?.pods).toBe(0);

    const failed = await waitFor('the unschedulable decision', () =>
      main.scheduler.history
        .query({ namespace: ns.name, result: 'unschedulable' })
        .items.find((d) => d.pod.startsWith('allow-')),
    );
    expect(failed.message).toMatch(/^0\/\d+ nodes are available: /);
    expect(failed.message).toContain('2 node(s) exceed rule web-tier cpu 60%');
    expect(failed.message).toContain('1 node(s) not allowed by rule web-tier');
    expect(failed.rules).toEqual([{ namespace: ns.name, name: 'web-tier', maxCPU: 60, maxMemory: 80 }]);
    const onN0 = failed.candidates.find((c) => c.node === n0);
    expect(onN0?.rules[0]).toMatchObject({ rule: 'web-tier', allowed: true, maxCPU: 60, cpuMargin: -2.5 });
    expect(onN0?.load).toMatchObject({ cpuPercent: 50, cpuPercentAfter: 62.5, source: 'requests' });
    expect(failed.candidates.find((c) => c.node === n2)?.reasons.map((r) => r.reason)).toEqual([
      'node(s) not allowed by rule web-tier',
    ]);

    const ok = main.scheduler.history.query({ namespace: ns.name, result: 'scheduled', limit: 1 }).items[0];
    expect(ok?.candidates[0]).toMatchObject({ node: ok?.node, feasible: true, rank: 1 });
    expect(ok?.latencyMs).toBeGreaterThanOrEqual(ok?.algorithmMs ?? 0);

    const res = await fetch(`http://127.0.0.1:${main.gateway.httpPort}/scheduler/status`);
    expect(res.status).toBe(200);
    const status = (await res.json()) as Record<string, unknown>;
    expect(status).toMatchObject({ running: true, leader: true, schedulerName, cacheSynced: true });
    expect(status['bound']).toBeGreaterThanOrEqual(8);
    const metrics = await (await fetch(`http://127.0.0.1:${main.gateway.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/nodeload_scheduler_schedule_attempts_total\{result="scheduled"\} \d+/);
    expect(metrics).toMatch(/nodeload_scheduler_pending_pods\{queue="unschedulable"\} \d+/);
    expect(metrics).toContain('nodeload_scheduler_pod_scheduling_sli_duration_seconds_bucket');
    expect(metrics).toContain('nodeload_scheduler_binds_in_flight');
    expect(metrics).toMatch(/nodeload_scheduler_pending_writes\{kind="pod"\} \d+/);
    expect(metrics).toMatch(/nodeload_scheduler_events_dropped_total 0/);
  });

  it('schedules a burst of 500 pods on 20 nodes without over-committing any node', async () => {
    const { pool } = await nodePool('it-burst', 20, { cpu: 4, memory: '8Gi', pods: 25 });
    await createRule(
      'burst',
      { maxCPU: 60, maxMemory: 90, podSelector: { matchLabels: { pool } } },
      main.gateway,
    );
    // 100m each: 25 pods (the pod limit) would be 62.5% cpu > 60%, so 24 per node fit: 480 of 500.
    const bodies = Array.from({ length: 500 }, (_, i) =>
      podBody(`burst-${String(i).padStart(3, '0')}`, {
        pool,
        cpu: '100m',
        memory: '128Mi',
        labels: { app: 'burst', pool },
      }),
    );
    await createPods(bodies, 24);
    await waitFor(
      '480 pods bound, 20 unschedulable',
      async () => {
        const pods = await podsWithLabel(`pool=${pool}`);
        const bound = pods.filter((p) => p.nodeName).length;
        const parked = main.scheduler
          .pendingPods()
          .filter((p) => p.namespace === ns.name && p.pod.startsWith('burst-'));
        return bound === 480 && parked.length === 20 && parked.every((p) => p.attempts >= 1);
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    const perNode = await expectNoOvercommit(pool, { maxCPU: 60, maxMemory: 90 });
    expect(Object.values(perNode).map((n) => n.pods)).toEqual(Array(20).fill(24));
    // Each pod bound by exactly one successful decision.
    const scheduled = ownDecisions(main.scheduler, 'scheduled').filter((d) => d.pod.startsWith('burst-'));
    expect(scheduled).toHaveLength(480);
    expect(new Set(scheduled.map((d) => d.pod)).size).toBe(480);
  }, 180_000);

  it('refuses a pod with ResourceClaims sent to it directly, saying kube-scheduler must place it', async () => {
    const { pool } = await nodePool('it-dra', 1, { cpu: 2, memory: '4Gi', pods: 10 });
    const body = podBody('claims-gpu', { pool, cpu: '100m' });
    body.spec = {
      ...body.spec,
      resourceClaims: [{ name: 'gpu', resourceClaimName: 'gpu' }],
    } as V1Pod['spec'];
    await createPods([body]);
    const condition = await waitFor('PodScheduled=False', async () => {
      const p = await coreApi().readNamespacedPod({ name: 'claims-gpu', namespace: ns.name });
      return p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    });
    expect(condition.reason).toBe('Unschedulable');
    expect(condition.message).toContain(ERR_RESOURCE_CLAIMS);
    const p = await coreApi().readNamespacedPod({ name: 'claims-gpu', namespace: ns.name });
    expect(p.spec?.nodeName).toBeUndefined();
  });

  it('marks an unschedulable pod, emits FailedScheduling, and schedules it once a node frees up', async () => {
    const { pool, names } = await nodePool('it-wait', 1, { cpu: 2, memory: '4Gi', pods: 10 });
    const node = names[0] as string;
    await createPods([podBody('hog', { pool, cpu: '1500m', labels: { app: 'hog', pool } })]);
    await waitFor(
      'hog bound',
      async () => (await coreApi().readNamespacedPod({ name: 'hog', namespace: ns.name })).spec?.nodeName,
    );
    await createPods([podBody('waiter', { pool, cpu: '1', labels: { app: 'waiter', pool } })]);

    const condition = await waitFor('PodScheduled=False', async () => {
      const p = await coreApi().readNamespacedPod({ name: 'waiter', namespace: ns.name });
      return p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    });
    expect(condition.reason).toBe('Unschedulable');
    expect(condition.message).toMatch(/^0\/\d+ nodes are available: .*1 Insufficient cpu/);
    // As kube-scheduler 1.36 writes it: for the pod generation it saw (the API server counts from 1).
    const waiterPod = await coreApi().readNamespacedPod({ name: 'waiter', namespace: ns.name });
    expect(waiterPod.metadata?.generation).toBeGreaterThan(0);
    expect(condition.observedGeneration).toBe(waiterPod.metadata?.generation);
    const failedEvent = await waitFor('FailedScheduling event', async () =>
      (await schedulerEvents(schedulerName, 'FailedScheduling')).find((e) => e.regarding?.name === 'waiter'),
    );
    expect(failedEvent).toMatchObject({
      type: 'Warning',
      action: 'Scheduling',
      reportingController: schedulerName,
    });
    // Other test files add nodes meanwhile, so the total in the message may differ between attempts.
    expect(failedEvent.note).toMatch(/^0\/\d+ nodes are available: .*1 Insufficient cpu/);
    expect(failedEvent.reportingInstance).toMatch(new RegExp(`^${schedulerName}-`));

    await coreApi().deleteNamespacedPod({ name: 'hog', namespace: ns.name, gracePeriodSeconds: 0 });
    const waiter = await waitFor(
      'waiter bound after the hog left',
      async () => {
        const p = await coreApi().readNamespacedPod({ name: 'waiter', namespace: ns.name });
        return p.spec?.nodeName ? p : undefined;
      },
      { timeoutMs: 45_000 },
    );
    expect(waiter.spec?.nodeName).toBe(node);
    const scheduledEvent = await waitFor('Scheduled event', async () =>
      (await schedulerEvents(schedulerName, 'Scheduled')).find((e) => e.regarding?.name === 'waiter'),
    );
    expect(scheduledEvent).toMatchObject({
      type: 'Normal',
      action: 'Binding',
      note: `Successfully assigned ${ns.name}/waiter to ${node}`,
    });
  }, 90_000);

  it("schedules a Deployment's pods", async () => {
    const { pool, names } = await nodePool('it-deploy', 2, { cpu: 4, memory: '8Gi', pods: 20 });
    const apps = kubeConfig().makeApiClient(AppsV1Api);
    const labels = { app: 'deploy', pool };
    await apps.createNamespacedDeployment({
      namespace: ns.name,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: (podBody('x', { pool, cpu: '200m', labels }).spec as V1Pod['spec']) ?? { containers: [] },
          },
        },
      },
    });
    onTestFinished(async () => {
      await apps.deleteNamespacedDeployment({ name: 'web', namespace: ns.name });
    });
    const pods = await waitFor(
      '3 deployment pods bound',
      async () => {
        const list = await podsWithLabel(`app=deploy,pool=${pool}`);
        return list.length === 3 && list.every((p) => p.nodeName) ? list : undefined;
      },
      { timeoutMs: 60_000 },
    );
    for (const p of pods) {
      expect(names).toContain(p.nodeName);
      expect(p.ownerKind).toBe('ReplicaSet');
    }
    await waitFor(
      'deployment available',
      async () => {
        const d = await apps.readNamespacedDeployment({ name: 'web', namespace: ns.name });
        return d.status?.availableReplicas === 3;
      },
      { timeoutMs: 60_000 },
    );
  }, 90_000);

  it('fails over mid-burst: no pod lost, none bound twice, and a new gateway rebuilds the history', async () => {
    const foScheduler = uniqueName('nodeload-it-fo');
    const leaseName = uniqueName('sched-fo');
    const { pool } = await nodePool('it-fo', 6, { cpu: 8, memory: '16Gi', pods: 50 });
    // A slow bind rate stretches the burst, so the leader dies with binds queued and in flight.
    const opts = {
      schedulerName: foScheduler,
      leaseName,
      leaseDurationSeconds: 3,
      bindQps: 40,
      bindBurst: 5,
    };
    const first = await startSchedulerGateway({ ...opts, identity: uniqueName('gw-a') });
    await waitFor('first gateway leads', () => first.leader.isLeader());
    const second = await startSchedulerGateway({ ...opts, identity: uniqueName('gw-b') });
    expect(second.leader.isLeader()).toBe(false);

    const total = 200;
    const bodies = Array.from({ length: total }, (_, i) =>
      podBody(`fo-${String(i).padStart(3, '0')}`, {
        pool,
        cpu: '100m',
        labels: { app: 'fo', pool },
        scheduler: foScheduler,
      }),
    );
    const creating = createPods(bodies, 16);
    await waitFor(
      'the first leader to bind some pods',
      () => ownDecisions(first.scheduler, 'scheduled').length >= 40,
      {
        timeoutMs: 60_000,
        intervalMs: 50,
      },
    );
    await stopGateway(first);
    await creating;
    await waitFor('the second gateway to lead', () => second.leader.isLeader(), { timeoutMs: 15_000 });
    await waitFor(
      `all ${total} pods bound`,
      async () => (await podsWithLabel(`app=fo,pool=${pool}`)).filter((p) => p.nodeName).length === total,
      { timeoutMs: 120_000, intervalMs: 1000 },
    );

    const byFirst = ownDecisions(first.scheduler, 'scheduled').map((d) => d.pod);
    const bySecond = ownDecisions(second.scheduler, 'scheduled').map((d) => d.pod);
    expect(byFirst.length).toBeGreaterThanOrEqual(40);
    expect(bySecond.length).toBeGreaterThan(0);
    expect(byFirst.length + bySecond.length).toBe(total);
    expect(new Set([...byFirst, ...bySecond]).size).toBe(total);
    await expectNoOvercommit(pool);

    // Exactly one Scheduled Event per pod, whichever instance wrote it.
    const events = await waitFor(
      `${total} Scheduled events`,
      async () => {
        const evs = await schedulerEvents(foScheduler, 'Scheduled');
        return evs.length >= total ? evs : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    const perPod = new Map<string, number>();
    for (const e of events)
      perPod.set(e.regarding?.name ?? '', (perPod.get(e.regarding?.name ?? '') ?? 0) + 1);
    expect(perPod.size).toBe(total);
    expect([...perPod.values()].every((n) => n === 1)).toBe(true);

    // A gateway started now rebuilds the decisions from those Events, with their explanations.
    const third = await startSchedulerGateway({ ...opts, identity: uniqueName('gw-c') });
    const rebuilt = await waitFor('history rebuilt', () => {
      const items = third.scheduler.history.query({
        namespace: ns.name,
        result: 'scheduled',
        limit: 500,
      }).items;
      return items.length >= total ? items : undefined;
    });
    expect(new Set(rebuilt.map((d) => d.pod)).size).toBe(total);
    const sample = rebuilt.find((d) => d.pod === byFirst[0]);
    expect(sample).toMatchObject({ rebuilt: true, result: 'scheduled' });
    expect(sample?.candidates.length).toBeGreaterThan(0);
    expect(sample?.reportingInstance).toBe(`${foScheduler}-${first.leader.identity}`);
  }, 240_000);
});

// DefaultPreemption against the real control plane with KWOK nodes: a high-priority pod scheduled by
// nodeload-scheduler onto a node full of a low-priority pod preempts it — the victim gets a `Preempted`
// Event and is deleted, the preemptor gets status.nominatedNodeName and is then bound to that node — and a
// pod with preemptionPolicy Never does not preempt.
//
// Other files share the cluster: pods here carry this file's own schedulerName and a nodeSelector for
// this file's own nodes; PriorityClasses are named uniquely and removed afterwards; each test has its
// own namespace.
import { EventsV1Api, SchedulingV1Api, type V1Pod } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { podKey } from '../../src/cluster/model.js';
import { parseConfig } from '../../src/config.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { schedulerComponent } from '../../src/scheduler/component.js';
import type { Decision } from '../../src/scheduler/explain.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { createFakeNodes, isApiException } from '../cluster/nodes.js';
import {
  coreApi,
  kubeConfig,
  readPod,
  removeTestResources,
  sleep,
  uniqueName,
  waitFor,
  withNamespace,
} from './context.js';

const POOL_LABEL = 'nodeload.test/pool';
const schedulerName = uniqueName('nodeload-it-preempt');
const leaseNamespace = uniqueName('it-preempt-lease');
const classes = {
  high: uniqueName('it-high'),
  low: uniqueName('it-low'),
  never: uniqueName('it-high-never'),
};
const createdNodes: string[] = [];
let gateway: Gateway;
let scheduler: Scheduler;

function scheduling(): SchedulingV1Api {
  return kubeConfig().makeApiClient(SchedulingV1Api);
}

async function onePodNode(prefix: string): Promise<{ pool: string; node: string }> {
  const pool = uniqueName(prefix);
  const node = `${pool}-00`;
  await createFakeNodes(inject('kubeconfig'), [
    { name: node, cpu: 2, memory: '4Gi', pods: 10, labels: { [POOL_LABEL]: pool } },
  ]);
  createdNodes.push(node);
  return { pool, node };
}

function podBody(name: string, o: { pool: string; cpu: string; priorityClassName: string }): V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      schedulerName,
      priorityClassName: o.priorityClassName,
      nodeSelector: { [POOL_LABEL]: o.pool },
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: o.cpu, memory: '64Mi' } },
        },
      ],
    },
  };
}

async function boundPod(namespace: string, name: string): Promise<V1Pod> {
  return waitFor(`${name} bound`, async () => {
    const p = await readPod(namespace, name);
    return p?.spec?.nodeName ? p : undefined;
  });
}

function decisionsOf(namespace: string, pod: string): Decision[] {
  return scheduler.history.query({ namespace, limit: 500 }).items.filter((d) => d.pod === pod);
}

beforeAll(async () => {
  // The shared cache watches NodeLoadRules: their CRD must be served for it to sync.
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  await scheduling().createPriorityClass({ body: { metadata: { name: classes.high }, value: 100_000 } });
  await scheduling().createPriorityClass({ body: { metadata: { name: classes.low }, value: 10 } });
  await scheduling().createPriorityClass({
    body: { metadata: { name: classes.never }, value: 100_000, preemptionPolicy: 'Never' },
  });
  const config = parseConfig({
    kubeconfig: inject('kubeconfig'),
    httpPort: 0,
    bindAddress: '127.0.0.1',
    schedulerName,
    leaderElect: true,
    namespace: leaseNamespace,
    leaseName: uniqueName('preempt'),
    identity: uniqueName('gw-preempt'),
    installCrd: false,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
  });
  gateway = await startGateway(config, [
    (ctx) => {
      const component = schedulerComponent(ctx, { leader: ctx.leader });
      scheduler = component.scheduler;
      return component;
    },
  ]);
  await gateway.cache.ready();
  await waitFor('the gateway to lead', () => gateway.leader.isLeader());
});

afterAll(async () => {
  await gateway?.stop();
  await removeTestResources({ nodes: createdNodes, extraNamespaces: [leaseNamespace] });
  for (const name of Object.values(classes)) {
    try {
      await scheduling().deletePriorityClass({ name });
    } catch (err) {
      if (!isApiException(err, 404)) throw err;
    }
  }
});

describe('preemption', () => {
  it('a high-priority pod preempts a low-priority one: victim deleted, preemptor nominated then bound', async () => {
    const ns = await withNamespace('it-preempt');
    const { pool, node } = await onePodNode('it-preempt');
    await coreApi().createNamespacedPod({
      namespace: ns,
      body: podBody('victim', { pool, cpu: '1500m', priorityClassName: classes.low }),
    });
    const victim = await boundPod(ns, 'victim');
    expect(victim.spec?.nodeName).toBe(node);
    expect(victim.spec?.priority).toBe(10);

    // The nomination may be short-lived (the victim goes at once on KWOK): watch it through the cache.
    const nominations: string[] = [];
    const off = gateway.cache.bus.on('pod', (c) => {
      if (c.new && podKey(c.new) === `${ns}/preemptor` && c.new.nominatedNodeName)
        nominations.push(c.new.nominatedNodeName);
    });
    try {
      await coreApi().createNamespacedPod({
        namespace: ns,
        body: podBody('preemptor', { pool, cpu: '1', priorityClassName: classes.high }),
      });
      await waitFor('the victim deleted', async () => (await readPod(ns, 'victim')) === undefined);
      const preemptor = await boundPod(ns, 'preemptor');
      expect(preemptor.spec?.nodeName).toBe(node);
      await waitFor('the nomination seen', () => nominations.length > 0);
      expect(new Set(nominations)).toEqual(new Set([node]));
    } finally {
      off();
    }

    const failed = decisionsOf(ns, 'preemptor').find((d) => d.result === 'unschedulable');
    expect(failed?.message).toMatch(/^0\/\d+ nodes are available: .*1 Insufficient cpu/);
    expect(failed?.preemption).toEqual({
      node,
      victims: [{ namespace: ns, name: 'victim', priority: 10 }],
      message: `preempting 1 pod(s) on node ${node}: ${ns}/victim (priority 10).`,
    });
    // The watch can show the pod bound before the bind's response is back and the decision recorded.
    await waitFor('the scheduled decision of the preemptor', () =>
      decisionsOf(ns, 'preemptor').some((d) => d.result === 'scheduled' && d.node === node),
    );

    const preempted = await waitFor('the Preempted Event on the victim', async () => {
      const list = await kubeConfig()
        .makeApiClient(EventsV1Api)
        .listNamespacedEvent({ namespace: ns, fieldSelector: `reportingController=${schedulerName}` });
      return list.items.find((e) => e.reason === 'Preempted' && e.regarding?.name === 'victim');
    });
    const preemptorUid = (await readPod(ns, 'preemptor'))?.metadata?.uid;
    expect(preempted).toMatchObject({
      type: 'Normal',
      action: 'Preempting',
      note: `Preempted by pod ${preemptorUid} on node ${node}`,
      related: { name: 'preemptor', namespace: ns },
    });
  });

  it('a pod with preemptionPolicy Never does not preempt', async () => {
    const ns = await withNamespace('it-preempt-never');
    const { pool, node } = await onePodNode('it-never');
    await coreApi().createNamespacedPod({
      namespace: ns,
      body: podBody('victim', { pool, cpu: '1500m', priorityClassName: classes.low }),
    });
    await boundPod(ns, 'victim');
    await coreApi().createNamespacedPod({
      namespace: ns,
      body: podBody('polite', { pool, cpu: '1', priorityClassName: classes.never }),
    });
    const condition = await waitFor('PodScheduled=False on the polite pod', async () => {
      const p = await readPod(ns, 'polite');
      return p?.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    });
    expect(condition.message).toMatch(
      /^0\/\d+ nodes are available: .*1 Insufficient cpu.* preemption: not eligible due to preemptionPolicy=Never\.$/,
    );
    // Give a wrong preemption every chance to show.
    await sleep(2000);
    const victim = await readPod(ns, 'victim');
    expect(victim?.metadata?.deletionTimestamp).toBeUndefined();
    expect(victim?.spec?.nodeName).toBe(node);
    const polite = await readPod(ns, 'polite');
    expect(polite?.spec?.priority).toBe(100_000);
    expect(polite?.spec?.preemptionPolicy).toBe('Never');
    expect(polite?.spec?.nodeName).toBeFalsy();
    expect(polite?.status?.nominatedNodeName).toBeFalsy();
    expect(decisionsOf(ns, 'polite')[0]?.preemption).toMatchObject({ victims: [] });
  });
});

// Failover when the leader dies hard: the leader is a real gateway process killed with SIGKILL in the
// middle of a burst (no lease release, binds in flight), a follower takes over once the lease expires.
// Every pod ends up bound exactly once (one Scheduled Event at most, naming its node), and no node is
// over-committed.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { CoordinationV1Api, EventsV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { schedulerComponent } from '../../src/scheduler/component.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { freePorts } from '../cluster/controlplane.js';
import { createFakeNodes } from '../cluster/nodes.js';
import {
  burstPod,
  coreApi,
  createNamespace,
  createPods,
  kubeConfig,
  provided,
  removeTestResources,
  type TestNamespace,
  uniqueName,
  waitFor,
} from './context.js';
import { spawnGateway } from './gateway-process.js';

const POOL_LABEL = 'nodeload.test/pool';
const TOTAL = 150;

let ns: TestNamespace;
const pool = uniqueName('it-kill');
const nodes = Array.from({ length: 5 }, (_, i) => `${pool}-${i}`);
const schedulerName = uniqueName('nodeload-it-kill');
const leaseNamespace = uniqueName('it-kill-lease');
const leaseName = uniqueName('kill');
let leaderProcess: ChildProcess | undefined;
let follower: Gateway | undefined;

beforeAll(async () => {
  ns = await createNamespace('it-kill');
  await createFakeNodes(
    provided('kubeconfig'),
    nodes.map((name) => ({ name, cpu: 8, memory: '16Gi', pods: 60, labels: { [POOL_LABEL]: pool } })),
  );
});

afterAll(async () => {
  if (leaderProcess?.exitCode === null) leaderProcess.kill('SIGKILL');
  await follower?.stop();
  await removeTestResources({ namespace: ns, nodes, extraNamespaces: [leaseNamespace] });
});

const pod = (i: number) =>
  burstPod(i, {
    app: 'kill',
    schedulerName,
    pool: { label: POOL_LABEL, value: pool },
    requests: { cpu: '200m', memory: '128Mi' },
  });

async function holder(): Promise<string | undefined> {
  const api = kubeConfig().makeApiClient(CoordinationV1Api);
  try {
    return (await api.readNamespacedLease({ name: leaseName, namespace: leaseNamespace })).spec
      ?.holderIdentity;
  } catch {
    return undefined;
  }
}

describe('leader killed mid-burst', () => {
  it('loses no pod and binds none twice when the leader process is SIGKILLed', async () => {
    const [httpPort] = await freePorts(1);
    const common = [
      `--kubeconfig=${provided('kubeconfig')}`,
      `--scheduler-name=${schedulerName}`,
      `--namespace=${leaseNamespace}`,
      `--lease-name=${leaseName}`,
      '--lease-duration-seconds=4',
      // A slow bind rate stretches the burst so the kill lands with binds queued and in flight.
      '--bind-qps=30',
      '--bind-burst=5',
    ];
    leaderProcess = spawnGateway(
      [
        ...common,
        `--http-port=${httpPort}`,
        '--bind-address=127.0.0.1',
        '--identity=gw-doomed',
        '--log-level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    await waitFor('the gateway process leads', async () => (await holder()) === 'gw-doomed', {
      timeoutMs: 60_000,
    });

    let scheduler!: Scheduler;
    follower = await startGateway(
      parseConfig({
        kubeconfig: provided('kubeconfig'),
        httpPort: 0,
        bindAddress: '127.0.0.1',
        schedulerName,
        namespace: leaseNamespace,
        leaseName,
        leaseDurationSeconds: 4,
        identity: 'gw-follower',
        logLevel: 'silent',
      }),
      [
        (ctx) => {
          const c = schedulerComponent(ctx);
          scheduler = c.scheduler;
          return c;
        },
      ],
    );
    expect(follower.leader.isLeader()).toBe(false);

    const core = coreApi();
    const eventsApi = kubeConfig().makeApiClient(EventsV1Api);
    const create = (from: number, to: number) => createPods(ns.name, from, to, pod, 10);
    // The last fifth is created after the kill: on a fast machine the leader could otherwise bind the
    // whole burst before the kill lands, and the follower would have nothing to take over.
    const BEFORE_KILL = TOTAL - 30;
    const creating = create(0, BEFORE_KILL);
    const bound = async () =>
      (await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'app=kill' })).items.filter(
        (p) => p.spec?.nodeName,
      );
    let creationError: unknown;
    creating.catch((err) => {
      creationError = err;
    });
    await waitFor(
      'the doomed leader to bind some pods',
      async () => {
        if (creationError) throw creationError;
        return (await bound()).length >= 30;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );
    leaderProcess.kill('SIGKILL');
    await once(leaderProcess, 'exit');
    await creating;
    await create(BEFORE_KILL, TOTAL);

    await waitFor('the follower to take over after the lease expires', () => follower?.leader.isLeader(), {
      timeoutMs: 30_000,
    });
    const pods = await waitFor(
      `all ${TOTAL} pods bound`,
      async () => {
        const b = await bound();
        return b.length === TOTAL ? b : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );

    // The follower bound only what the dead leader had not, each pod once, to the node it is on.
    const byFollower = scheduler.history.query({ namespace: ns.name, result: 'scheduled', limit: 500 }).items;
    expect(byFollower.length).toBeGreaterThan(0);
    expect(byFollower.length).toBeLessThan(TOTAL);
    expect(new Set(byFollower.map((d) => d.pod)).size).toBe(byFollower.length);
    for (const d of byFollower) {
      const p = pods.find((x) => x.metadata?.name === d.pod);
      expect(p?.spec?.nodeName).toBe(d.node);
    }

    // Bound once across both instances: a scheduler writes one Scheduled Event per successful bind, so a
    // pod with two (one from each) was bound twice as far as the schedulers know, and an Event naming
    // another node than the pod's is a bind that did not stick. The dead leader may have died between a
    // bind and its Event, so its pods may have none; every pod the follower bound has its Event.
    const scheduledNotes = async () =>
      (await eventsApi.listNamespacedEvent({ namespace: ns.name })).items.filter(
        (e) => e.reason === 'Scheduled',
      );
    const events = await waitFor(
      "the follower's Scheduled Events written",
      async () => {
        const list = await scheduledNotes();
        const named = new Set(list.map((e) => e.regarding?.name));
        return byFollower.every((d) => named.has(d.pod)) ? list : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const eventsPerPod = new Map<string, string[]>();
    for (const e of events) {
      const name = e.regarding?.name ?? '';
      eventsPerPod.set(name, [...(eventsPerPod.get(name) ?? []), e.note ?? '']);
    }
    expect([...eventsPerPod].filter(([, notes]) => notes.length > 1)).toEqual([]);
    for (const p of pods) {
      const notes = eventsPerPod.get(p.metadata?.name ?? '') ?? [];
      for (const note of notes)
        expect(note).toBe(`Successfully assigned ${ns.name}/${p.metadata?.name} to ${p.spec?.nodeName}`);
    }

    // Nothing over-committed: requests per node within allocatable (8 CPU, 60 pods).
    const perNode = new Map<string, number>();
    for (const p of pods) perNode.set(p.spec!.nodeName!, (perNode.get(p.spec!.nodeName!) ?? 0) + 200);
    for (const [node, milli] of perNode) {
      expect(nodes).toContain(node);
      expect(milli).toBeLessThanOrEqual(8000);
    }
  }, 240_000);
});

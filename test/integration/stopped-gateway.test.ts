// A gateway process stopped (SIGSTOP) while a burst of its pods is created, then resumed (SIGCONT): what
// the scheduler bench's backlog phases do. Meanwhile its watches go unread — the API server may close
// them for unresponsiveness, its keep-alive sockets idle — and on resume thousands of events arrive at
// once. Every pod must end up bound exactly once, none left Pending without a word, no node over-committed.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { EventsV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../cluster/controlplane.js';
import { createFakeNodes } from '../cluster/nodes.js';
import { metricSum } from '../cluster/prom-text.js';
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
const WARM = 20;
const BURST = 400;
const NODE_CPU_MILLI = 8000;
const POD_CPU_MILLI = 100;

let ns: TestNamespace;
const pool = uniqueName('it-stop');
const nodes = Array.from({ length: 8 }, (_, i) => `${pool}-${i}`);
const schedulerName = uniqueName('nodeload-it-stop');
let gateway: ChildProcess | undefined;

beforeAll(async () => {
  ns = await createNamespace('it-stop');
  await createFakeNodes(
    provided('kubeconfig'),
    nodes.map((name) => ({ name, cpu: 8, memory: '32Gi', pods: 110, labels: { [POOL_LABEL]: pool } })),
  );
});

afterAll(async () => {
  if (gateway?.exitCode === null) {
    gateway.kill('SIGCONT');
    gateway.kill('SIGKILL');
  }
  await removeTestResources({ namespace: ns, nodes });
});

const pod = (i: number) =>
  burstPod(i, {
    app: 'stop',
    schedulerName,
    pool: { label: POOL_LABEL, value: pool },
    requests: { cpu: `${POD_CPU_MILLI}m`, memory: '64Mi' },
    terminationGracePeriodSeconds: 0,
  });

describe('a gateway stopped while its pods are created', () => {
  it('binds every pod of the burst exactly once after it resumes', async () => {
    const [httpPort] = (await freePorts(1)) as [number];
    gateway = spawnGateway(
      [
        `--kubeconfig=${provided('kubeconfig')}`,
        `--scheduler-name=${schedulerName}`,
        `--http-port=${httpPort}`,
        '--bind-address=127.0.0.1',
        '--anonymous-user-port=true',
        '--leader-elect=false',
        '--log-level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const status = async () => {
      const res = await fetch(`http://127.0.0.1:${httpPort}/scheduler/status`);
      return (await res.json()) as { leader?: boolean; cacheSynced?: boolean; bound?: number };
    };
    await waitFor(
      'the gateway leading with a synced cache',
      async () => {
        const s = await status().catch(() => undefined);
        return s?.leader === true && s.cacheSynced === true;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );

    const core = coreApi();
    const create = (from: number, to: number) => createPods(ns.name, from, to, pod, 20);
    const listPods = async () =>
      (await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'app=stop' })).items;
    const allBound = (want: number) => async () => {
      const pods = await listPods();
      return pods.length === want && pods.every((p) => p.spec?.nodeName) ? pods : undefined;
    };

    // Warm: the watches are established and have carried events before the stop.
    await create(0, WARM);
    await waitFor(`${WARM} warm-up pods bound`, allBound(WARM), { timeoutMs: 60_000, intervalMs: 250 });

    gateway.kill('SIGSTOP');
    try {
      await create(WARM, WARM + BURST);
      const whileStopped = (await listPods()).filter((p) => p.spec?.nodeName).length;
      expect(whileStopped).toBe(WARM);
    } finally {
      gateway.kill('SIGCONT');
    }
    const pods = await waitFor(`all ${WARM + BURST} pods bound after the resume`, allBound(WARM + BURST), {
      timeoutMs: 120_000,
      intervalMs: 500,
    });

    // Bound once: one successful bind per pod as the gateway counts them, and at most one Scheduled
    // Event per pod, naming the node it is on.
    expect((await status()).bound).toBe(WARM + BURST);
    const events = (
      await kubeConfig().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns.name })
    ).items.filter((e) => e.reason === 'Scheduled');
    const nodeOf = new Map(pods.map((p) => [p.metadata?.name, p.spec?.nodeName]));
    const seen = new Set<string>();
    for (const e of events) {
      const name = e.regarding?.name ?? '';
      expect(seen.has(name), `two Scheduled Events for ${name}`).toBe(false);
      seen.add(name);
      expect(e.note).toBe(`Successfully assigned ${ns.name}/${name} to ${nodeOf.get(name)}`);
    }

    // Nothing over-committed: the CPU requests per node within allocatable.
    const perNode = new Map<string, number>();
    for (const p of pods)
      perNode.set(p.spec?.nodeName ?? '', (perNode.get(p.spec?.nodeName ?? '') ?? 0) + POD_CPU_MILLI);
    for (const [node, milli] of perNode) {
      expect(nodes).toContain(node);
      expect(milli).toBeLessThanOrEqual(NODE_CPU_MILLI);
    }

    // Its own account, on /metrics: the pods reached its cache by the watch (at least this test's ADDED
    // events; the cluster is shared) or by a relist after it, and none had to be found by the
    // pending-pod resync.
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    const added = metricSum(metrics, 'nodeload_cache_watch_events_total', {
      resource: 'pods',
      type: 'ADDED',
    });
    const relisted = metricSum(metrics, 'nodeload_cache_lists_total', { resource: 'pods' }) > 1;
    expect(added >= BURST || relisted, `${added} pod ADDED events and no relist`).toBe(true);
    expect(metricSum(metrics, 'nodeload_cache_watches_total', { resource: 'pods' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(metricSum(metrics, 'nodeload_scheduler_resynced_pods_total')).toBe(0);

    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
  }, 240_000);
});

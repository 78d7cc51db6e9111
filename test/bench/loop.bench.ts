/**
 * The scheduling loop in process (no API server): nodeload's Scheduler — queue, cycle, assume, history,
 * decisions — over a fake cluster of N nodes, with a fake API whose binds land after 1 ms, for P pods of
 * the cycle bench's mix (60 % plain, 20 % hostname anti-affinity, 20 % zone spread). It reports what one
 * pod costs the loop beyond the algorithm and what the loop keeps: ms per pod, CPU ms per pod, and the
 * heap after a full GC (the decision history at its budget). A regression here is a leak or a per-pod
 * cost the cycle bench does not see.
 *
 *   node --expose-gc --import tsx test/bench/loop.bench.ts [--nodes 1000] [--pods 3000] [--snapshot file]
 *
 * --snapshot writes a heap snapshot at the end (summarise it with memory.bench.ts --analyse; keep
 * --pods small at 1,000 nodes, or the snapshot outgrows what one string can hold). --allocations prints
 * where the bytes allocated while scheduling came from (V8's sampling heap profiler, collected objects
 * included): what drives the garbage collector, per pod.
 */
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { writeHeapSnapshot } from 'node:v8';
import pino from 'pino';
import { Registry } from 'prom-client';
import { toPodInfo } from '../../src/cluster/convert.js';
import { type PodInfo, podKey } from '../../src/cluster/model.js';
import { LoadTracker } from '../../src/load/tracker.js';
import type { BindOutcome, SchedulerApi } from '../../src/scheduler/binder.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { node, pod } from '../../src/scheduler/testing.js';
import { FakeCluster } from '../kit/fake-cluster.js';
import { FakeLeader } from '../kit/fake-leader.js';
import { allocationTable, type SamplingNode } from './alloc-profile.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1000' },
    pods: { type: 'string', default: '3000' },
    snapshot: { type: 'string' },
    allocations: { type: 'boolean', default: false },
  },
});
const N = Number(values.nodes);
const P = Number(values.pods);
const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) console.warn('run with node --expose-gc for heap figures after a full GC');

/** The fake cluster with the real cache's per-node index (the fake's podsOnNode scans every pod). */
class IndexedCluster extends FakeCluster {
  private readonly byNode = new Map<string, Map<string, PodInfo>>();
  override podsOnNode(name: string): ReadonlyMap<string, PodInfo> {
    return this.byNode.get(name) ?? new Map();
  }
  override upsertPod(p: PodInfo): void {
    const key = podKey(p);
    const old = this.pods.get(key);
    if (old?.nodeName) this.byNode.get(old.nodeName)?.delete(key);
    super.upsertPod(p);
    const now = this.pods.get(key) as PodInfo;
    if (!now.nodeName) return;
    const onNode = this.byNode.get(now.nodeName) ?? new Map<string, PodInfo>();
    this.byNode.set(now.nodeName, onNode);
    onNode.set(key, now);
  }
}

const cluster = new IndexedCluster();

/** Binds land in the cluster as the watch would show them; nothing else is written. */
class InProcessApi implements SchedulerApi {
  async bind(p: PodInfo, nodeName: string): Promise<BindOutcome> {
    await new Promise((r) => setTimeout(r, 1));
    setTimeout(() => cluster.upsertPod({ ...p, nodeName, phase: 'Running' }), 1);
    return { kind: 'bound' };
  }
  markUnschedulable(): void {}
  recordDecision(): void {}
  async listDecisions() {
    return [];
  }
  nominate(): void {}
  clearNomination(): void {}
  async expectNode(): Promise<void> {}
  preempt(): void {}
  async drain(): Promise<void> {}
}

function incoming(i: number): PodInfo {
  const kind = i % 5;
  const group = `g-${Math.floor(i / 250)}`;
  if (kind < 3) return pod(`p-${i}`, { namespace: 'bench', cpu: '100m', memory: '128Mi' });
  const spec: Record<string, unknown> = {
    schedulerName: 'nodeload-scheduler',
    containers: [{ name: 'c', resources: { requests: { cpu: '100m', memory: '128Mi' } } }],
  };
  if (kind === 3) {
    spec['affinity'] = {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey: HOST, labelSelector: { matchLabels: { anti: group } } },
        ],
      },
    };
  } else {
    spec['topologySpreadConstraints'] = [
      {
        maxSkew: 1,
        topologyKey: ZONE,
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { spread: group } },
      },
    ];
  }
  return toPodInfo({
    metadata: {
      namespace: 'bench',
      name: `p-${i}`,
      uid: `u-${i}`,
      resourceVersion: '1',
      labels: kind === 3 ? { anti: group } : { spread: group },
    },
    spec,
    status: { phase: 'Pending' },
  } as Parameters<typeof toPodInfo>[0]);
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

async function main(): Promise<void> {
  for (let i = 0; i < N; i++) {
    const labels = { [ZONE]: `zone-${i % 3}`, [HOST]: `node-${i}` };
    cluster.addNode(node(`node-${i}`, { cpu: '32', memory: '128Gi', labels }));
  }
  const loads = new LoadTracker({ cache: cluster, refreshSeconds: 0 });
  loads.start();
  const scheduler = new Scheduler({
    cache: cluster,
    loads,
    api: new InProcessApi(),
    leader: new FakeLeader(true),
    log: pino({ level: 'silent' }),
    registry: new Registry(),
    options: {
      schedulerName: 'nodeload-scheduler',
      identity: 'loop-bench',
      bindQps: 1_000_000,
      bindBurst: 1_000_000,
      leaderSettleMs: 0,
    },
  });
  scheduler.start();
  gc?.();
  const session = values.allocations ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 16_384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  const before = process.memoryUsage();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < P; i++) {
    cluster.upsertPod({ ...incoming(i), schedulerName: 'nodeload-scheduler' });
    if (i % 200 === 0) await new Promise((r) => setImmediate(r));
  }
  while (cluster.unscheduledPods().length > 0) await new Promise((r) => setTimeout(r, 20));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const sampled = session ? await session.post('HeapProfiler.stopSampling') : undefined;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 10));
  }
  const after = process.memoryUsage();
  console.log(`| nodes | pods | pods/s | ms per pod | CPU ms per pod | heap MiB before / after | RSS MiB after | history decisions / MiB (est.) |
| --: | --: | --: | --: | --: | --: | --: | --: |
| ${N} | ${P} | ${((P * 1000) / wallMs).toFixed(0)} | ${(wallMs / P).toFixed(2)} | ${((cpu.user + cpu.system) / 1000 / P).toFixed(2)} | ${mib(before.heapUsed)} / ${mib(after.heapUsed)} | ${mib(after.rss)} | ${scheduler.history.size} / ${mib(scheduler.history.bytes)} |`);
  if (sampled) console.log(allocationTable(sampled.profile.head as SamplingNode, P));
  if (values.snapshot) console.log(`heap snapshot: ${writeHeapSnapshot(values.snapshot)}`);
  await scheduler.stop();
  loads.stop();
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

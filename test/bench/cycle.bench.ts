/**
 * The scheduling algorithm alone, in process (no API server): what one cycle costs at 1,000 or 5,000
 * nodes with the default profile, for the bench's pod mix — plain pods with requests, pods with
 * required anti-affinity on hostname, pods spread over zones (DoNotSchedule). Each placement is
 * assumed in the snapshot and the load map as the scheduler does, so the cluster fills as it goes.
 * This is the figure behind `nodeload_scheduler_scheduling_attempt_duration_seconds`.
 *
 *   npx tsx test/bench/cycle.bench.ts [--nodes 1000] [--pods 2000] [--percentage 0] [--owned] [--breakdown]
 *   node --cpu-prof --import tsx test/bench/cycle.bench.ts --nodes 5000   # profile in ./CPU.*.cpuprofile
 *
 * --owned gives the plain pods a ReplicaSet owner, as most real pods have: the system default spread
 * constraints (hostname and zone, ScheduleAnyway) then apply to them in PreScore. --breakdown times every
 * plugin's extension points and GC pauses, and prints where the slowest 1 % of cycles spent their time.
 */
import { parseArgs } from 'node:util';
import { toPodInfo } from '../../src/cluster/convert.js';
import type { PodInfo } from '../../src/cluster/model.js';
import { withPod } from '../../src/load/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../../src/load/types.js';
import { runCycle } from '../../src/scheduler/cycle.js';
import { workloadSelectors } from '../../src/scheduler/plugins/default-selector.testing.js';
import { defaultProfile, loadsFor, NOW, node, pod, snapshotOf } from '../../src/scheduler/testing.js';
import { CycleBreakdown } from './cycle-breakdown.js';

const { values } = parseArgs({
  options: {
    /** percentageOfNodesToScore: 0 adaptive (the default), 100 every node. */
    percentage: { type: 'string', default: '0' },
    nodes: { type: 'string', default: '1000' },
    pods: { type: 'string', default: '2000' },
    'existing-per-node': { type: 'string', default: '5' },
    owned: { type: 'boolean', default: false },
    breakdown: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(
    'usage: npx tsx test/bench/cycle.bench.ts [--nodes 1000] [--pods 2000] [--existing-per-node 5] ' +
      '[--percentage 0] [--owned] [--breakdown]',
  );
  process.exit(0);
}
const N = Number(values.nodes);
const P = Number(values.pods);
const E = Number(values['existing-per-node']);
const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

const nodes = Array.from({ length: N }, (_, i) =>
  node(`node-${i}`, { cpu: '32', memory: '128Gi', labels: { [ZONE]: `zone-${i % 3}`, [HOST]: `node-${i}` } }),
);
const existing = nodes.flatMap((n, i) =>
  Array.from({ length: E }, (_, j) =>
    pod(`e-${i}-${j}`, { nodeName: n.name, cpu: '500m', memory: '1Gi', labels: { app: `svc-${j}` } }),
  ),
);

const KINDS = ['plain', 'plain', 'plain', 'anti-affinity', 'spread'] as const;

/** The bench's mix: 60 % plain, 20 % anti-affinity (groups of 50), 20 % zone spread. */
function incoming(i: number): PodInfo {
  const kind = i % 5;
  const group = `g-${Math.floor(i / 250)}`;
  const meta = { namespace: 'bench', name: `p-${i}`, uid: `u-${i}`, resourceVersion: '1' };
  const containers = [{ name: 'c', resources: { requests: { cpu: '100m', memory: '128Mi' } } }];
  if (kind < 3 && values.owned) {
    return toPodInfo({
      metadata: {
        ...meta,
        labels: { rs: group },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `rs-${group}`, controller: true },
        ],
      },
      spec: { schedulerName: 'nodeload-scheduler', containers },
      status: { phase: 'Pending' },
    });
  }
  if (kind < 3) return pod(`p-${i}`, { namespace: 'bench', cpu: '100m', memory: '128Mi' });
  if (kind === 3)
    return toPodInfo({
      metadata: { ...meta, labels: { anti: group } },
      spec: {
        schedulerName: 'nodeload-scheduler',
        containers,
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { topologyKey: HOST, labelSelector: { matchLabels: { anti: group } } },
            ],
          },
        },
      },
      status: { phase: 'Pending' },
    });
  return toPodInfo({
    metadata: { ...meta, labels: { spread: group } },
    spec: {
      schedulerName: 'nodeload-scheduler',
      containers,
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: ZONE,
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: { spread: group } },
        },
      ],
    },
    status: { phase: 'Pending' },
  });
}

const snapshot = snapshotOf(nodes, existing);
const loads = loadsFor(nodes, existing);
const breakdown = values.breakdown ? new CycleBreakdown() : undefined;
/** --owned: the ReplicaSets owning the plain pods, rs-<group> selecting rs=<group> (the default selector). */
const workloads = workloadSelectors({
  replicaSets: Array.from({ length: Math.ceil(P / 250) }, (_, g) => ({
    namespace: 'bench',
    name: `rs-g-${g}`,
    selector: { matchLabels: { rs: `g-${g}` } },
  })),
});
const base = { ...defaultProfile({ workloads }), percentageOfNodesToScore: Number(values.percentage) };
const profile = breakdown ? breakdown.wrap(base) : base;
let start = 0;
const times: number[] = [];
/** CPU ms per cycle (process.cpuUsage, every thread): less sensitive than wall time to a busy machine. */
const cpuTimes: number[] = [];
let unschedulable = 0;
const heapBefore = process.memoryUsage().heapUsed;
for (let i = 0; i < P; i++) {
  const p = incoming(i);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = runCycle({
    profile,
    pod: p,
    snapshot,
    rules: [],
    loads,
    loadOptions: DEFAULT_LOAD_OPTIONS,
    sampleFrom: start,
    now: NOW,
  });
  start = r.nextStart;
  const best = r.ranked[0];
  const t1 = performance.now();
  times.push(t1 - t0);
  const c1 = process.cpuUsage(c0);
  cpuTimes.push((c1.user + c1.system) / 1000);
  breakdown?.endCycle(t0, t1);
  if (!best) {
    unschedulable++;
    continue;
  }
  snapshot.assume({ ...p, nodeName: best.node }, best.node);
  const l = loads.get(best.node);
  if (l) loads.set(best.node, withPod(l, p, DEFAULT_LOAD_OPTIONS));
}
// Cycles alone (the bench's own bookkeeping and process.cpuUsage calls between cycles left out).
const total = times.reduce((a, b) => a + b, 0);
const order = times.map((_, i) => i).sort((a, b) => (times[a] as number) - (times[b] as number));
const quantile = (idx: readonly number[], f: number) =>
  (times[idx[Math.min(idx.length - 1, Math.floor(f * idx.length))] as number] ?? 0).toFixed(2);
const q = (f: number) => quantile(order, f);
const cpuSorted = [...cpuTimes].sort((a, b) => a - b);
const cq = (f: number) =>
  (cpuSorted[Math.min(cpuSorted.length - 1, Math.floor(f * cpuSorted.length))] ?? 0).toFixed(2);
console.log(
  `cycle bench: ${N} nodes, percentageOfNodesToScore ${values.percentage}, ${P} pods (${E} existing per node): ${(P / (total / 1000)).toFixed(0)} cycles/s, ` +
    `ms per cycle p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${q(1)}; unschedulable ${unschedulable}; ` +
    `heap +${((process.memoryUsage().heapUsed - heapBefore) / 2 ** 20).toFixed(0)} MiB; ` +
    `CPU ms per cycle p50 ${cq(0.5)} p99 ${cq(0.99)}`,
);
for (const kind of new Set(KINDS)) {
  const idx = order.filter((i) => KINDS[i % 5] === kind);
  console.log(
    `  ${kind.padEnd(14)} p50 ${quantile(idx, 0.5)} p99 ${quantile(idx, 0.99)} max ${quantile(idx, 1)}`,
  );
}
if (breakdown) {
  await breakdown.settle();
  const slowest = order.slice(Math.floor(order.length * 0.99));
  console.log(`slowest 1 % (${slowest.length} cycles), mean ms per cycle:\n${breakdown.summary(slowest)}`);
  console.log(`all cycles, mean ms per cycle:\n${breakdown.summary(order)}`);
}

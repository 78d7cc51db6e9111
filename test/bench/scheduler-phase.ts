// One benchmark phase: create N pods for one scheduler, wait until all are bound, check placements,
// delete them; and the pooling of a scheduler's rounds.
import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { CoreV1Api, type KubeConfig, type V1Pod, Watch } from '@kubernetes/client-node';
import { toNodeInfo, toPodInfo } from '../../src/cluster/convert.js';
import {
  addBuckets,
  type Buckets,
  combineSumCounts,
  parseBuckets,
  parseSumCounts,
  type SumCounts,
  subtractBuckets,
} from './histogram.js';
import {
  adminAgent,
  BENCH_NODE_PREFIX,
  type BenchCluster,
  fmt,
  log,
  type ProcStats,
  procStats,
  responseText,
  sleep,
  summarize,
} from './lib.js';
import { type MemoryBreakdown, parseMemoryBreakdown } from './memory-breakdown.js';

export const SCHED_NAMESPACE = 'bench-sched';

/**
 * The pods' shape. mixed: requests only (the default). anti-affinity: as scheduler_perf's
 * SchedulingPodAntiAffinity, every pod refuses a node holding another pod of its group (required,
 * kubernetes.io/hostname; groups of 10 by the shard label). spread: as TopologySpreading, maxSkew 1
 * over zones, DoNotSchedule. contract: the mixed pods with one in ten under required anti-affinity and one in
 * ten spread over zones, in groups of ten pods, so the contract's plugins are part of the figure.
 */
export type BenchWorkload = 'mixed' | 'anti-affinity' | 'spread' | 'contract';

/** The shape pod `i` of a workload gets, and the label that groups it with its peers. */
function shapeOf(
  i: number,
  workload: BenchWorkload,
): { kind: 'mixed' | 'anti-affinity' | 'spread'; shard: string } {
  if (workload !== 'contract') return { kind: workload, shard: String(i % 10) };
  // Ten pods per group (i = 10g + 0 for anti-affinity, 10g + 1 for spread): group g of a kind holds the
  // pods g, g + G, g + 2G … with G = 100 groups, so a group never outgrows a 100-node cluster.
  const kind = i % 10 === 0 ? 'anti-affinity' : i % 10 === 1 ? 'spread' : 'mixed';
  return { kind, shard: kind === 'mixed' ? String(i % 10) : `${kind[0]}${Math.floor(i / 10) % 100}` };
}

export interface PhaseOptions {
  pods: number;
  workload?: BenchWorkload;
  /** Pod creates in flight at once, the same for every scheduler. */
  concurrency: number;
  /** Give up on a phase after this long (its figures are then marked incomplete). */
  phaseTimeoutMs: number;
}

/** The scheduler bench's knobs (scheduler.bench.ts has the defaults and the named profiles). */
export interface SchedulerBenchOptions {
  pods: number;
  nodes: number;
  /** Pod creates in flight at once, the same for every scheduler. */
  concurrency: number;
  /** Give up on a phase after this long (its figures are then marked incomplete). */
  phaseTimeoutMs: number;
  /** Phases per mode for the two QPS-500 schedulers, in alternating order (the stock one runs once). */
  rounds: number;
  /** The pods' shape (scheduler-phase.ts): mixed requests, required anti-affinity, zone spread, or contract. */
  workload?: BenchWorkload;
  /** A live phase of the stock kube-scheduler (client QPS 50) too. */
  stock: boolean;
  /** Phases of the bare binder, the ceiling (bare-binder.ts). */
  ceiling: boolean;
}

export interface SchedulerProcess {
  label: string;
  schedulerName: string;
  pid: number;
  child?: ChildProcess;
  /** Pod-name prefix of this scheduler's phase. */
  prefix: string;
  /** Its own histogram of the algorithm's time (kube-scheduler's scheduling_algorithm_duration_seconds). */
  algorithmMetric?: {
    name: string;
    read: () => Promise<string>;
    /** On the same page: the algorithm's time on a CPU (nodeload's own histogram: wall less waiting for a core). */
    cpuName?: string;
    /** On the same page: the process's GC pauses by kind (prom-client's nodejs_gc_duration_seconds). */
    gcName?: string;
    /** On the same page: prom-client's default metrics under this prefix, for a memory breakdown. */
    memoryPrefix?: string;
  };
  /** Events it has queued and not yet written, where it reports them (nodeload writes them off the hot path). */
  eventBacklog?: () => Promise<number>;
  /**
   * What it says about itself when a phase ends incomplete (its queue, counters, watches), read before
   * the pods are deleted; written beside the logs and quoted in the bench's output.
   */
  diagnose?: () => Promise<string>;
}

// Requests cycle through these so nodes fill unevenly: ~78 % of the cluster's CPU and ~51 % of its memory
// is requested by 1000 pods on 100 nodes of 8 CPU / 32 GiB, enough that a scheduler that lost track of
// its own in-flight placements would over-commit nodes.
export const CPU = ['250m', '500m', '750m', '1'];
export const MEMORY = ['512Mi', '1Gi', '2Gi', '3Gi'];

function podBody(name: string, i: number, schedulerName: string, workload: BenchWorkload = 'mixed'): V1Pod {
  const { kind, shard } = shapeOf(i, workload);
  const constraints: Partial<NonNullable<V1Pod['spec']>> =
    kind === 'anti-affinity'
      ? {
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                {
                  labelSelector: { matchLabels: { app: 'bench', shard } },
                  topologyKey: 'kubernetes.io/hostname',
                },
              ],
            },
          },
        }
      : kind === 'spread'
        ? {
            topologySpreadConstraints: [
              {
                maxSkew: 1,
                topologyKey: 'topology.kubernetes.io/zone',
                whenUnsatisfiable: 'DoNotSchedule',
                labelSelector: { matchLabels: { app: 'bench', shard } },
              },
            ],
          }
        : {};
  return {
    metadata: { name, labels: { app: 'bench', shard } },
    spec: {
      ...constraints,
      schedulerName,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/bench:1',
          resources: {
            requests: {
              cpu: CPU[i % CPU.length] as string,
              memory: MEMORY[(i >> 2) % MEMORY.length] as string,
            },
          },
        },
      ],
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// a phase: create N pods for one scheduler, wait until all are bound, check, delete

/**
 * live: the scheduler runs while the pods are created, timed from each create call to its binding.
 * backlog: the scheduler process is stopped (SIGSTOP) while the pods are created and resumed once all
 * exist, timed from the resume: the drain rate, which the creator's pace does not bound.
 */
export type PhaseMode = 'live' | 'backlog';

export interface PhaseResult {
  scheduler: SchedulerProcess;
  mode: PhaseMode;
  bound: number;
  complete: boolean;
  /** live: first create call → last pod bound; backlog: resume → last pod bound. */
  wallSeconds: number;
  createSeconds: number;
  /** Last create answered → last pod bound: how far the scheduler lagged behind the creator (live). */
  tailSeconds: number;
  /** From t0 (first create, or the resume) to the first pod bound. */
  firstBoundSeconds: number;
  /** Pods/s between the first and the last binding seen. */
  drainRate: number;
  /** live: create call → bound, per pod; backlog: resume → bound. */
  latencies: number[];
  before: ProcStats;
  after: ProcStats;
  /** What the scheduler's algorithm histogram observed during the phase. */
  algorithm?: Buckets | undefined;
  /** Its time on a CPU over the same attempts (wall less waiting for a core), where the scheduler measures it. */
  algorithmCpu?: Buckets | undefined;
  /** Its process's GC pauses during the phase, by kind, where it reports them. */
  gc?: SumCounts | undefined;
  /** Where its memory is right after the phase, where it reports it. */
  memory?: MemoryBreakdown | undefined;
  /** Last pod bound → its Event queue empty, where it reports one (its CPU for them is in `after`). */
  eventTailSeconds?: number | undefined;
  /** Median bytes of a sample of this phase's Scheduled Events as the API server serves them. */
  scheduledEventBytes?: number | undefined;
  overcommitted: string[];
  nodesUsed: number;
  maxPodsOnNode: number;
  maxCpuPercent: number;
}

/** One scheduler's rounds of one mode, pooled: sums for pods, time and CPU, per-round means for the rest. */
export interface Combined {
  scheduler: SchedulerProcess;
  mode: PhaseMode;
  rounds: number;
  bound: number;
  complete: boolean;
  wallSeconds: number;
  createSeconds: number;
  tailSeconds: number;
  firstBoundSeconds: number;
  drainRate: number;
  latencyMs: ReturnType<typeof summarize>;
  /** The rounds' algorithm histograms, pooled. */
  algorithm?: Buckets | undefined;
  algorithmCpu?: Buckets | undefined;
  gc?: SumCounts | undefined;
  /** After the last round. */
  memory?: MemoryBreakdown | undefined;
  /** The longest of the rounds'. */
  eventTailSeconds?: number | undefined;
  /** The last round's. */
  scheduledEventBytes?: number | undefined;
  cpuSeconds: number;
  /** After the last round. */
  rssBytes: number;
  peakRssBytes: number;
  overcommitted: string[];
  nodesUsed: number;
  maxPodsOnNode: number;
  maxCpuPercent: number;
}

export function combine(rs: PhaseResult[]): Combined {
  const first = rs[0];
  const last = rs[rs.length - 1];
  if (!first || !last) throw new Error('no rounds to combine');
  const mean = (f: (r: PhaseResult) => number) => rs.reduce((s, r) => s + f(r), 0) / rs.length;
  const sum = (f: (r: PhaseResult) => number) => rs.reduce((s, r) => s + f(r), 0);
  return {
    scheduler: first.scheduler,
    mode: first.mode,
    rounds: rs.length,
    bound: sum((r) => r.bound),
    complete: rs.every((r) => r.complete),
    wallSeconds: sum((r) => r.wallSeconds),
    createSeconds: mean((r) => r.createSeconds),
    tailSeconds: mean((r) => r.tailSeconds),
    firstBoundSeconds: mean((r) => r.firstBoundSeconds),
    drainRate: mean((r) => r.drainRate),
    latencyMs: summarize(rs.flatMap((r) => r.latencies)),
    algorithm: rs.every((r) => r.algorithm)
      ? rs.reduce<Buckets>((sum, r) => addBuckets(sum, r.algorithm ?? new Map()), new Map())
      : undefined,
    algorithmCpu: rs.every((r) => r.algorithmCpu)
      ? rs.reduce<Buckets>((sum, r) => addBuckets(sum, r.algorithmCpu ?? new Map()), new Map())
      : undefined,
    gc: rs.every((r) => r.gc)
      ? rs.reduce<SumCounts>((sum, r) => combineSumCounts(sum, r.gc ?? new Map(), 1), new Map())
      : undefined,
    memory: last.memory,
    ...(rs.every((r) => r.eventTailSeconds !== undefined)
      ? { eventTailSeconds: Math.max(...rs.map((r) => r.eventTailSeconds ?? 0)) }
      : {}),
    scheduledEventBytes: last.scheduledEventBytes,
    cpuSeconds: sum((r) => r.after.cpuSeconds - r.before.cpuSeconds),
    rssBytes: last.after.rssBytes,
    peakRssBytes: Math.max(...rs.map((r) => r.after.peakRssBytes)),
    overcommitted: rs.flatMap((r) => r.overcommitted),
    nodesUsed: Math.min(...rs.map((r) => r.nodesUsed)),
    maxPodsOnNode: Math.max(...rs.map((r) => r.maxPodsOnNode)),
    maxCpuPercent: Math.max(...rs.map((r) => r.maxCpuPercent)),
  };
}

/** Watches the namespace's pods and records when each name is first seen with a nodeName; restarts on end. */
function watchBindings(
  kc: KubeConfig,
  boundAt: Map<string, number>,
): { stop: () => void; ready: Promise<void> } {
  let controller: AbortController | undefined;
  let stopped = false;
  // A watch ends after 30 s without data (client-node's inactivity timeout) or when the API server closes
  // it; it resumes from the last resourceVersion seen, as an informer does, instead of listing every
  // pod of the phase again while bindings go on.
  let resourceVersion: string | undefined;
  const start = async (): Promise<void> => {
    controller = await new Watch(kc).watch(
      `/api/v1/namespaces/${SCHED_NAMESPACE}/pods`,
      { allowWatchBookmarks: true, ...(resourceVersion ? { resourceVersion } : {}) },
      (type, obj: V1Pod) => {
        resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
        if (type === 'BOOKMARK') return;
        const name = obj.metadata?.name;
        if (name && obj.spec?.nodeName && !boundAt.has(name)) boundAt.set(name, performance.now());
      },
      (err) => {
        // 410 Gone: that version is compacted away; start over with a list.
        if ((err as { statusCode?: number } | null)?.statusCode === 410) resourceVersion = undefined;
        if (!stopped) setTimeout(() => void start().catch(() => {}), 100);
      },
    );
  };
  return {
    ready: start(),
    stop: () => {
      stopped = true;
      controller?.abort();
    },
  };
}

/**
 * Creates the pods with `concurrency` requests in flight over keep-alive connections (admin client
 * certificate): a lean client, so the creator takes as little of the 2 cores as it can.
 */
async function createAll(cluster: BenchCluster, bodies: V1Pod[], concurrency: number) {
  const { base, agent } = adminAgent(cluster, concurrency);
  const url = new URL(`/api/v1/namespaces/${SCHED_NAMESPACE}/pods`, base);
  const post = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const req = https.request(
        url,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          responseText(res, 201, 'create pod').then(() => resolve(), reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const payloads = bodies.map((b) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...b }));
  const createStart = new Float64Array(bodies.length);
  let lastCreateEnd = 0;
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < payloads.length) {
          const i = next++;
          createStart[i] = performance.now();
          await post(payloads[i] as string);
          lastCreateEnd = Math.max(lastCreateEnd, performance.now());
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return { createStart, lastCreateEnd };
}

async function checkPlacements(core: CoreV1Api, prefix: string) {
  const nodes = (await core.listNode({})).items
    .map((n) => toNodeInfo(n))
    .filter((n) => n.name.startsWith(BENCH_NODE_PREFIX));
  const pods = (await core.listPodForAllNamespaces({})).items.map((p) => toPodInfo(p));
  const overcommitted: string[] = [];
  let nodesUsed = 0;
  let maxPodsOnNode = 0;
  let maxCpuPercent = 0;
  for (const node of nodes) {
    const onNode = pods.filter((p) => p.nodeName === node.name && !p.terminal);
    const cpu = onNode.reduce((s, p) => s + p.requests.cpuMilli, 0);
    const mem = onNode.reduce((s, p) => s + p.requests.memoryBytes, 0);
    if (onNode.some((p) => p.name.startsWith(prefix))) nodesUsed++;
    maxPodsOnNode = Math.max(maxPodsOnNode, onNode.length);
    maxCpuPercent = Math.max(maxCpuPercent, (cpu / node.allocatable.cpuMilli) * 100);
    if (
      onNode.length > node.allocatable.pods ||
      cpu > node.allocatable.cpuMilli ||
      mem > node.allocatable.memoryBytes
    ) {
      overcommitted.push(`${node.name} (${onNode.length} pods, ${cpu}m CPU, ${fmt.mib(mem)} MiB)`);
    }
    // Anti-affinity workload: two pods of one shard (and phase) on one node break the contract.
    const shards = onNode
      .filter((p) => p.name.startsWith(prefix) && p.podAntiAffinity)
      .map((p) => p.labels['shard']);
    if (new Set(shards).size !== shards.length) overcommitted.push(`${node.name} (anti-affinity violated)`);
  }
  const unbound = pods.filter(
    (p) => p.namespace === SCHED_NAMESPACE && p.name.startsWith(prefix) && !p.nodeName,
  );
  return { overcommitted, nodesUsed, maxPodsOnNode, maxCpuPercent, unbound: unbound.length };
}

export async function deleteAllPods(core: CoreV1Api): Promise<void> {
  // A collection delete of thousands of pods outlives its request: the API server resets the stream
  // (HTTP/2 INTERNAL_ERROR, "fetch failed") while it goes on deleting. At 20,000 pods every one of six
  // retries 2 s apart failed so, and the 5,000-node / 20,000-pod bench died between phases with the
  // namespace emptying behind it. So a failed call is no verdict: wait for the namespace to be empty,
  // asking for the deletion again every 30 s while pods remain, and fail only at the deadline, with the
  // last error. A list can fail too while the API server is busy deleting (that is no answer: ask again).
  // The deadline is generous: on 2 busy cores 20,000 pods were still not gone after 600 s (the cluster
  // now deletes with 8 workers: 5,000 bound pods took 20 s instead of 37 s on an idle machine).
  const deadlineSeconds = 1200;
  const deadline = Date.now() + deadlineSeconds * 1000;
  let lastError: unknown;
  let nextDelete = 0;
  const remaining = () =>
    core.listNamespacedPod({ namespace: SCHED_NAMESPACE, limit: 1 }).then(
      (l) => l.items.length,
      () => 1,
    );
  for (;;) {
    if (Date.now() >= nextDelete) {
      nextDelete = Date.now() + 30_000;
      try {
        await core.deleteCollectionNamespacedPod({ namespace: SCHED_NAMESPACE, gracePeriodSeconds: 0 });
        lastError = undefined;
      } catch (err) {
        lastError = err;
      }
    }
    if ((await remaining()) === 0) break;
    if (Date.now() > deadline)
      throw new Error(
        `pods in ${SCHED_NAMESPACE} still there ${deadlineSeconds} s after deletion` +
          (lastError
            ? ` (last delete: ${lastError instanceof Error ? lastError.message : String(lastError)})`
            : ''),
      );
    await sleep(250);
  }
  // Let every scheduler's informer see the deletions before the next phase starts.
  await sleep(3000);
}

/**
 * What one Scheduled Event costs the API server and etcd: the median size, as JSON from the core API, of
 * the Events of up to 20 pods spread over the phase (the same measure for every scheduler).
 */
async function sampleScheduledEventBytes(
  cluster: BenchCluster,
  names: string[],
): Promise<number | undefined> {
  const { base, agent } = adminAgent(cluster, 4);
  const step = Math.max(1, Math.floor(names.length / 20));
  const sizes: number[] = [];
  try {
    for (let i = 0; i < names.length; i += step) {
      const selector = `involvedObject.name=${names[i]},reason=Scheduled`;
      const url = new URL(`/api/v1/namespaces/${SCHED_NAMESPACE}/events`, base);
      url.searchParams.set('fieldSelector', selector);
      const text = await new Promise<string>((resolve, reject) => {
        https
          .get(url, { agent }, (res) => responseText(res, 200, 'list events').then(resolve, reject))
          .on('error', reject);
      });
      for (const item of (JSON.parse(text) as { items: unknown[] }).items)
        sizes.push(Buffer.byteLength(JSON.stringify(item)));
    }
  } finally {
    agent.destroy();
  }
  return sizes.length ? summarize(sizes).p50 : undefined;
}

/** An incomplete phase: which pods were not bound and what the scheduler says, before they are deleted. */
async function recordIncomplete(
  cluster: BenchCluster,
  sched: SchedulerProcess,
  prefix: string,
  names: string[],
  boundAt: ReadonlyMap<string, number>,
): Promise<void> {
  const unbound = names.filter((n) => !boundAt.has(n));
  let said = '';
  try {
    said = (await sched.diagnose?.()) ?? '';
  } catch (err) {
    said = `could not ask it: ${String(err)}`;
  }
  const file = path.join(cluster.workDir, `incomplete-${prefix}-${Date.now()}.txt`);
  await writeFile(file, `unbound (${unbound.length}): ${unbound.join(' ')}\n\n${said}\n`);
  log(
    `INCOMPLETE ${sched.label}: ${unbound.length} unbound (first ${unbound.slice(0, 5).join(', ')}); ` +
      `written to ${file}\n${said.slice(0, 4000)}`,
  );
}

export async function runPhase(
  cluster: BenchCluster,
  kc: KubeConfig,
  sched: SchedulerProcess,
  mode: PhaseMode,
  opts: PhaseOptions,
  alive: () => void,
): Promise<PhaseResult> {
  const core = kc.makeApiClient(CoreV1Api);
  const prefix = `${sched.prefix}${mode === 'backlog' ? 'b' : ''}`;
  const names = Array.from({ length: opts.pods }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
  const bodies = names.map((n, i) => podBody(n, i, sched.schedulerName, opts.workload));
  const boundAt = new Map<string, number>();
  const watch = watchBindings(kc, boundAt);
  await watch.ready;
  await sleep(500);

  const readAlgorithm = async () => {
    const m = sched.algorithmMetric;
    if (!m) return undefined;
    const text = await m.read();
    return {
      algorithm: parseBuckets(text, m.name),
      cpu: m.cpuName ? parseBuckets(text, m.cpuName) : undefined,
      gc: m.gcName ? parseSumCounts(text, m.gcName, 'kind') : undefined,
      memory: m.memoryPrefix !== undefined ? parseMemoryBreakdown(text, m.memoryPrefix) : undefined,
    };
  };
  const algorithmBefore = await readAlgorithm();
  const before = procStats(sched.pid);
  let resumed = true;
  const resume = () => {
    if (!resumed) process.kill(sched.pid, 'SIGCONT');
    resumed = true;
  };
  let t0 = performance.now();
  let created: Awaited<ReturnType<typeof createAll>>;
  try {
    if (mode === 'backlog') {
      process.kill(sched.pid, 'SIGSTOP');
      resumed = false;
    }
    created = await createAll(cluster, bodies, opts.concurrency);
    if (mode === 'backlog') {
      if (boundAt.size > 0) throw new Error(`${boundAt.size} pods bound while ${sched.label} was stopped`);
      await sleep(1000);
      t0 = performance.now();
      resume();
    }
  } finally {
    resume();
  }
  const { createStart, lastCreateEnd } = created;
  const deadline = t0 + opts.phaseTimeoutMs;
  while (boundAt.size < opts.pods && performance.now() < deadline) {
    alive();
    await sleep(50);
  }
  // The Events it still owes for this phase are written before the next phase starts, so one scheduler's
  // deferred writes do not load the API server under another's timing; their CPU counts as this phase's.
  let eventTailSeconds: number | undefined;
  if (sched.eventBacklog) {
    const since = performance.now();
    while ((await sched.eventBacklog()) > 0 && performance.now() - since < opts.phaseTimeoutMs)
      await sleep(200);
    eventTailSeconds = (performance.now() - since) / 1000;
  }
  const after = procStats(sched.pid);
  watch.stop();
  const algorithmAfter = await readAlgorithm();

  const latencies: number[] = [];
  let firstBound = Number.POSITIVE_INFINITY;
  let lastBound = 0;
  names.forEach((n, i) => {
    const at = boundAt.get(n);
    if (at === undefined) return;
    latencies.push(at - (mode === 'live' ? (createStart[i] as number) : t0));
    firstBound = Math.min(firstBound, at);
    lastBound = Math.max(lastBound, at);
  });
  const complete = boundAt.size >= opts.pods;
  const end = complete ? lastBound : performance.now();
  if (!complete) await recordIncomplete(cluster, sched, prefix, names, boundAt);
  const checks = await checkPlacements(core, prefix);
  const scheduledEventBytes = await sampleScheduledEventBytes(cluster, names);
  const result: PhaseResult = {
    scheduler: sched,
    mode,
    bound: boundAt.size,
    complete,
    wallSeconds: (end - t0) / 1000,
    firstBoundSeconds: (firstBound - t0) / 1000,
    drainRate: boundAt.size > 1 ? ((boundAt.size - 1) * 1000) / (lastBound - firstBound) : Number.NaN,
    createSeconds: (lastCreateEnd - (createStart[0] as number)) / 1000,
    tailSeconds: (end - lastCreateEnd) / 1000,
    latencies,
    before,
    after,
    algorithm:
      algorithmAfter &&
      algorithmBefore &&
      subtractBuckets(algorithmAfter.algorithm, algorithmBefore.algorithm),
    algorithmCpu:
      algorithmAfter?.cpu && algorithmBefore?.cpu && subtractBuckets(algorithmAfter.cpu, algorithmBefore.cpu),
    gc:
      algorithmAfter?.gc &&
      algorithmBefore?.gc &&
      combineSumCounts(algorithmAfter.gc, algorithmBefore.gc, -1),
    memory: algorithmAfter?.memory,
    eventTailSeconds,
    scheduledEventBytes,
    ...checks,
  };
  const lat = summarize(latencies);
  log(
    `scheduler (${mode}): ${sched.label}: ${result.bound}/${opts.pods} bound in ${result.wallSeconds.toFixed(1)}s ` +
      `(${fmt.int(result.bound / result.wallSeconds)} pods/s; created in ${result.createSeconds.toFixed(1)}s), ` +
      `p50 ${fmt.ms(lat.p50)} ms, p99 ${fmt.ms(lat.p99)} ms, ` +
      `${checks.overcommitted.length} over-committed nodes` +
      (checks.unbound ? `, ${checks.unbound} unbound` : ''),
  );
  await deleteAllPods(core);
  return result;
}

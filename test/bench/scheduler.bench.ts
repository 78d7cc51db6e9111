// nodeload's scheduler against the real kube-scheduler on the same API server and the same KWOK nodes.
//
//   npm run bench                                   (with the webhook bench; writes RESULTS.md)
//   npx tsx test/bench/scheduler.bench.ts [--pods 1000] [--nodes 100] [--concurrency 16] [--rounds 2]
//
// Three schedulers watch the cluster for the whole run, each idle while another one's pods are created:
// the stock kube-scheduler (started by the control plane, client QPS 50 / burst 100), a second
// kube-scheduler with client QPS 500 / burst 1000 (nodeload's default bind budget), and the nodeload gateway
// (`src/main.ts`, every component, as deployed). Each phase creates the same N pods from this process with
// the same concurrency, with only the schedulerName changed, and times every pod from the start of its
// create call to the watch event that shows it bound ("live"). A second set of phases stops the scheduler
// process (SIGSTOP) while the pods are created and resumes it once they all exist ("backlog"): the drain
// rate, which the creator's pace cannot bound. The pods are deleted before the next phase.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { createLogger } from '../../src/server/log.js';
import { freePorts, waitForDefaultServiceAccount } from '../cluster/controlplane.js';
import { loadKubeConfig } from '../cluster/nodes.js';
import {
  type BenchCluster,
  type BenchReport,
  ensureBenchNodes,
  ensureNamespace,
  fmt,
  markdownTable,
  type ProcStats,
  procStats,
  REPO_ROOT,
  runWhenMain,
  spawnTs,
  stopChild,
  waitForUrl,
} from './lib.js';
import {
  type BenchWorkload,
  type Combined,
  CPU,
  combine,
  deleteAllPods,
  MEMORY,
  type PhaseResult,
  runPhase,
  SCHED_NAMESPACE,
  type SchedulerProcess,
} from './scheduler-phase.js';

export interface SchedulerBenchOptions {
  pods: number;
  nodes: number;
  /** Pod creates in flight at once, the same for every scheduler. */
  concurrency: number;
  /** Give up on a phase after this long (its figures are then marked incomplete). */
  phaseTimeoutMs: number;
  /** Phases per mode for the two QPS-500 schedulers, in alternating order (the stock one runs once). */
  rounds: number;
  /** The pods' shape (scheduler-phase.ts): mixed requests, required anti-affinity, or zone spread. */
  workload?: BenchWorkload;
}

export const SCHEDULER_DEFAULTS: SchedulerBenchOptions = {
  pods: 1000,
  nodes: 100,
  concurrency: 16,
  phaseTimeoutMs: 180_000,
  rounds: 2,
};

const NODELOAD_SCHEDULER = 'nodeload-scheduler';
/** As deployed: NODE_OPTIONS of manifests/base/deployment.yaml, less the memory cap. */
const GATEWAY_V8_FLAGS = ['--max-semi-space-size=64'];
const KUBE_SCHEDULER_FAST = 'kube-scheduler-qps500';
const MAIN_SCRIPT = path.join(REPO_ROOT, 'src', 'main.ts');

// ---------------------------------------------------------------------------------------------------------
// schedulers under test

export async function startFastKubeScheduler(cluster: BenchCluster): Promise<SchedulerProcess> {
  return await startKubeScheduler(cluster, {
    label: 'kube-scheduler, client QPS 500 / burst 1000',
    schedulerName: KUBE_SCHEDULER_FAST,
    prefix: 'kq',
    config: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: ${JSON.stringify(cluster.state.kubeconfig)}
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
profiles:
- schedulerName: ${KUBE_SCHEDULER_FAST}
`,
  });
}

/** A kube-scheduler of its own with this KubeSchedulerConfiguration (YAML), healthy. */
export async function startKubeScheduler(
  cluster: BenchCluster,
  s: Omit<SchedulerProcess, 'pid' | 'child'> & { config: string },
): Promise<SchedulerProcess> {
  const { state, workDir } = cluster;
  const [port] = (await freePorts(1)) as [number];
  const config = path.join(workDir, `${s.schedulerName}.yaml`);
  await writeFile(config, s.config);
  const logFile = path.join(workDir, `${s.schedulerName}.log`);
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(
      path.join(state.binDir, 'kube-scheduler'),
      [
        `--config=${config}`,
        `--authentication-kubeconfig=${state.kubeconfig}`,
        `--authorization-kubeconfig=${state.kubeconfig}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${port}`,
        '--profiling=false',
        '--v=1',
      ],
      { stdio: ['ignore', fd, fd] },
    );
  } finally {
    closeSync(fd);
  }
  await waitForUrl(`https://127.0.0.1:${port}/healthz`, (status) => status === 200, {
    what: s.label,
    child,
    logFile,
  });
  if (!child.pid) throw new Error(`${s.label} has no pid`);
  return { label: s.label, schedulerName: s.schedulerName, pid: child.pid, child, prefix: s.prefix };
}

/** The gateway as deployed (`src/main.ts`, every component); `extraArgs` add flags (the extender's). */
export async function startGateway(
  cluster: BenchCluster,
  extraArgs: string[] = [],
): Promise<SchedulerProcess & { httpPort: number }> {
  const [httpPort] = (await freePorts(1)) as [number];
  const logFile = path.join(cluster.workDir, 'gateway.log');
  const child = spawnTs(
    MAIN_SCRIPT,
    [
      `--kubeconfig=${cluster.state.kubeconfig}`,
      `--http-port=${httpPort}`,
      '--bind-address=127.0.0.1',
      '--anonymous-user-port=true', // reads /metrics and /scheduler/status without a token
      '--leader-elect=false',
      '--install-crd=false',
      `--scheduler-name=${NODELOAD_SCHEDULER}`,
      '--log-level=info',
      ...extraArgs,
    ],
    {
      logFile,
      // The V8 flags the Deployment sets (manifests/base/deployment.yaml, NODE_OPTIONS); with
      // NODELOAD_BENCH_PROFILE=1 also a V8 CPU profile, written to the kept scratch dir on exit.
      nodeArgs: [
        ...GATEWAY_V8_FLAGS,
        ...(process.env['NODELOAD_BENCH_PROFILE'] === '1'
          ? ['--cpu-prof', `--cpu-prof-dir=${path.join(cluster.workDir, 'profile')}`]
          : []),
      ],
    },
  );
  const base = `http://127.0.0.1:${httpPort}`;
  await waitForUrl(`${base}/readyz`, (s) => s === 200, {
    what: 'nodeload gateway',
    child,
    logFile,
    timeoutMs: 90_000,
  });
  await waitForUrl(
    `${base}/scheduler/status`,
    (s, body) => {
      if (s !== 200) return false;
      const st = JSON.parse(body) as { leader?: boolean; cacheSynced?: boolean };
      return st.leader === true && st.cacheSynced === true;
    },
    { what: 'nodeload scheduler leading with a synced cache', child, logFile },
  );
  if (!child.pid) throw new Error('gateway has no pid');
  return {
    label: 'nodeload gateway (all components, bind QPS 500 / burst 1000)',
    schedulerName: NODELOAD_SCHEDULER,
    pid: child.pid,
    child,
    prefix: 'nl',
    httpPort,
  };
}

// ---------------------------------------------------------------------------------------------------------
// the bench

export async function prepareCluster(
  cluster: BenchCluster,
  opts: SchedulerBenchOptions,
): Promise<KubeConfig> {
  const kubeconfig = cluster.state.kubeconfig;
  const kc = loadKubeConfig(kubeconfig);
  await ensureCrd(kc, createLogger('silent'));
  await ensureBenchNodes(kubeconfig, opts.nodes);
  await ensureNamespace(kubeconfig, SCHED_NAMESPACE);
  await waitForDefaultServiceAccount(kubeconfig, SCHED_NAMESPACE, 60_000);
  // A NodeLoadRule over the namespace, so nodeload's filter does its rule work for every pod (thresholds
  // above what the workload reaches: no pod is refused by it).
  try {
    await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace: SCHED_NAMESPACE,
      body: {
        apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
        kind: 'NodeLoadRule',
        metadata: { name: 'bench-headroom' },
        spec: { maxCPU: 90, maxMemory: 90, podSelector: { matchLabels: { app: 'bench' } } },
      },
    });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  const core = kc.makeApiClient(CoreV1Api);
  if ((await core.listNamespacedPod({ namespace: SCHED_NAMESPACE, limit: 1 })).items.length)
    await deleteAllPods(core);
  return kc;
}

export async function runSchedulerBench(
  cluster: BenchCluster,
  options: Partial<SchedulerBenchOptions> = {},
): Promise<BenchReport> {
  const opts = { ...SCHEDULER_DEFAULTS, ...options };
  const stock = cluster.state.components.find((c) => c.name === 'kube-scheduler');
  if (!stock) throw new Error('the cluster runs no kube-scheduler (start it with scheduler: true)');
  const kc = await prepareCluster(cluster, opts);

  const children: ChildProcess[] = [];
  try {
    const fast = await startFastKubeScheduler(cluster);
    if (fast.child) children.push(fast.child);
    const gateway = await startGateway(cluster);
    if (gateway.child) children.push(gateway.child);
    const alive = () => {
      for (const c of children)
        if (c.exitCode !== null) throw new Error(`a scheduler exited (${c.spawnargs[0]})`);
    };
    const schedulers: SchedulerProcess[] = [
      {
        label: 'kube-scheduler, stock (client QPS 50 / burst 100)',
        schedulerName: 'default-scheduler',
        pid: stock.pid,
        prefix: 'ks',
      },
      fast,
      gateway,
    ];
    const idle = new Map(schedulers.map((s) => [s.pid, procStats(s.pid)]));
    const [stockProcess] = schedulers as [SchedulerProcess];
    // The stock scheduler, paced by its client limit, runs once; the two at QPS 500 run `rounds` times in
    // alternating order, so neither always goes first on the cluster or right after the other.
    const pair = (round: number) => (round % 2 === 0 ? [fast, gateway] : [gateway, fast]);
    const live = new Map<SchedulerProcess, PhaseResult[]>(schedulers.map((s) => [s, []]));
    live.get(stockProcess)?.push(await runPhase(cluster, kc, stockProcess, 'live', opts, alive));
    for (let round = 0; round < opts.rounds; round++)
      for (const s of pair(round)) live.get(s)?.push(await runPhase(cluster, kc, s, 'live', opts, alive));
    // The drain is measured for the two schedulers this bench started itself.
    const backlog = new Map<SchedulerProcess, PhaseResult[]>([
      [fast, []],
      [gateway, []],
    ]);
    for (let round = 0; round < opts.rounds; round++)
      for (const s of pair(round))
        backlog.get(s)?.push(await runPhase(cluster, kc, s, 'backlog', opts, alive));
    const status = await fetch(`http://127.0.0.1:${gateway.httpPort}/scheduler/status`).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
    return report(opts, [...live.values()].map(combine), [...backlog.values()].map(combine), idle, status);
  } finally {
    for (const c of children.reverse()) await stopChild(c);
  }
}

const rate = (r: Combined) => r.bound / r.wallSeconds;
const perCpu = (r: Combined) => r.bound / r.cpuSeconds;
const label = (r: Combined, opts: SchedulerBenchOptions) =>
  r.scheduler.label +
  (r.rounds > 1 ? ` (${r.rounds} rounds)` : '') +
  (r.complete ? '' : ` — **incomplete: ${r.bound}/${r.rounds * opts.pods} bound**`);

function liveTable(opts: SchedulerBenchOptions, live: Combined[], idle: Map<number, ProcStats>): string {
  const rows = live.map((r) => [
    label(r, opts),
    fmt.int(rate(r)),
    fmt.ms(r.latencyMs.p50),
    fmt.ms(r.latencyMs.p99),
    `${r.createSeconds.toFixed(1)} / ${r.tailSeconds.toFixed(1)}`,
    fmt.int(perCpu(r)),
    `${fmt.mib(idle.get(r.scheduler.pid)?.rssBytes ?? Number.NaN)} / ${fmt.mib(r.rssBytes)} / ${fmt.mib(r.peakRssBytes)}`,
    `${r.overcommitted.length}`,
  ]);
  const [stock, fast, nodeload] = live as [Combined, Combined, Combined];
  const ratioRow = (anchor: Combined, name: string) => [
    `**nodeload ÷ ${name}**`,
    fmt.ratio(rate(nodeload) / rate(anchor)),
    fmt.ratio(nodeload.latencyMs.p50 / anchor.latencyMs.p50),
    fmt.ratio(nodeload.latencyMs.p99 / anchor.latencyMs.p99),
    '',
    fmt.ratio(perCpu(nodeload) / perCpu(anchor)),
    fmt.ratio(nodeload.rssBytes / anchor.rssBytes),
    '',
  ];
  return markdownTable(
    [
      'live: scheduler',
      'pods/s (first create → last bound)',
      'create→bound p50 ms',
      'p99 ms',
      'create s / tail s',
      'pods per scheduler CPU-second',
      'RSS MiB idle / after / peak',
      'over-committed nodes',
    ],
    [...rows, ratioRow(stock, 'stock kube-scheduler'), ratioRow(fast, 'kube-scheduler QPS 500')],
  );
}

function backlogTable(opts: SchedulerBenchOptions, backlog: Combined[]): string {
  const rows = backlog.map((r) => [
    label(r, opts),
    fmt.int(rate(r)),
    r.firstBoundSeconds.toFixed(2),
    fmt.int(r.drainRate),
    fmt.ms(r.latencyMs.p99),
    fmt.int(perCpu(r)),
    `${r.overcommitted.length}`,
  ]);
  const [fast, nodeload] = backlog as [Combined, Combined];
  return markdownTable(
    [
      'backlog: scheduler',
      'pods/s (resume → last bound)',
      'resume → first bound s',
      'pods/s (first → last bound)',
      'resume→bound p99 ms',
      'pods per scheduler CPU-second',
      'over-committed nodes',
    ],
    [
      ...rows,
      [
        '**nodeload ÷ kube-scheduler QPS 500**',
        fmt.ratio(rate(nodeload) / rate(fast)),
        fmt.ratio(nodeload.firstBoundSeconds / fast.firstBoundSeconds),
        fmt.ratio(nodeload.drainRate / fast.drainRate),
        fmt.ratio(nodeload.latencyMs.p99 / fast.latencyMs.p99),
        fmt.ratio(perCpu(nodeload) / perCpu(fast)),
        '',
      ],
    ],
  );
}

function report(
  opts: SchedulerBenchOptions,
  live: Combined[],
  backlog: Combined[],
  idle: Map<number, ProcStats>,
  gatewayStatus: Record<string, unknown>,
): BenchReport {
  const [stock, fast, nodeload] = live as [Combined, Combined, Combined];
  const [fastDrain, nodeloadDrain] = backlog as [Combined, Combined];
  const name = (r: Combined) =>
    r.scheduler.prefix === 'nl' ? 'nodeload' : r.scheduler.prefix === 'ks' ? 'stock' : 'QPS 500';
  const spread = [...live, ...backlog]
    .map(
      (r) =>
        `${name(r)} ${r.mode}: ${r.nodesUsed} nodes used, ≤ ${r.maxPodsOnNode} pods and ` +
        `≤ ${r.maxCpuPercent.toFixed(0)} % CPU requested per node`,
    )
    .join('; ');
  const overcommitted = [...live, ...backlog].flatMap((r) => r.overcommitted.map((o) => `${name(r)}: ${o}`));
  return {
    title: 'Scheduler: nodeload vs kube-scheduler',
    setup:
      `${fmt.int(opts.pods)} pods per phase on ${opts.nodes} KWOK nodes (8 CPU / 32 GiB / 110 pods each), ` +
      `created by one keep-alive HTTPS client with ${opts.concurrency} creates in flight; requests cycle through ` +
      `${CPU.join('/')} CPU and ${MEMORY.join('/')} memory (~78 % of the cluster's CPU). Same API server, ` +
      'same nodes, phases one after another (pods deleted in between); every scheduler watches throughout. ' +
      `The two QPS-500 schedulers run ${opts.rounds} rounds per mode in alternating order, the stock one a single ` +
      'live round; figures pool the rounds (latency percentiles over all their pods). ' +
      '**Live**: the scheduler runs while the pods are created. **Backlog**: the scheduler process is ' +
      'stopped (SIGSTOP) while all pods are created and resumed (SIGCONT) once they exist: its drain rate.',
    table: `${liveTable(opts, live, idle)}\n\n${backlogTable(opts, backlog)}`,
    ratios: [
      {
        metric: 'scheduler pods/s, live',
        value: rate(nodeload) / rate(stock),
        anchor: 'stock kube-scheduler',
      },
      {
        metric: 'scheduler pods/s, live',
        value: rate(nodeload) / rate(fast),
        anchor: 'kube-scheduler QPS 500',
      },
      {
        metric: 'scheduler pods/s, backlog drain',
        value: rate(nodeloadDrain) / rate(fastDrain),
        anchor: 'kube-scheduler QPS 500',
      },
      {
        metric: 'scheduler pods/s first → last bound, backlog',
        value: nodeloadDrain.drainRate / fastDrain.drainRate,
        anchor: 'kube-scheduler QPS 500',
      },
      {
        metric: 'scheduler p99 create→bound, live',
        value: nodeload.latencyMs.p99 / fast.latencyMs.p99,
        anchor: 'kube-scheduler QPS 500',
        note: 'lower is better',
      },
      {
        metric: 'scheduler pods per CPU-second, live',
        value: perCpu(nodeload) / perCpu(fast),
        anchor: 'kube-scheduler QPS 500',
      },
      {
        metric: 'scheduler pods per CPU-second, backlog',
        value: perCpu(nodeloadDrain) / perCpu(fastDrain),
        anchor: 'kube-scheduler QPS 500',
      },
      {
        metric: 'scheduler RSS after its live phase',
        value: nodeload.rssBytes / stock.rssBytes,
        anchor: 'stock kube-scheduler',
        note: 'lower is better',
      },
    ],
    notes: [
      '"create s / tail s": seconds from the first create call until the last create was answered, then ' +
        'until the last pod was bound. A tail near zero means the scheduler kept up with the creator, whose ' +
        'pace then bounds pods/s; on 2 cores a scheduler that burns more CPU also slows the API server and so ' +
        'the creator (compare the create seconds).',
      'Backlog: "resume → first bound" is how soon the first binding shows after SIGCONT; "first → last ' +
        'bound" is the drain rate once binding runs; resume→bound percentiles are dominated by the queue ' +
        'length (1 000 pods waiting at once).',
      `Over-commit check after each phase: per node, pods ≤ allocatable pods and the sum of CPU and memory ` +
        `requests ≤ allocatable — ${overcommitted.length ? `**violated**: ${overcommitted.join('; ')}` : 'held on every node in every phase'}. ` +
        `Placement: ${spread}.`,
      'Target set for nodeload (team performance notes): ≥ 150 pods/s sustained; kube-scheduler CI thresholds ' +
        'are 680–810 pods/s with in-process fake nodes and client QPS 5000, e2e clusters gate at 90–400 pods/s.',
      `nodeload's own counters after its phases: bound ${String(gatewayStatus['bound'])}, failed ` +
        `${String(gatewayStatus['failed'])}, conflicts ${String(gatewayStatus['conflicts'])}, unschedulable ` +
        `${String(gatewayStatus['unschedulable'])}.`,
      'The gateway is `src/main.ts` with every component (operator, scheduler, webhook, aggregated API, ' +
        `GraphQL) and its cache of ${opts.nodes} nodes and all pods, run under tsx, logging at info to a file; ` +
        'kube-scheduler is a Go binary with its own informers.',
    ],
  };
}

/** --pods, --nodes, --concurrency, --rounds, --workload from the command line (this bench's and extender's). */
export function schedulerBenchArgs(): Partial<SchedulerBenchOptions> {
  const { values } = parseArgs({
    options: {
      pods: { type: 'string' },
      nodes: { type: 'string' },
      concurrency: { type: 'string' },
      rounds: { type: 'string' },
      workload: { type: 'string' },
    },
  });
  const opts: Partial<SchedulerBenchOptions> = {};
  if (values.pods) opts.pods = Number(values.pods);
  if (values.nodes) opts.nodes = Number(values.nodes);
  if (values.concurrency) opts.concurrency = Number(values.concurrency);
  if (values.rounds) opts.rounds = Number(values.rounds);
  if (values.workload) opts.workload = values.workload as BenchWorkload;
  return opts;
}

runWhenMain(import.meta.url, { scheduler: true }, (cluster) =>
  runSchedulerBench(cluster, schedulerBenchArgs()),
);

// nodeload's scheduler against the real kube-scheduler on the same API server and the same KWOK nodes.
//
//   npm run bench                                   (with the webhook bench; writes RESULTS.md)
//   npx tsx test/bench/scheduler.bench.ts [--profile default|1k|5k|quick] [--quick] [--pods 1000] [--nodes 100]
//                                          [--concurrency 16] [--rounds 2] [--workload mixed|contract|…]
//
// Three schedulers watch the cluster for the whole run, each idle while another one's pods are created:
// the stock kube-scheduler (started by the control plane, client QPS 50 / burst 100), a second
// kube-scheduler with client QPS 500 / burst 1000 (nodeload's default bind budget), and the nodeload gateway
// (`dist/bundle/main.mjs`, every component, as deployed). Each phase creates the same N pods from this process with
// the same concurrency, with only the schedulerName changed, and times every pod from the start of its
// create call to the watch event that shows it bound ("live"). A second set of phases stops the scheduler
// process (SIGSTOP) while the pods are created and resumes it once they all exist ("backlog"): the drain
// rate, which the creator's pace cannot bound. The pods are deleted before the next phase. A bare binder
// (bare-binder.ts) that binds the same pods to precomputed nodes gives the ceiling of this API server and box.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { createLogger } from '../../src/server/log.js';
import { freePorts, waitForDefaultServiceAccount } from '../cluster/controlplane.js';
import { loadKubeConfig } from '../cluster/nodes.js';
import { metricSum } from '../cluster/prom-text.js';
import { failedBindsByError } from './gateway-figures.js';
import {
  type BenchCluster,
  type BenchReport,
  deploymentNodeOptions,
  ensureBenchNodes,
  ensureNamespace,
  gatewayEntry,
  procStats,
  responseText,
  runWhenMain,
  spawnJs,
  spawnTs,
  stopChild,
  waitForUrl,
} from './lib.js';
import {
  type BenchWorkload,
  combine,
  deleteAllPods,
  type PhaseMode,
  type PhaseResult,
  runPhase,
  SCHED_NAMESPACE,
  type SchedulerBenchOptions,
  type SchedulerProcess,
} from './scheduler-phase.js';
import { schedulerReport } from './scheduler-report.js';

export type { SchedulerBenchOptions } from './scheduler-phase.js';

export const SCHEDULER_DEFAULTS: SchedulerBenchOptions = {
  pods: 1000,
  nodes: 100,
  concurrency: 16,
  phaseTimeoutMs: 180_000,
  rounds: 2,
  stock: true,
  ceiling: true,
};

/**
 * Named sizes (`--profile`): the 1,000-node / 5,000-pod and 5,000-node / 20,000-pod runs with the
 * contract mix, and `quick` (`--quick`), 5,000 nodes with fewer pods, a few minutes on 2 cores.
 */
export const SCHEDULER_PROFILES: Record<string, Partial<SchedulerBenchOptions>> = {
  default: {},
  '1k': { nodes: 1000, pods: 5000, rounds: 1, workload: 'contract', phaseTimeoutMs: 400_000 },
  '5k': { nodes: 5000, pods: 20_000, rounds: 1, workload: 'contract', stock: false, phaseTimeoutMs: 900_000 },
  quick: { nodes: 5000, pods: 3000, rounds: 1, workload: 'contract', stock: false, phaseTimeoutMs: 300_000 },
};

const NODELOAD_SCHEDULER = 'nodeload-scheduler';
const KUBE_SCHEDULER_FAST = 'kube-scheduler-qps500';
const BARE_BINDER = 'bare-binder';
const BARE_BINDER_SCRIPT = new URL('./bare-binder.ts', import.meta.url).pathname;

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
  return {
    label: s.label,
    schedulerName: s.schedulerName,
    pid: child.pid,
    child,
    prefix: s.prefix,
    algorithmMetric: {
      name: 'scheduler_scheduling_algorithm_duration_seconds',
      read: () => readKubeSchedulerMetrics(cluster, port),
    },
  };
}

/**
 * kube-scheduler's /metrics with the admin client certificate (its delegated authentication trusts the
 * cluster CA; system:masters may read it). Its serving certificate is self-signed, made at start: not
 * verified, on loopback only.
 */
function readKubeSchedulerMetrics(cluster: BenchCluster, port: number): Promise<string> {
  const { pki } = cluster.state;
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        cert: readFileSync(pki.adminCert),
        key: readFileSync(pki.adminKey),
        rejectUnauthorized: false,
      },
      (res) => {
        responseText(res, 200, 'kube-scheduler /metrics').then(resolve, reject);
      },
    );
    req.on('error', reject);
  });
}

/** The gateway as deployed (`dist/bundle/main.mjs`, every component); `extraArgs` add flags (the extender's). */
export async function startGateway(
  cluster: BenchCluster,
  extraArgs: string[] = [],
): Promise<SchedulerProcess & { httpPort: number; inspectPort?: number; log: () => string }> {
  const [httpPort, inspectPort] = (await freePorts(2)) as [number, number];
  // NODELOAD_BENCH_ALLOC_PROFILE=1: the inspector on loopback, for allocation sampling (alloc-profile.ts).
  const inspect = process.env['NODELOAD_BENCH_ALLOC_PROFILE'] === '1';
  const logFile = path.join(cluster.workDir, 'gateway.log');
  // The log file is shared with the gateways of the benches before (appended): this one's part starts here.
  const logStart = existsSync(logFile) ? statSync(logFile).size : 0;
  const log = () => readFrom(logFile, logStart);
  const child = spawnJs(
    gatewayEntry(),
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
      // The V8 flags the Deployment sets (manifests/base/deployment.yaml, NODE_OPTIONS: its heap cap
      // included); with
      // NODELOAD_BENCH_PROFILE=1 also a V8 CPU profile, written to the kept scratch dir on exit.
      nodeArgs: [
        ...deploymentNodeOptions(),
        ...(process.env['NODELOAD_BENCH_PROFILE'] === '1'
          ? ['--cpu-prof', `--cpu-prof-dir=${path.join(cluster.workDir, 'profile')}`]
          : []),
        // NODELOAD_BENCH_HEAP_PROFILE=1: V8's sampling heap profile (where the live memory was allocated).
        ...(process.env['NODELOAD_BENCH_HEAP_PROFILE'] === '1'
          ? ['--heap-prof', `--heap-prof-dir=${path.join(cluster.workDir, 'heap-profile')}`]
          : []),
        ...(inspect ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
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
  // Its start-up work in the background: the decision history is read back from its Events, which the
  // benches before leave by the ten thousand (~2.2 KB each now, 3.7 KB then; kept an hour) — 9 s of the
  // API server and the gateway on 2 cores after the 1,000-node scheduler bench (at 3.7 KB). No figure is
  // taken before it is done.
  const deadline = Date.now() + 120_000;
  while (!/decision history rebuilt|could not rebuild the decision history/.test(log())) {
    if (Date.now() > deadline)
      throw new Error(`nodeload gateway: no decision history after 120 s (see ${logFile})`);
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!child.pid) throw new Error('gateway has no pid');
  return {
    label: 'nodeload gateway (all components, bind QPS 500 / burst 1000)',
    schedulerName: NODELOAD_SCHEDULER,
    pid: child.pid,
    child,
    prefix: 'nl',
    httpPort,
    ...(inspect ? { inspectPort } : {}),
    algorithmMetric: {
      name: 'nodeload_scheduler_scheduling_algorithm_duration_seconds',
      read: () => fetch(`${base}/metrics`).then((r) => r.text()),
      cpuName: 'nodeload_scheduler_scheduling_algorithm_cpu_seconds',
      gcName: 'nodeload_nodejs_gc_duration_seconds',
      memoryPrefix: 'nodeload_',
    },
    eventBacklog: async () =>
      metricSum(await fetch(`${base}/metrics`).then((r) => r.text()), 'nodeload_scheduler_pending_writes', {
        kind: 'event',
      }),
    log,
    diagnose: async () => {
      const status = await fetch(`${base}/scheduler/status`).then((r) => r.text());
      const metrics = (await fetch(`${base}/metrics`).then((r) => r.text()))
        .split('\n')
        .filter(
          (l) =>
            /^nodeload_(cache_|scheduler_pending|scheduler_binds_in_flight)/.test(l) &&
            /pods|kind|queue|^nodeload_scheduler_binds/.test(l),
        );
      const pending = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ pendingPods { name queue reason attempts since } }' }),
      }).then((r) => r.text());
      return [`/scheduler/status: ${status}`, ...metrics, `pending: ${pending.slice(0, 3000)}`].join('\n');
    },
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
  const stockComponent = cluster.state.components.find((c) => c.name === 'kube-scheduler');
  if (opts.stock && !stockComponent)
    throw new Error('the cluster runs no kube-scheduler (start it with scheduler: true)');
  const kc = await prepareCluster(cluster, opts);

  const children: ChildProcess[] = [];
  try {
    const fast = await startFastKubeScheduler(cluster);
    if (fast.child) children.push(fast.child);
    const gateway = await startGateway(cluster);
    if (gateway.child) children.push(gateway.child);
    const bare = opts.ceiling ? await startBareBinder(cluster, opts.nodes) : undefined;
    if (bare?.child) children.push(bare.child);
    const alive = () => {
      for (const c of children)
        if (c.exitCode !== null) throw new Error(`a scheduler exited (${c.spawnargs.join(' ')})`);
    };
    const stock: SchedulerProcess | undefined =
      opts.stock && stockComponent
        ? {
            label: 'kube-scheduler, stock (client QPS 50 / burst 100)',
            schedulerName: 'default-scheduler',
            pid: stockComponent.pid,
            prefix: 'ks',
          }
        : undefined;
    const all = [stock, fast, gateway, bare].filter((s): s is SchedulerProcess => s !== undefined);
    const idle = new Map(all.map((s) => [s.pid, procStats(s.pid)]));
    const phase = (s: SchedulerProcess, mode: PhaseMode) => runPhase(cluster, kc, s, mode, opts, alive);
    // The stock scheduler, paced by its client limit, and the bare binder run once; the two at QPS 500 run
    // `rounds` times in alternating order, so neither always goes first or right after the other.
    const pair = (round: number) => (round % 2 === 0 ? [fast, gateway] : [gateway, fast]);
    const rounds = async (mode: PhaseMode) => {
      const byScheduler = new Map<SchedulerProcess, PhaseResult[]>([
        [fast, []],
        [gateway, []],
      ]);
      for (let round = 0; round < opts.rounds; round++)
        for (const s of pair(round)) byScheduler.get(s)?.push(await phase(s, mode));
      return {
        fast: combine(byScheduler.get(fast) ?? []),
        nodeload: combine(byScheduler.get(gateway) ?? []),
        bare: bare ? combine([await phase(bare, mode)]) : undefined,
      };
    };
    const stockLive = stock ? combine([await phase(stock, 'live')]) : undefined;
    const live = { stock: stockLive, ...(await rounds('live')) };
    const backlog = await rounds('backlog');
    const status = await fetch(`http://127.0.0.1:${gateway.httpPort}/scheduler/status`).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
    const metrics = await fetch(`http://127.0.0.1:${gateway.httpPort}/metrics`).then((r) => r.text());
    return schedulerReport(opts, live, backlog, idle, {
      ...status,
      eventsDropped: metricSum(metrics, 'nodeload_scheduler_events_dropped_total'),
      requestRetries: metricSum(metrics, 'nodeload_rest_client_request_retries_total'),
      failedBinds: failedBindsByError(gateway.log()),
    });
  } finally {
    for (const c of children.reverse()) await stopChild(c);
  }
}

/** What the file holds past `offset`: the part of an appended log one process wrote. */
function readFrom(file: string, offset: number): string {
  const fd = openSync(file, 'r');
  try {
    const bytes = Buffer.alloc(Math.max(0, fstatSync(fd).size - offset));
    readSync(fd, bytes, 0, bytes.length, offset);
    return bytes.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The ceiling: bare-binder.ts in a process of its own, its watch open. */
async function startBareBinder(cluster: BenchCluster, nodes: number): Promise<SchedulerProcess> {
  const { state } = cluster;
  const logFile = path.join(cluster.workDir, 'bare-binder.log');
  const child = spawnTs(BARE_BINDER_SCRIPT, [], {
    logFile,
    stdout: 'pipe',
    env: {
      BENCH_APISERVER: state.apiserverUrl,
      BENCH_CA: state.pki.caCert,
      BENCH_CERT: state.pki.adminCert,
      BENCH_KEY: state.pki.adminKey,
      BENCH_NAMESPACE: SCHED_NAMESPACE,
      BENCH_NODES: String(nodes),
      BENCH_SCHEDULER_NAME: BARE_BINDER,
    },
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bare binder not ready (see ${logFile})`)), 30_000);
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      if (d.includes('"ready":true')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`bare binder exited with ${code} (see ${logFile})`)));
  });
  if (!child.pid) throw new Error('bare binder has no pid');
  return {
    label: 'bare binder (no decisions: precomputed nodes, QPS 500 / burst 1000) — the ceiling',
    schedulerName: BARE_BINDER,
    pid: child.pid,
    child,
    prefix: 'bb',
  };
}

/** --profile/--quick, then --pods, --nodes, --concurrency, --rounds, --workload (this bench's and extender's). */
export function schedulerBenchArgs(): Partial<SchedulerBenchOptions> {
  const { values } = parseArgs({
    options: {
      profile: { type: 'string' },
      quick: { type: 'boolean' },
      pods: { type: 'string' },
      nodes: { type: 'string' },
      concurrency: { type: 'string' },
      rounds: { type: 'string' },
      workload: { type: 'string' },
    },
  });
  const profile = values.quick ? 'quick' : (values.profile ?? 'default');
  const preset = SCHEDULER_PROFILES[profile];
  if (!preset) throw new Error(`--profile ${profile}: one of ${Object.keys(SCHEDULER_PROFILES).join(', ')}`);
  const opts: Partial<SchedulerBenchOptions> = { ...preset };
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

// Shared pieces of the benchmarks: the local cluster they run against, the KWOK nodes, child processes
// and their /proc figures, latency summaries and the Markdown the reports are made of. Everything here
// talks to 127.0.0.1 only.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import {
  type ClusterState,
  clusterStatus,
  killClusterSync,
  probe,
  readClusterState,
  startCluster,
  stopCluster,
} from '../cluster/controlplane.js';
import {
  createFakeNodes,
  type FakeNodeSpec,
  isApiException,
  isNodeReady,
  listFakeNodes,
  loadKubeConfig,
} from '../cluster/nodes.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BENCH_NODE_PREFIX = 'bench-node';
export const ZONES = ['zone-a', 'zone-b', 'zone-c', 'zone-d'];
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

/** True when the module at `url` is the script node was started with (a bench run on its own). */
export function isMain(url: string): boolean {
  const entry = process.argv[1];
  return entry !== undefined && pathToFileURL(path.resolve(entry)).href === url;
}

// ---------------------------------------------------------------------------------------------------------
// statistics

export interface LatencySummary {
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export function summarize(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
  };
}

// ---------------------------------------------------------------------------------------------------------
// processes

export interface ProcStats {
  rssBytes: number;
  /** Peak resident set (VmHWM) since the process started. */
  peakRssBytes: number;
  /** User + system CPU time consumed so far. */
  cpuSeconds: number;
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** RSS, peak RSS and CPU time of a live process, from /proc. */
export function procStats(pid: number): ProcStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after "(comm)": state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM'), cpuSeconds: ticks / ticksPerSecond() };
}

/** The whole machine's CPU time, busy and in all, in CPU-seconds since boot (/proc/stat's first line). */
export interface MachineCpu {
  busySeconds: number;
  totalSeconds: number;
}

export function machineCpu(): MachineCpu {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  // cpu  user nice system idle iowait irq softirq steal (guest time is already counted in user).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  const hz = ticksPerSecond();
  return { busySeconds: busy / hz, totalSeconds: (busy + (idle ?? 0) + (iowait ?? 0)) / hz };
}

/** Cores kept busy between two readings (of os.availableParallelism() in all). */
export function busyCores(start: MachineCpu, end: MachineCpu, cores: number): number {
  const total = end.totalSeconds - start.totalSeconds;
  return total > 0 ? ((end.busySeconds - start.busySeconds) / total) * cores : Number.NaN;
}

/**
 * The V8 flags the Deployment gives the gateway (manifests/base/deployment.yaml, NODE_OPTIONS): the
 * benches run it as deployed, old-generation cap included. NODELOAD_BENCH_NODE_OPTIONS overrides them
 * (e.g. to measure another cap).
 */
export function deploymentNodeOptions(): string[] {
  const override = process.env['NODELOAD_BENCH_NODE_OPTIONS'];
  if (override !== undefined) return override.split(/\s+/).filter(Boolean);
  const yaml = readFileSync(path.join(REPO_ROOT, 'manifests', 'base', 'deployment.yaml'), 'utf8');
  const value = /- name: NODE_OPTIONS\s*\n\s*value: (.+)/.exec(yaml)?.[1];
  if (!value) throw new Error('manifests/base/deployment.yaml sets no NODE_OPTIONS');
  return value.trim().split(/\s+/);
}

type SpawnOptions = {
  logFile: string;
  env?: NodeJS.ProcessEnv;
  stdout?: 'pipe' | 'log';
  nodeArgs?: string[];
};

/**
 * Starts a script under the same Node as this process (the pinned Node 24 when run through npm),
 * output appended to logFile. The child is the node process itself, so its PID is the one whose memory
 * and CPU we read.
 */
function spawnScript(script: string, args: string[], opts: SpawnOptions, loader: string[]): ChildProcess {
  const fd = openSync(opts.logFile, 'a');
  try {
    return spawn(process.execPath, [...(opts.nodeArgs ?? []), ...loader, script, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', opts.stdout === 'pipe' ? 'pipe' : fd, fd],
    });
  } finally {
    closeSync(fd);
  }
}

/** A TypeScript entry point under tsx (bench helpers: load generators, the bare binder, targets). */
export function spawnTs(script: string, args: string[], opts: SpawnOptions): ChildProcess {
  return spawnScript(script, args, opts, ['--import', 'tsx']);
}

/** A compiled JavaScript entry point under plain node (the gateway, as the image runs it). */
export function spawnJs(script: string, args: string[], opts: SpawnOptions): ChildProcess {
  return spawnScript(script, args, opts, []);
}

let builtGateway: string | undefined;

/**
 * The gateway as the image runs it: `node dist/bundle/main.mjs`, compiled from this checkout by `npm run
 * build` (tsconfig.build.json) and bundled by `npm run build:bundle` once per bench process. Not
 * src/main.ts under tsx: its loader, the transpiled sources and their source maps held ~57 MiB more RSS
 * at 1,000 nodes (memory bench, idle 279 vs 222 MiB), which kube-scheduler, a compiled binary, does not
 * carry either; nor dist/main.js with node_modules, whose ~1,900 module sources held ~30 MiB more heap
 * and external memory than the bundle at start.
 */
export function gatewayEntry(): string {
  if (!builtGateway) {
    log('compiling and bundling the gateway (npm run build, npm run build:bundle → dist/bundle/)');
    // This Node (the pinned one) first on PATH: tsc, the script's `node -e` and esbuild's launcher run on it.
    const PATH = [
      path.dirname(process.execPath),
      path.join(REPO_ROOT, 'node_modules', '.bin'),
      process.env['PATH'],
    ].join(path.delimiter);
    for (const script of ['build', 'build:bundle'])
      execFileSync('npm', ['run', '-s', script], {
        cwd: REPO_ROOT,
        stdio: 'inherit',
        env: { ...process.env, PATH },
      });
    builtGateway = path.join(REPO_ROOT, 'dist', 'bundle', 'main.mjs');
  }
  return builtGateway;
}

/**
 * dist/: the gateway's compiled modules (npm run build, which gatewayEntry runs before bundling), for a
 * target that starts only part of the gateway (the webhook bench's) and so cannot run the bundle.
 */
export function compiledGatewayDir(): string {
  gatewayEntry();
  return path.join(REPO_ROOT, 'dist');
}

/** SIGTERM to a child we started, SIGKILL if it has not exited after graceMs. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Polls `url` (loopback only) until check(status, body) holds; throws after timeoutMs. */
export async function waitForUrl(
  url: string,
  check: (status: number, body: string) => boolean,
  opts: { timeoutMs?: number; what: string; child?: ChildProcess; logFile?: string },
): Promise<void> {
  if (!/^https?:\/\/127\.0\.0\.1[:/]/.test(url)) throw new Error(`refusing a non-loopback URL: ${url}`);
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let last = '';
  for (;;) {
    if (opts.child && opts.child.exitCode !== null) {
      throw new Error(`${opts.what}: process exited with ${opts.child.exitCode}${logHint(opts.logFile)}`);
    }
    const r = await probe(url, { insecure: true }, 2000);
    if (check(r.status, r.body)) return;
    last = `${r.status || 'no answer'} ${r.body.slice(0, 200)}`;
    if (Date.now() > deadline) throw new Error(`${opts.what}: not ready (${last})${logHint(opts.logFile)}`);
    await sleep(250);
  }
}

function logHint(file: string | undefined): string {
  if (!file) return '';
  try {
    return `\n--- last lines of ${file} ---\n${readFileSync(file, 'utf8').trimEnd().split('\n').slice(-20).join('\n')}`;
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------------------------
// cluster

export interface BenchCluster {
  state: ClusterState;
  /** Scratch directory for logs and configs of this run. */
  workDir: string;
  /** Stops the cluster when this run started it; removes the scratch directory unless NODELOAD_BENCH_KEEP=1. */
  release(): Promise<void>;
}

/**
 * The cluster a bench runs against: the one in $NODELOAD_BENCH_CLUSTER_DIR when set (it must be healthy;
 * it is left running), else a private one in a temp dir, stopped by release().
 */
export async function acquireCluster(opts: { scheduler: boolean }): Promise<BenchCluster> {
  const keep = process.env['NODELOAD_BENCH_KEEP'] === '1';
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'nodeload-bench-'));
  const cleanWorkDir = async () => {
    if (!keep) await rm(workDir, { recursive: true, force: true });
    else log(`kept ${workDir}`);
  };
  const reuse = process.env['NODELOAD_BENCH_CLUSTER_DIR'];
  if (reuse) {
    const dir = path.resolve(reuse);
    const status = await clusterStatus(dir);
    const state = readClusterState(dir);
    if (!status || !state || !status.readyz.ok || status.components.some((c) => !c.alive)) {
      throw new Error(
        `NODELOAD_BENCH_CLUSTER_DIR=${reuse}: no healthy cluster there (npm run cluster:status)`,
      );
    }
    if (opts.scheduler && !state.components.some((c) => c.name === 'kube-scheduler')) {
      throw new Error(
        `NODELOAD_BENCH_CLUSTER_DIR=${reuse}: started without kube-scheduler (cluster:up --scheduler)`,
      );
    }
    log(`reusing the cluster in ${dir}`);
    return { state, workDir, release: cleanWorkDir };
  }
  const dir = path.join(workDir, 'cluster');
  const onExit = () => killClusterSync(dir);
  process.once('exit', onExit);
  const started = Date.now();
  const cluster = await startCluster({ dir, scheduler: opts.scheduler, log: (l) => log(l) });
  log(`private cluster up in ${((Date.now() - started) / 1000).toFixed(1)}s (${dir})`);
  return {
    state: cluster,
    workDir,
    async release() {
      await stopCluster(dir, { graceMs: 5000 });
      process.off('exit', onExit);
      await cleanWorkDir();
    },
  };
}

/**
 * The cluster's API server URL and a keep-alive agent with the admin client certificate, for the benches'
 * lean clients (pod creation, list timing); refuses anything but loopback.
 */
export function adminAgent(cluster: BenchCluster, maxSockets: number): { base: URL; agent: https.Agent } {
  const { state } = cluster;
  const base = new URL(state.apiserverUrl);
  if (base.hostname !== '127.0.0.1') throw new Error(`refusing a non-loopback API server: ${base.host}`);
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets,
    ca: readFileSync(state.pki.caCert),
    cert: readFileSync(state.pki.adminCert),
    key: readFileSync(state.pki.adminKey),
  });
  return { base, agent };
}

/** Ready KWOK nodes bench-node-000…: 8 CPU, 32 GiB, 110 pods, spread over four zones. Idempotent. */
export async function ensureBenchNodes(kubeconfig: string, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${BENCH_NODE_PREFIX}-${String(i).padStart(3, '0')}`);
  const existing = new Set((await listFakeNodes(kubeconfig, BENCH_NODE_PREFIX)).map((n) => n.metadata?.name));
  const specs: FakeNodeSpec[] = names
    .map((name, i) => ({
      name,
      cpu: 8,
      memory: '32Gi',
      pods: 110,
      labels: {
        [ZONE_LABEL]: ZONES[i % ZONES.length] as string,
        'node.kubernetes.io/instance-type': 'kwok-8x32',
      },
    }))
    .filter((s) => !existing.has(s.name));
  // A few writers at once: node creation is setup, not measured.
  const batches = 8;
  await Promise.all(
    Array.from({ length: batches }, (_, b) =>
      createFakeNodes(
        kubeconfig,
        specs.filter((_, i) => i % batches === b),
      ),
    ),
  );
  await waitForBenchNodesReady(kubeconfig, names, Math.max(120_000, count * 150));
  return names;
}

/**
 * Every named node seen Ready, and without the not-ready taint admission gives every new node, at least
 * once, from one list per pass: at thousands of KWOK nodes a read per node per pass takes minutes. The
 * taint is lifted by the node lifecycle controller a while after the node turns Ready; before this waited
 * for it, 3,400 of 5,000 nodes still carried it during the phases, and every scheduler examined mostly
 * nodes it had to reject.
 */
async function waitForBenchNodesReady(kubeconfig: string, names: string[], timeoutMs: number): Promise<void> {
  const wanted = new Set(names);
  const seenReady = new Set<string>();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const n of await listFakeNodes(kubeconfig, BENCH_NODE_PREFIX).catch(() => []))
      if (
        n.metadata?.name &&
        wanted.has(n.metadata.name) &&
        isNodeReady(n) &&
        !n.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready')
      )
        seenReady.add(n.metadata.name);
    if (seenReady.size === wanted.size) return;
    if (Date.now() > deadline)
      throw new Error(
        `${wanted.size - seenReady.size} of ${wanted.size} bench nodes never Ready and untainted in ${timeoutMs / 1000} s`,
      );
    await sleep(1000);
  }
}

/** Creates the namespace if missing. */
export async function ensureNamespace(kubeconfig: string, name: string): Promise<void> {
  const api = loadKubeConfig(kubeconfig).makeApiClient(CoreV1Api);
  try {
    await api.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if (!isApiException(err, 409)) throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------
// reporting

export interface BenchReport {
  title: string;
  /** One line saying what was measured and how. */
  setup: string;
  /** Markdown table. */
  table: string;
  /** nodeload ÷ anchor figures for the summary, e.g. { 'req/s': 0.41 }. */
  ratios: { metric: string; value: number; anchor: string; note?: string }[];
  notes: string[];
}

export function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const align = header.map((_, i) => (i === 0 ? '---' : '--:'));
  return [line(header), line(align), ...rows.map(line)].join('\n');
}

export const fmt = {
  int: (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a'),
  ms: (n: number) =>
    Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0)) : 'n/a',
  mib: (bytes: number) => (Number.isFinite(bytes) ? (bytes / 2 ** 20).toFixed(0) : 'n/a'),
  ratio: (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : 'n/a'),
};

export function renderReport(r: BenchReport): string {
  const notes = r.notes.map((n) => `- ${n}`).join('\n');
  return `## ${r.title}\n\n${r.setup}\n\n${r.table}\n${notes ? `\n${notes}\n` : ''}`;
}

export interface MachineInfo {
  date: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  loadAverage: number[];
}

export function machineInfo(): MachineInfo {
  return {
    date: new Date().toISOString(),
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: os.totalmem() / 2 ** 30,
    node: process.version,
    loadAverage: os.loadavg(),
  };
}

/**
 * `npx tsx test/bench/<name>.bench.ts`: when `url` is the entry module, runs the bench on a cluster of
 * its own (with the stock kube-scheduler if asked) and prints its report; a failure sets the exit code.
 */
export function runWhenMain(
  url: string,
  opts: { scheduler: boolean },
  bench: (cluster: BenchCluster) => Promise<BenchReport>,
): void {
  if (!isMain(url)) return;
  (async () => {
    const cluster = await acquireCluster(opts);
    try {
      console.log(renderReport(await bench(cluster)));
    } finally {
      await cluster.release();
    }
  })().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

/** A response's body as text, once it has ended; rejects if `res.statusCode` is not `ok` (the text says what). */
export function responseText(res: IncomingMessage, ok: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      text += d;
    });
    res.on('error', reject);
    res.on('end', () =>
      res.statusCode === ok
        ? resolve(text)
        : reject(new Error(`${what}: HTTP ${res.statusCode} ${text.slice(0, 300)}`)),
    );
  });
}

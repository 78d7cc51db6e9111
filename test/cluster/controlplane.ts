// A real local Kubernetes control plane for development and integration tests, no Docker, no images:
// etcd, kube-apiserver, kube-controller-manager and KWOK (optionally kube-scheduler), built from source by
// build.sh and run as detached processes bound to 127.0.0.1 only, on free ports picked at start, so several
// clusters can run side by side. Recipe: /work/shared/notes/controlplane.md.
//
// Layout of a cluster directory:
//   pki/                certificates and keys (openssl CLI), incl. serving.crt/.key for the nodeload gateway
//   admin.kubeconfig    system:masters client, absolute paths
//   state.json          ports, PIDs, paths: what `stopCluster` (or `cli.ts down` from another process) reads
//   logs/<component>.log
//   etcd/ kwok/         data
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { access, constants, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { KWOK_STAGES_YAML } from './kwok-stages.js';
import { createFakeNodes, type FakeNodeSpec, loadKubeConfig, waitForNodesReady } from './nodes.js';
import { generatePki, kubeconfigYaml, type PkiPaths } from './pki.js';

export { generatePki, KWOK_STAGES_YAML, type PkiPaths };

export type ComponentName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kwok';

export interface ComponentState {
  name: ComponentName;
  pid: number;
  /** Absolute path of the executable (checked against /proc/<pid>/cmdline before any signal is sent). */
  bin: string;
  args: string[];
  log: string;
  ports: Record<string, number>;
  /** URL polled for readiness / shown by `status`. */
  healthUrl: string;
}

export interface ClusterState {
  version: 1;
  dir: string;
  binDir: string;
  pkiDir: string;
  pki: PkiPaths;
  kubeconfig: string;
  kubectl: string;
  apiserverUrl: string;
  ports: {
    etcdClient: number;
    etcdPeer: number;
    apiserver: number;
    controllerManager: number;
    kwok: number;
    scheduler?: number;
  };
  components: ComponentState[];
  startedAt: string;
  readyAt?: string;
  stoppedAt?: string;
}

export interface Cluster extends ClusterState {
  /** Stops this cluster (same as stopCluster(dir)). */
  stop(): Promise<void>;
}

export interface StartClusterOptions {
  /** Cluster directory; created if missing. Files of a previous (stopped) cluster there are replaced. */
  dir: string;
  /** Fake nodes created (and waited Ready) once the cluster is up. */
  nodes?: FakeNodeSpec[];
  /** Also run the stock kube-scheduler (default false: nodeload is the scheduler under test). */
  scheduler?: boolean;
  /**
   * With `scheduler`: its KubeSchedulerConfiguration (YAML), given the cluster's admin kubeconfig and PKI
   * (kube-scheduler ignores --kubeconfig once it has --config: set clientConnection.kubeconfig).
   */
  schedulerConfig?: (cluster: { kubeconfig: string; pki: PkiPaths }) => string;
  /** Use these binaries instead of running build.sh (default: $NODELOAD_CONTROLPLANE_BIN, else build.sh). */
  binDir?: string;
  /** Progress lines (default: to stderr). */
  log?: (line: string) => void;
  /** Readiness deadline per component (default 120 s; the apiserver takes 5-20 s on 2 cores). */
  readyTimeoutMs?: number;
}

export const CLUSTER_SERVICE_CIDR = '10.0.0.0/24';
export const KWOK_POD_CIDR = '10.244.0.0/16';
const STATE_FILE = 'state.json';
const BUILD_SCRIPT = fileURLToPath(new URL('./build.sh', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl', 'kwok'];

export class ClusterStartError extends Error {
  constructor(
    readonly component: string,
    readonly logPath: string | undefined,
    reason: string,
  ) {
    super(
      `control plane: ${component} failed: ${reason}` +
        (logPath ? `\n--- last lines of ${logPath} ---\n${tailFile(logPath, 30)}` : ''),
    );
    this.name = 'ClusterStartError';
  }
}

// ---------------------------------------------------------------------------------------------------------
// build

/** Runs build.sh (a no-op when the binaries are cached) and returns the bin dir (its last stdout line). */
export async function buildControlPlane(log: (line: string) => void = defaultLog): Promise<string> {
  return await new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderrTail = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderrTail = (stderrTail + d).slice(-4000);
      for (const line of d.split('\n')) if (line.trim()) log(line);
    });
    child.on('error', (err) => reject(new ClusterStartError('build.sh', undefined, err.message)));
    child.on('close', (code, signal) => {
      const binDir = stdout.trim().split('\n').pop()?.trim() ?? '';
      if (code !== 0 || !binDir) {
        reject(
          new ClusterStartError(
            'build.sh',
            undefined,
            `bash ${BUILD_SCRIPT} exited with ${signal ?? code}; last output:\n${stderrTail}`,
          ),
        );
      } else {
        resolve(binDir);
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// ports, processes, probes

/**
 * Free 127.0.0.1 TCP ports, all listened on at once (so they are distinct), read, then closed — drawn from
 * below the kernel's ephemeral range. A port from that range (what `listen(0)` gives) can be taken by any
 * outbound connection between the moment it is picked and the moment its server binds it (etcd, the API
 * server, a gateway started after the control plane): the suite saw `EADDRINUSE` that way. Ports below
 * the range are only ever taken by an explicit bind.
 */
export async function freePorts(count: number): Promise<number[]> {
  const [low, high] = reservablePortRange();
  const servers: net.Server[] = [];
  try {
    for (let attempts = 0; servers.length < count; attempts++) {
      if (attempts > 1000) throw new Error(`no free port in ${low}-${high} after ${attempts} attempts`);
      const port = low + Math.floor(Math.random() * (high - low + 1));
      const server = await listenOn(port).catch(() => undefined);
      if (server) servers.push(server);
    }
    return servers.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

/** [low, high] for freePorts: 10000 up to just below the ephemeral range (Linux's default starts at 32768). */
function reservablePortRange(): [number, number] {
  let ephemeralLow = 32768;
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    if (Number.isInteger(first) && first > 11000) ephemeralLow = first;
  } catch {
    // not Linux: keep the default
  }
  return [10000, ephemeralLow - 1];
}

function listenOn(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

function defaultLog(line: string): void {
  process.stderr.write(`${line}\n`);
}

function tailFile(file: string, lines: number): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch (err) {
    return `(cannot read: ${(err as Error).message})`;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface ProbeResult {
  status: number;
  body: string;
}

/** GET over http(s) to 127.0.0.1 with a short timeout; never throws (status 0 + error text on failure). */
export async function probe(
  url: string,
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; insecure?: boolean } = {},
  timeoutMs = 3000,
): Promise<ProbeResult> {
  return await new Promise((resolve) => {
    const u = new URL(url);
    const opts: https.RequestOptions = { method: 'GET', timeout: timeoutMs, agent: false };
    if (u.protocol === 'https:') {
      Object.assign(opts, { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !tls.insecure });
    }
    const req = (u.protocol === 'https:' ? https : http).request(u, opts, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        if (body.length < 8192) body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (err) => resolve({ status: 0, body: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ status: 0, body: err.message }));
    req.end();
  });
}

/** True when pid is alive, not a zombie, and runs `bin` (guards against PID reuse). */
export function isComponentAlive(c: Pick<ComponentState, 'pid' | 'bin'>): boolean {
  if (!c.pid || c.pid <= 1) return false;
  try {
    const stat = readFileSync(`/proc/${c.pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    if (state === 'Z' || state === 'X') return false;
    const argv0 = readFileSync(`/proc/${c.pid}/cmdline`, 'utf8').split('\0')[0];
    return argv0 === c.bin;
  } catch {
    return false;
  }
}

function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

/** Sends sig to the component (its own process group when it leads one, as spawned here). */
function signalComponent(c: ComponentState, sig: NodeJS.Signals): void {
  if (!isComponentAlive(c)) return;
  try {
    if (processGroupOf(c.pid) === c.pid) process.kill(-c.pid, sig);
    else process.kill(c.pid, sig);
  } catch {
    // already gone
  }
}

/** SIGTERM, then SIGKILL after graceMs, for the given components (only if still the recorded processes). */
async function stopComponents(components: ComponentState[], graceMs: number): Promise<string[]> {
  const alive = components.filter(isComponentAlive);
  for (const c of alive) signalComponent(c, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive.some(isComponentAlive) && Date.now() < deadline) await sleep(100);
  for (const c of alive) signalComponent(c, 'SIGKILL');
  const killDeadline = Date.now() + 5000;
  while (alive.some(isComponentAlive) && Date.now() < killDeadline) await sleep(50);
  return alive.map((c) => c.name);
}

/** Synchronous last-resort kill (for process 'exit' handlers): SIGKILL to every recorded, still-alive PID. */
export function killClusterSync(dir: string): void {
  const state = readClusterState(dir);
  for (const c of state?.components ?? []) signalComponent(c, 'SIGKILL');
}

// ---------------------------------------------------------------------------------------------------------
// state

export function statePath(dir: string): string {
  return path.join(path.resolve(dir), STATE_FILE);
}

export function readClusterState(dir: string): ClusterState | undefined {
  const file = statePath(dir);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
}

async function writeState(state: ClusterState): Promise<void> {
  const file = statePath(state.dir);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`);
  await rename(tmp, file);
}

// ---------------------------------------------------------------------------------------------------------
// start / stop

/**
 * Starts etcd, kube-apiserver, kube-controller-manager, kwok (and optionally kube-scheduler) in `dir`.
 * Throws ClusterStartError (component, log path, last log lines) after stopping whatever it started.
 */
export async function startCluster(opts: StartClusterOptions): Promise<Cluster> {
  const log = opts.log ?? defaultLog;
  const dir = path.resolve(opts.dir);
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const t0 = Date.now();

  const previous = readClusterState(dir);
  const stillRunning = previous?.components.filter(isComponentAlive) ?? [];
  if (stillRunning.length > 0) {
    throw new ClusterStartError(
      'cluster',
      undefined,
      `a cluster is already running in ${dir} (${stillRunning.map((c) => `${c.name} pid ${c.pid}`).join(', ')}); stop it first (npm run cluster:down)`,
    );
  }
  await mkdir(dir, { recursive: true });
  for (const sub of [STATE_FILE, 'etcd', 'kwok', 'logs', 'pki', 'admin.kubeconfig']) {
    await rm(path.join(dir, sub), { recursive: true, force: true });
  }
  const logsDir = path.join(dir, 'logs');
  await mkdir(logsDir, { recursive: true });

  const binDir = path.resolve(
    opts.binDir ?? process.env['NODELOAD_CONTROLPLANE_BIN'] ?? (await buildControlPlane(log)),
  );
  for (const b of BINARIES) {
    try {
      await access(path.join(binDir, b), constants.X_OK);
    } catch {
      throw new ClusterStartError('build', undefined, `${path.join(binDir, b)} is missing or not executable`);
    }
  }

  const pki = await generatePki(path.join(dir, 'pki'));
  const [etcdClient, etcdPeer, apiserver, controllerManager, kwok, scheduler] = (await freePorts(6)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const apiserverUrl = `https://127.0.0.1:${apiserver}`;
  const kubeconfig = path.join(dir, 'admin.kubeconfig');
  await writeFile(kubeconfig, kubeconfigYaml(apiserverUrl, pki), { mode: 0o600 });

  const state: ClusterState = {
    version: 1,
    dir,
    binDir,
    pkiDir: pki.dir,
    pki,
    kubeconfig,
    kubectl: path.join(binDir, 'kubectl'),
    apiserverUrl,
    ports: {
      etcdClient,
      etcdPeer,
      apiserver,
      controllerManager,
      kwok,
      ...(opts.scheduler ? { scheduler } : {}),
    },
    components: [],
    startedAt: new Date(t0).toISOString(),
  };
  await writeState(state);

  const ca = await readFile(pki.caCert);
  const adminTls = { ca, cert: await readFile(pki.adminCert), key: await readFile(pki.adminKey) };
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    KWOK_WORKDIR: path.join(dir, 'kwok'),
  };
  delete childEnv['KUBECONFIG'];

  const launch = async (
    name: ComponentName,
    args: string[],
    ports: Record<string, number>,
    healthUrl: string,
    ready: () => Promise<boolean | string>,
  ): Promise<void> => {
    const bin = path.join(binDir, name);
    const logPath = path.join(logsDir, `${name}.log`);
    const fd = openSync(logPath, 'a');
    let exited: string | undefined;
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(bin, args, { cwd: dir, env: childEnv, detached: true, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    child.on('error', (err) => {
      exited = `could not be spawned: ${err.message}`;
    });
    child.on('exit', (code, signal) => {
      exited = `exited with ${signal ?? `code ${code}`}`;
    });
    child.unref();
    if (!child.pid) {
      await sleep(50);
      throw new ClusterStartError(name, logPath, exited ?? 'no pid');
    }
    state.components.push({ name, pid: child.pid, bin, args, log: logPath, ports, healthUrl });
    await writeState(state);
    const started = Date.now();
    let last: boolean | string = false;
    for (;;) {
      if (exited) throw new ClusterStartError(name, logPath, `process ${exited} before becoming ready`);
      last = await ready();
      if (last === true) break;
      if (Date.now() - started > readyTimeoutMs) {
        throw new ClusterStartError(
          name,
          logPath,
          `not ready after ${readyTimeoutMs / 1000}s (${healthUrl}${typeof last === 'string' ? `: ${last}` : ''})`,
        );
      }
      await sleep(200);
    }
    log(`[cluster] ${name} ready (pid ${child.pid}, ${((Date.now() - started) / 1000).toFixed(1)}s)`);
  };
  const httpReady =
    (url: string, tls: Parameters<typeof probe>[1] = {}) =>
    async () => {
      const r = await probe(url, tls);
      return r.status === 200 ? true : `${r.status || 'no answer'} ${r.body.slice(0, 300)}`;
    };

  try {
    const etcdHealth = `http://127.0.0.1:${etcdClient}/health`;
    await launch(
      'etcd',
      [
        '--name=default',
        `--data-dir=${path.join(dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
        '--initial-cluster-state=new',
        '--unsafe-no-fsync=true',
      ],
      { client: etcdClient, peer: etcdPeer },
      etcdHealth,
      async () => {
        const r = await probe(etcdHealth);
        return r.status === 200 && r.body.includes('true') ? true : `${r.status} ${r.body}`;
      },
    );

    const readyz = `${apiserverUrl}/readyz`;
    await launch(
      'kube-apiserver',
      [
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${apiserver}`,
        '--advertise-address=127.0.0.1',
        '--endpoint-reconciler-type=none',
        `--cert-dir=${pki.dir}`,
        `--tls-cert-file=${pki.apiserverCert}`,
        `--tls-private-key-file=${pki.apiserverKey}`,
        `--client-ca-file=${pki.caCert}`,
        '--authorization-mode=RBAC',
        `--service-account-issuer=${apiserverUrl}`,
        `--service-account-key-file=${pki.saPub}`,
        `--service-account-signing-key-file=${pki.saKey}`,
        `--service-cluster-ip-range=${CLUSTER_SERVICE_CIDR}`,
        '--allow-privileged=true',
        `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
        '--requestheader-allowed-names=front-proxy-client',
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        '--requestheader-uid-headers=X-Remote-Uid',
        `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
        `--proxy-client-key-file=${pki.frontProxyClientKey}`,
        // A collection delete (a namespace's cleanup, the benches emptying theirs between phases) runs
        // this many deletes at once; with the default of one, 20,000 pods outlasted the scheduler
        // bench's 600 s wait.
        '--delete-collection-workers=8',
        '--profiling=false',
        '--v=1',
      ],
      { secure: apiserver },
      readyz,
      httpReady(readyz, adminTls),
    );

    const kcmHealth = `https://127.0.0.1:${controllerManager}/healthz`;
    await launch(
      'kube-controller-manager',
      [
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        `--service-account-private-key-file=${pki.saKey}`,
        `--root-ca-file=${pki.caCert}`,
        `--service-cluster-ip-range=${CLUSTER_SERVICE_CIDR}`,
        '--use-service-account-credentials=true',
        '--controllers=*',
        // KWOK renews thousands of node leases from the same 2-core box as everything else; when it lags
        // under a bench's load the node lifecycle controller would taint nodes not-ready, and every
        // scheduler would then examine mostly nodes it must reject. No test stops heartbeats on purpose,
        // so a node is only ever NotReady here when it is created.
        '--node-monitor-grace-period=10m',
        // The same for a node KWOK has not posted a status for yet: creating thousands, KWOK lags by more
        // than the default minute, the controller marks them Unknown and taints them unreachable.
        '--node-startup-grace-period=10m',
        // The default client QPS (20) lifts new nodes' not-ready taints at 20 nodes a second: minutes
        // for a 5,000-node bench cluster.
        '--kube-api-qps=200',
        '--kube-api-burst=400',
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${controllerManager}`,
        '--profiling=false',
        '--v=1',
      ],
      { secure: controllerManager },
      kcmHealth,
      httpReady(kcmHealth, { insecure: true }),
    );

    if (opts.scheduler) {
      const schedHealth = `https://127.0.0.1:${scheduler}/healthz`;
      const schedConfig = path.join(dir, 'kube-scheduler.yaml');
      if (opts.schedulerConfig) await writeFile(schedConfig, opts.schedulerConfig({ kubeconfig, pki }));
      await launch(
        'kube-scheduler',
        [
          ...(opts.schedulerConfig ? [`--config=${schedConfig}`] : []),
          `--kubeconfig=${kubeconfig}`,
          `--authentication-kubeconfig=${kubeconfig}`,
          `--authorization-kubeconfig=${kubeconfig}`,
          '--leader-elect=false',
          '--bind-address=127.0.0.1',
          `--secure-port=${scheduler}`,
          '--profiling=false',
          '--v=1',
        ],
        { secure: scheduler },
        schedHealth,
        httpReady(schedHealth, { insecure: true }),
      );
    }

    const kwokDir = path.join(dir, 'kwok');
    await mkdir(kwokDir, { recursive: true });
    const kwokConfig = path.join(kwokDir, 'stages.yaml');
    await writeFile(kwokConfig, KWOK_STAGES_YAML);
    const kwokHealth = `http://127.0.0.1:${kwok}/healthz`;
    await launch(
      'kwok',
      [
        `--config=${kwokConfig}`,
        `--kubeconfig=${kubeconfig}`,
        '--manage-all-nodes=false',
        '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
        '--manage-nodes-with-label-selector=',
        '--manage-single-node=',
        `--cidr=${KWOK_POD_CIDR}`,
        '--node-ip=127.0.0.1',
        // Renewed every quarter of this (as kubelets do): 5,000 nodes at 40 s were 500 lease writes a second.
        '--node-lease-duration-seconds=240',
        `--server-address=127.0.0.1:${kwok}`,
        // At INFO it logs a line per node patch and lease: ~15,000 lines for a 5,000-node cluster's start.
        '--v=WARN',
      ],
      { server: kwok },
      kwokHealth,
      httpReady(kwokHealth),
    );

    // The controller manager is healthy before its controllers have done anything; pods need the `default`
    // ServiceAccount (ServiceAccount admission stays on), so wait for the one in `default`.
    const saStarted = Date.now();
    await waitForDefaultServiceAccount(kubeconfig, 'default', readyTimeoutMs).catch((err: Error) => {
      throw new ClusterStartError(
        'kube-controller-manager',
        path.join(logsDir, 'kube-controller-manager.log'),
        err.message,
      );
    });
    log(
      `[cluster] default ServiceAccount created by the controller manager (${((Date.now() - saStarted) / 1000).toFixed(1)}s)`,
    );

    if (opts.nodes?.length) {
      await createFakeNodes(kubeconfig, opts.nodes);
      await waitForNodesReady(
        kubeconfig,
        opts.nodes.map((n) => n.name),
        { timeoutMs: readyTimeoutMs },
      ).catch((err: Error) => {
        throw new ClusterStartError('kwok', path.join(logsDir, 'kwok.log'), err.message);
      });
    }
  } catch (err) {
    const stopped = await stopComponents([...state.components].reverse(), 3000);
    state.stoppedAt = new Date().toISOString();
    await writeState(state).catch(() => {});
    if (stopped.length) log(`[cluster] start failed; stopped ${stopped.join(', ')}`);
    throw err;
  }

  state.readyAt = new Date().toISOString();
  await writeState(state);
  log(
    `[cluster] up in ${((Date.now() - t0) / 1000).toFixed(1)}s: ${apiserverUrl} (kubeconfig ${kubeconfig})`,
  );
  return { ...state, stop: () => stopCluster(dir).then(() => undefined) };
}

/** Waits until ServiceAccount <namespace>/default exists (created by the controller manager). */
export async function waitForDefaultServiceAccount(
  kubeconfig: string,
  namespace: string,
  timeoutMs = 60_000,
): Promise<void> {
  const api = loadKubeConfig(kubeconfig).makeApiClient(CoreV1Api);
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      await api.readNamespacedServiceAccount({ name: 'default', namespace });
      return;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      throw new Error(`ServiceAccount ${namespace}/default not created after ${timeoutMs / 1000}s (${last})`);
    }
    await sleep(200);
  }
}

/**
 * Stops the cluster recorded in <dir>/state.json: SIGTERM to each recorded PID (only if it still runs the
 * recorded binary), SIGKILL after graceMs. Idempotent; returns the components that were still running.
 */
export async function stopCluster(dir: string, opts: { graceMs?: number } = {}): Promise<string[]> {
  const state = readClusterState(dir);
  if (!state) return [];
  const graceMs = opts.graceMs ?? 10_000;
  // Clients of the apiserver first, then the apiserver, then etcd (clean shutdown, quiet logs).
  const order: ComponentName[][] = [
    ['kwok', 'kube-scheduler', 'kube-controller-manager'],
    ['kube-apiserver'],
    ['etcd'],
  ];
  const stopped: string[] = [];
  for (const names of order) {
    stopped.push(
      ...(await stopComponents(
        state.components.filter((c) => names.includes(c.name)),
        graceMs,
      )),
    );
  }
  if (!state.stoppedAt || stopped.length) {
    state.stoppedAt = new Date().toISOString();
    await writeState(state);
  }
  return stopped;
}

export interface ComponentStatus {
  name: ComponentName;
  pid: number;
  alive: boolean;
  ports: Record<string, number>;
  healthUrl: string;
  health: string;
  log: string;
}

export interface ClusterStatus {
  state: ClusterState;
  components: ComponentStatus[];
  readyz: { ok: boolean; status: number; body: string };
}

/** Liveness of every recorded component plus the apiserver's /readyz; undefined when no cluster was started in dir. */
export async function clusterStatus(dir: string): Promise<ClusterStatus | undefined> {
  const state = readClusterState(dir);
  if (!state) return undefined;
  let tls: Parameters<typeof probe>[1] = { insecure: true };
  try {
    tls = {
      ca: await readFile(state.pki.caCert),
      cert: await readFile(state.pki.adminCert),
      key: await readFile(state.pki.adminKey),
    };
  } catch {
    // pki gone: probe insecurely
  }
  const components = await Promise.all(
    state.components.map(async (c): Promise<ComponentStatus> => {
      const alive = isComponentAlive(c);
      let health = 'not running';
      if (alive) {
        const r = await probe(c.healthUrl, c.name === 'kube-apiserver' ? tls : { insecure: true }, 2000);
        health = r.status === 200 ? 'ok' : `${r.status || 'no answer'} ${r.body.trim().slice(0, 120)}`;
      }
      return { name: c.name, pid: c.pid, alive, ports: c.ports, healthUrl: c.healthUrl, health, log: c.log };
    }),
  );
  const r = await probe(`${state.apiserverUrl}/readyz`, tls, 3000);
  return { state, components, readyz: { ok: r.status === 200, status: r.status, body: r.body.trim() } };
}

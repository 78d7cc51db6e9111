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
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { access, constants, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { createFakeNodes, type FakeNodeSpec, loadKubeConfig, waitForNodesReady } from './nodes.js';

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

export interface PkiPaths {
  dir: string;
  caCert: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  adminCert: string;
  adminKey: string;
  saKey: string;
  saPub: string;
  frontProxyCaCert: string;
  frontProxyCaKey: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
  /** Serving cert of the nodeload gateway's kube-facing HTTPS port (webhook + aggregated API), signed by caCert. */
  servingCert: string;
  servingKey: string;
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
// PKI (openssl CLI, ECDSA P-256, 30 days)

const OPENSSL_CNF = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = placeholder
[v3_ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
`;

async function openssl(args: string[], cwd: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err)
        reject(
          new ClusterStartError('pki', undefined, `openssl ${args.join(' ')}: ${stderr || err.message}`),
        );
      else resolve(stdout);
    });
  });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function makeCa(dir: string, name: string, cn: string): Promise<void> {
  await openssl(
    [
      'req',
      '-x509',
      '-config',
      'openssl.cnf',
      '-extensions',
      'v3_ca',
      ...EC_KEY,
      '-sha256',
      '-days',
      '30',
      '-subj',
      `/CN=${cn}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
  const bc = await openssl(['x509', '-in', `${name}.crt`, '-noout', '-ext', 'basicConstraints'], dir);
  if (!bc.includes('CA:TRUE'))
    throw new ClusterStartError('pki', undefined, `${name}.crt lacks basicConstraints CA:TRUE`);
}

async function makeLeaf(
  dir: string,
  name: string,
  subject: string,
  ca: string,
  usage: 'serverAuth' | 'clientAuth',
  sans: string[] = [],
): Promise<void> {
  const ext = [
    'basicConstraints = critical,CA:FALSE',
    'keyUsage = critical,digitalSignature',
    `extendedKeyUsage = ${usage}`,
    'subjectKeyIdentifier = hash',
    'authorityKeyIdentifier = keyid',
    ...(sans.length ? [`subjectAltName = ${sans.join(',')}`] : []),
  ];
  await writeFile(path.join(dir, `${name}.ext`), `${ext.join('\n')}\n`);
  await openssl(
    [
      'req',
      '-new',
      '-config',
      'openssl.cnf',
      ...EC_KEY,
      '-subj',
      subject,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    ],
    dir,
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-set_serial',
      `0x${randomBytes(12).toString('hex')}`,
      '-days',
      '30',
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
  await openssl(['verify', '-CAfile', `${ca}.crt`, `${name}.crt`], dir);
  await rm(path.join(dir, `${name}.csr`));
  await rm(path.join(dir, `${name}.ext`));
}

/** Generates the cluster PKI into dir (§6 of controlplane.md) plus the nodeload gateway serving cert. */
export async function generatePki(dir: string): Promise<PkiPaths> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(path.join(dir, 'openssl.cnf'), OPENSSL_CNF);
  await makeCa(dir, 'ca', 'nodeload-test-ca');
  await makeCa(dir, 'front-proxy-ca', 'nodeload-test-front-proxy-ca');
  await Promise.all([
    makeLeaf(dir, 'apiserver', '/CN=kube-apiserver', 'ca', 'serverAuth', [
      'DNS:localhost',
      'DNS:kubernetes',
      'DNS:kubernetes.default',
      'DNS:kubernetes.default.svc',
      'DNS:kubernetes.default.svc.cluster.local',
      'IP:127.0.0.1',
      'IP:10.0.0.1',
    ]),
    makeLeaf(dir, 'admin', '/O=system:masters/CN=admin', 'ca', 'clientAuth'),
    makeLeaf(dir, 'front-proxy-client', '/CN=front-proxy-client', 'front-proxy-ca', 'clientAuth'),
    makeLeaf(dir, 'serving', '/CN=nodeload-api.kube-system.svc', 'ca', 'serverAuth', [
      'DNS:localhost',
      'DNS:nodeload-api.kube-system.svc',
      'DNS:nodeload-api.kube-system.svc.cluster.local',
      'IP:127.0.0.1',
    ]),
    (async () => {
      await openssl(
        ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'sa.key'],
        dir,
      );
      await openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
    })(),
  ]);
  const p = (f: string) => path.join(dir, f);
  return {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    apiserverCert: p('apiserver.crt'),
    apiserverKey: p('apiserver.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
    frontProxyCaCert: p('front-proxy-ca.crt'),
    frontProxyCaKey: p('front-proxy-ca.key'),
    frontProxyClientCert: p('front-proxy-client.crt'),
    frontProxyClientKey: p('front-proxy-client.key'),
    servingCert: p('serving.crt'),
    servingKey: p('serving.key'),
  };
}

function kubeconfigYaml(server: string, pki: PkiPaths): string {
  const q = JSON.stringify; // JSON strings are valid YAML scalars
  return `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: ${q(server)}
    certificate-authority: ${q(pki.caCert)}
users:
- name: admin
  user:
    client-certificate: ${q(pki.adminCert)}
    client-key: ${q(pki.adminKey)}
contexts:
- name: local
  context:
    cluster: local
    user: admin
current-context: local
`;
}

// ---------------------------------------------------------------------------------------------------------
// ports, processes, probes

/** Free 127.0.0.1 TCP ports: all listened on at once (so they are distinct), read, then closed. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
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
      await launch(
        'kube-scheduler',
        [
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
        '--node-lease-duration-seconds=40',
        `--server-address=127.0.0.1:${kwok}`,
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

// ---------------------------------------------------------------------------------------------------------
// KWOK stages: the binary has no built-in stages (kwokctl injects them), so pass the "fast" set from
// sigs.k8s.io/kwok v0.8.0 kustomize/stage/{node/fast,node/heartbeat-with-lease,pod/fast} as --config.

export const KWOK_STAGES_YAML = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type  | Quote}}
      {{ end }}

      {{ $hasInternalIP := false }}
      {{ $hasHostname := false }}
      {{ range .status.addresses }}
        {{ if eq .type "InternalIP" }}
          {{ $hasInternalIP = true }}
        {{ end }}
        {{ if eq .type "Hostname" }}
          {{ $hasHostname = true }}
        {{ end }}
      {{ end }}
      {{ if or (not $hasInternalIP) (not $hasHostname) }}
      addresses:
      {{ end }}
      {{ if not $hasInternalIP }}
      {{ with NodeIP }}
      - address: {{ . | Quote }}
        type: InternalIP
      {{ end }}
      {{ end }}
      {{ if not $hasHostname }}
      {{ with NodeName }}
      - address: {{ . | Quote }}
        type: Hostname
      {{ end }}
      {{ end }}

      {{ with NodePort }}
      daemonEndpoints:
        kubeletEndpoint:
          Port: {{ . }}
      {{ end }}

      allocatable:
      {{ with .status.allocatable }}
      {{ YAML . 1 }}
      {{ else }}
        cpu: 1k
        memory: 1Ti
        pods: 1M
      {{ end }}
      capacity:
      {{ with .status.capacity }}
      {{ YAML . 1 }}
      {{ else }}
        cpu: 1k
        memory: 1Ti
        pods: 1M
      {{ end }}

      {{ $nodeInfo := .status.nodeInfo }}
      {{ $kwokVersion := printf "kwok-%s" Version }}
      nodeInfo:
        architecture: {{ or $nodeInfo.architecture "amd64" }}
        bootID: {{ or $nodeInfo.bootID \`""\` }}
        containerRuntimeVersion: {{ or $nodeInfo.containerRuntimeVersion $kwokVersion }}
        kernelVersion: {{ or $nodeInfo.kernelVersion $kwokVersion }}
        kubeProxyVersion: {{ or $nodeInfo.kubeProxyVersion $kwokVersion }}
        kubeletVersion: {{ or $nodeInfo.kubeletVersion $kwokVersion }}
        machineID: {{ or $nodeInfo.machineID \`""\` }}
        operatingSystem: {{ or $nodeInfo.operatingSystem "linux" }}
        osImage: {{ or $nodeInfo.osImage \`""\` }}
        systemUUID: {{ or $nodeInfo.systemUUID \`""\` }}
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-heartbeat-with-lease
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'In'
      values:
      - 'True'
  delay:
    durationMilliseconds: 600000
    jitterDurationMilliseconds: 610000
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}

      addresses:
      {{ with .status.addresses }}
      {{ YAML . 1 }}
      {{ else }}
      {{ with NodeIP }}
      - address: {{ . | Quote }}
        type: InternalIP
      {{ end }}
      {{ with NodeName }}
      - address: {{ . | Quote }}
        type: Hostname
      {{ end }}
      {{ end }}

      {{ with NodePort }}
      daemonEndpoints:
        kubeletEndpoint:
          Port: {{ . }}
      {{ end }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  next:
    statusTemplate: |
      {{ $now := Now }}

      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      {{ range .spec.readinessGates }}
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: {{ .conditionType | Quote }}
      {{ end }}

      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}

      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        {{ if eq .restartPolicy "Always" }}
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
        {{ else }}
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
        {{ end }}
      {{ end }}
      {{ $hostIPs := NodeIPsWith .spec.nodeName }}
      {{ with $hostIPs }}
      hostIP: {{ index . 0 | Quote }}
      hostIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      {{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      {{ with $podIPs }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.ownerReferences.[].kind'
      operator: 'In'
      values:
      - 'Job'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $root := . }}
      containerStatuses:
      {{ range $index, $item := .spec.containers }}
      {{ $origin := index $root.status.containerStatuses $index }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    delete: true
`;

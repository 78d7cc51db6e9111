/**
 * `npm run demo`: a local cluster, the gateway as its own process wired in as webhook and aggregated
 * API (manifests/overlays/local, applied with its loopback port and CA), simulated nodes with background
 * load, example rules (the original design's among them) and a workload that keeps changing, so the
 * dashboard moves. Ctrl-C stops everything it started.
 *
 * Port 8080 runs authenticated, as in a cluster: the demo creates a ServiceAccount bound to the read-only
 * ClusterRole nodeload ships for it (nodeload:viewer, manifests/viewer), gets it a token with TokenRequest
 * and prints a login link carrying it (`http://127.0.0.1:8080/#token=…`); the dashboard keeps it in the
 * tab's session storage.
 *
 * `npm run demo -- --extender`: the same, but the cluster's own kube-scheduler places the pods, calling
 * the gateway as its extender (manifests/scheduler/extender.yaml; the gateway's loop is off).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { load } from 'js-yaml';
import { waitForApiServiceAvailable } from '../cluster/apiservice.js';
import { freePorts, probe, startCluster, stopCluster } from '../cluster/controlplane.js';
import { localExtenderSchedulerConfig } from '../cluster/extender.js';
import { applyLocalOverlay } from '../cluster/local-overlay.js';
import { createFakeNodes, type FakeNodeSpec } from '../cluster/nodes.js';
import { createViewer } from '../cluster/viewer.js';
import { startFakeMetricsServer } from '../fixtures/metrics-server.js';
import { usageLoop, workloadLoop } from './workload.js';

const root = path.resolve(import.meta.dirname, '../..');
const dir = path.join(root, '.run/demo');
const say = (msg: string) => console.log(`\x1b[36m[demo]\x1b[0m ${msg}`);
const extenderMode = process.argv.slice(2).includes('--extender');

async function portOr(preferred: number): Promise<number> {
  const ok = await new Promise<boolean>((resolve) => {
    import('node:net').then(({ createServer }) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(preferred, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  });
  if (ok) return preferred;
  const [free] = await freePorts(1);
  say(`port ${preferred} is busy; using ${free}`);
  return free!;
}

const NODES: FakeNodeSpec[] = [
  // The original design's example rule allows node-a and node-b.
  { name: 'node-a', cpu: '8', memory: '32Gi', labels: { pool: 'web', zone: 'a' } },
  { name: 'node-b', cpu: '8', memory: '32Gi', labels: { pool: 'web', zone: 'b' } },
  ...Array.from({ length: 6 }, (_, i) => ({
    name: `web-${i + 1}`,
    cpu: String(4 + 2 * (i % 3)),
    memory: `${16 + 8 * (i % 2)}Gi`,
    labels: { pool: 'web', zone: i % 2 ? 'a' : 'b' },
  })),
  ...Array.from({ length: 8 }, (_, i) => ({
    name: `batch-${i + 1}`,
    cpu: String(16 + 8 * (i % 2)),
    memory: `${64 + 32 * (i % 3)}Gi`,
    labels: { pool: 'batch', zone: i % 2 ? 'a' : 'b' },
  })),
  {
    name: 'gpu-1',
    cpu: '32',
    memory: '128Gi',
    labels: { pool: 'gpu' },
    taints: ['nvidia.com/gpu=true:NoSchedule'],
  },
];

const RULES = [
  // The original's example, unchanged (namespace default).
  load(readFileSync(path.join(root, 'manifests/examples/original-web-tier.yaml'), 'utf8')) as object,
  {
    apiVersion: 'example.com/v1',
    kind: 'NodeLoadRule',
    metadata: { name: 'storefront', namespace: 'shop' },
    spec: {
      maxCPU: 70,
      maxMemory: 80,
      nodeSelector: { matchLabels: { pool: 'web' } },
      burst: { maxPlacements: 4, windowSeconds: 5 },
    },
  },
  {
    apiVersion: 'example.com/v1',
    kind: 'NodeLoadRule',
    metadata: { name: 'batch-pool', namespace: 'batch' },
    spec: { maxCPU: 90, maxMemory: 90, nodeSelector: { matchLabels: { pool: 'batch' } } },
  },
];

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping the gateway and the cluster (only what this demo started)…');
    for (const c of children) c.kill('SIGTERM');
    await stopCluster(dir).catch(() => undefined);
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  say('building the dashboard');
  const web = spawnSync('npm', ['run', '--silent', 'build:web'], { cwd: root, stdio: 'inherit' });
  if (web.status !== 0) throw new Error('dashboard build failed');

  await stopCluster(dir).catch(() => undefined); // a previous demo killed hard
  say('starting the local control plane (the first run compiles it from Go modules: ~5-30 min)');
  // In extender mode kube-scheduler is told the gateway's HTTPS port up front.
  const [httpsPort] = (await freePorts(1)) as [number];
  const cluster = await startCluster({
    dir,
    ...(extenderMode
      ? {
          scheduler: true,
          schedulerConfig: (c) => localExtenderSchedulerConfig({ ...c, port: httpsPort }),
        }
      : {}),
  });
  if (extenderMode) say('kube-scheduler runs with nodeload as its extender (profile nodeload-scheduler)');
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);

  say(`creating ${NODES.length} simulated nodes`);
  await createFakeNodes(kc, NODES);

  // Node usage through the real aggregation layer (metrics.k8s.io), so loads come from "metrics"
  // and pods bound since the last sample show as estimates. Registered before the gateway starts,
  // so its discovery finds the API at once.
  say('serving node usage through metrics.k8s.io');
  const metrics = await startFakeMetricsServer({ pkiDir: cluster.pkiDir, kubeconfig: cluster.kubeconfig });

  const httpPort = await portOr(8080);
  say(`starting the gateway on :${httpPort} (HTTP) and :${httpsPort} (HTTPS)`);
  const gateway = spawn(
    path.join(root, 'node_modules/.bin/tsx'),
    [
      'src/main.ts',
      `--kubeconfig=${cluster.kubeconfig}`,
      `--http-port=${httpPort}`,
      `--https-port=${httpsPort}`,
      '--bind-address=127.0.0.1',
      `--tls-cert-file=${cluster.pki.servingCert}`,
      `--tls-key-file=${cluster.pki.servingKey}`,
      '--log-level=info',
      '--metrics-poll-seconds=5',
      ...(extenderMode
        ? ['--native-scheduler=false', `--extender-client-ca-file=${cluster.pki.caCert}`]
        : []),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(gateway);
  // Gateway logs go to a file; the terminal stays readable.
  const { createWriteStream } = await import('node:fs');
  const logPath = path.join(dir, 'logs/gateway.log');
  gateway.stdout?.pipe(createWriteStream(logPath));
  gateway.on('exit', (code) => {
    if (!stopping) {
      say(`the gateway exited (${code}); see ${logPath}`);
      void shutdown(1);
    }
  });
  const base = `http://127.0.0.1:${httpPort}`;
  for (let i = 0; ; i++) {
    if (await probe(`${base}/readyz`).catch(() => false)) break;
    if (i > 600) throw new Error(`gateway not ready after 60 s; see ${logPath}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  const caPem = readFileSync(cluster.pki.caCert, 'utf8');
  // What a developer applies for a gateway on their machine: the CRD, the read-only roles, the webhooks
  // and the aggregated API, pointed at this gateway's loopback port.
  say('applying manifests/overlays/local (webhooks and aggregated API on the loopback, read-only roles)');
  await applyLocalOverlay(cluster.kubectl, cluster.kubeconfig, { port: httpsPort, caPem });
  await waitForApiServiceAvailable(kc, { timeoutMs: 60_000 });

  const core = kc.makeApiClient(CoreV1Api);
  for (const ns of ['shop', 'batch', 'background']) {
    await core.createNamespace({ body: { metadata: { name: ns } } }).catch(() => undefined);
  }
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const rule of RULES as { metadata: { namespace: string } }[]) {
    await custom.createNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: rule.metadata.namespace,
      plural: 'nodeloadrules',
      body: rule,
    });
  }

  say('creating a read-only ServiceAccount for the dashboard and a token for it');
  const viewer = await createViewer(kc, { namespace: 'nodeload-demo', name: 'dashboard' });
  const tokenFile = path.join(dir, 'dashboard.token');
  writeFileSync(tokenFile, `${viewer.token}\n`, { mode: 0o600 });

  const kubectl = 'kubectl';
  const auth = `-H "Authorization: Bearer $(cat ${tokenFile})"`;
  console.log(`
  \x1b[1mnodeload is running\x1b[0m${extenderMode ? ' as kube-scheduler\'s extender (decisions "via kube-scheduler")' : ''}
    login link     ${base}/#token=${viewer.token}
                   (dashboard as ${viewer.user}, read-only; the token is also in ${tokenFile})
    GraphiQL       the dashboard's "GraphiQL" link passes the token on
    original API   curl ${auth} ${base}/operator/suggestions   (also /scheduler/status, /api/node-load)
    metrics        ${base}/metrics needs a token allowed to get /metrics (nodeload:viewer's is not)
  try (in another terminal)
    export KUBECONFIG=${cluster.kubeconfig}; alias kubectl=${cluster.kubectl}
    ${kubectl} get nodeloads
    ${kubectl} get nodeloads --watch
    ${kubectl} get nlr -A
    ${kubectl} describe nlr -n shop storefront
    ${kubectl} get --raw /apis/nodeload.example.com/v1alpha1/nodeloads
    ${kubectl} explain nodeloads
    ${kubectl} get events -n shop --field-selector reason=Scheduled
  gateway log: ${logPath}
  Ctrl-C stops everything this demo started.
`);
  const core2 = kc.makeApiClient(CoreV1Api);
  void usageLoop({ core: core2, metrics, nodes: NODES, stopped: () => stopping });
  await workloadLoop({
    core,
    apps: kc.makeApiClient(AppsV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    nodes: NODES.map((n) => n.name),
    log: say,
    stopped: () => stopping,
  });
}

main().catch((err) => {
  console.error(`\x1b[31m[demo] failed:\x1b[0m ${err instanceof Error ? err.message : String(err)}`);
  void stopCluster(dir).finally(() => process.exit(1));
});

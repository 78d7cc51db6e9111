// Local cluster CLI (npm run cluster:up|down|status|nodes). Cluster dir: .run/cluster (or $NODELOAD_CLUSTER_DIR).
//
//   up [--scheduler]                 build (cached) + start etcd, kube-apiserver, kube-controller-manager, kwok
//   down                             stop the recorded processes
//   status                           PID / alive / ports / health of each component, apiserver /readyz
//   nodes create N [--cpu 8] [--memory 32Gi] [--pods 110] [--prefix kwok-node] [--label k=v]... [--taint k=v:Effect]...
//   nodes delete (--prefix P | NAME...)
//   nodes list [--prefix P]
//
// Exit codes: 0 ok, 1 failure (or cluster not healthy for `status`), 2 usage error.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { clusterStatus, readClusterState, startCluster, stopCluster } from './controlplane.js';
import {
  createFakeNodes,
  deleteFakeNodes,
  isNodeReady,
  listFakeNodes,
  parseLabel,
  parseTaint,
  waitForNodesReady,
} from './nodes.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIR = path.resolve(process.env['NODELOAD_CLUSTER_DIR'] ?? path.join(REPO_ROOT, '.run', 'cluster'));
const rel = (p: string) => path.relative(process.cwd(), p) || '.';

class UsageError extends Error {}

const USAGE = `usage: tsx test/cluster/cli.ts <command>
  up [--scheduler]        start a local cluster in ${rel(DIR)} (also starts kube-scheduler with --scheduler)
  down                    stop it
  status                  show components and apiserver /readyz (exit 1 unless healthy)
  nodes create N [--cpu 8] [--memory 32Gi] [--pods 110] [--prefix kwok-node] [--label k=v]... [--taint k=v:NoSchedule]...
  nodes delete (--prefix P | NAME...)
  nodes list [--prefix P]`;

function requireCluster(): { kubeconfig: string; kubectl: string } {
  const state = readClusterState(DIR);
  if (!state || state.stoppedAt) {
    throw new Error(`no cluster running in ${rel(DIR)} — start one with: npm run cluster:up`);
  }
  return state;
}

async function up(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { scheduler: { type: 'boolean', default: false } } });
  const t0 = Date.now();
  const cluster = await startCluster({ dir: DIR, scheduler: values.scheduler });
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  const k = rel(cluster.kubeconfig);
  console.log(`cluster up in ${secs}s
  apiserver:  ${cluster.apiserverUrl}
  kubeconfig: ${cluster.kubeconfig}
  pki:        ${cluster.pkiDir}  (gateway serving cert: serving.crt/serving.key, CA: ca.crt)
  logs:       ${path.join(cluster.dir, 'logs')}
  kubectl:    ${cluster.kubectl}

  ${cluster.kubectl} --kubeconfig ${k} get nodes
  export KUBECONFIG=${cluster.kubeconfig}; alias kubectl=${cluster.kubectl}

  add fake nodes:  npm run cluster:nodes -- create 3 --cpu 8 --memory 32Gi
  stop:            npm run cluster:down`);
  return 0;
}

async function down(): Promise<number> {
  const state = readClusterState(DIR);
  if (!state) {
    console.log(`no cluster recorded in ${rel(DIR)}; nothing to stop`);
    return 0;
  }
  const stopped = await stopCluster(DIR);
  console.log(stopped.length ? `stopped ${stopped.join(', ')}` : 'cluster was not running (nothing to stop)');
  return 0;
}

async function status(): Promise<number> {
  const st = await clusterStatus(DIR);
  if (!st) {
    console.log(`no cluster recorded in ${rel(DIR)} (npm run cluster:up)`);
    return 1;
  }
  if (st.state.stoppedAt && !st.components.some((c) => c.alive)) {
    console.log(
      `cluster in ${rel(st.state.dir)} is stopped (since ${st.state.stoppedAt}); start it with: npm run cluster:up`,
    );
    return 1;
  }
  console.log(
    `cluster ${rel(st.state.dir)}  started ${st.state.startedAt}${st.state.stoppedAt ? `  stopped ${st.state.stoppedAt}` : ''}`,
  );
  const rows = st.components.map((c) => [
    c.name,
    String(c.pid),
    c.alive ? 'alive' : 'dead',
    Object.entries(c.ports)
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
    c.health,
  ]);
  const header = ['COMPONENT', 'PID', 'STATE', 'PORTS', 'HEALTH'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const r of [header, ...rows])
    console.log(
      r
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    );
  console.log(
    `apiserver ${st.state.apiserverUrl}/readyz: ${st.readyz.ok ? 'ok' : `NOT READY (${st.readyz.status || 'no answer'}) ${st.readyz.body.slice(0, 200)}`}`,
  );
  console.log(`kubeconfig ${st.state.kubeconfig}`);
  const healthy = st.readyz.ok && st.components.every((c) => c.alive && c.health === 'ok');
  if (!healthy) {
    const bad = st.components.filter((c) => !c.alive || c.health !== 'ok');
    for (const c of bad) console.log(`  ${c.name}: see ${c.log}`);
  }
  return healthy ? 0 : 1;
}

async function nodes(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      cpu: { type: 'string', default: '8' },
      memory: { type: 'string', default: '32Gi' },
      pods: { type: 'string', default: '110' },
      prefix: { type: 'string' },
      label: { type: 'string', multiple: true, default: [] },
      taint: { type: 'string', multiple: true, default: [] },
    },
  });
  const { kubeconfig } = requireCluster();
  switch (sub) {
    case 'create': {
      const count = Number(positionals[0]);
      if (!Number.isInteger(count) || count < 1) throw new UsageError('nodes create needs a count N >= 1');
      const prefix = values.prefix ?? 'kwok-node';
      const labels = Object.fromEntries(values.label.map(parseLabel));
      const taints = values.taint.map(parseTaint);
      const existing = new Set((await listFakeNodes(kubeconfig, prefix)).map((n) => n.metadata?.name));
      const names: string[] = [];
      for (let i = 0; names.length < count; i++)
        if (!existing.has(`${prefix}-${i}`)) names.push(`${prefix}-${i}`);
      await createFakeNodes(
        kubeconfig,
        names.map((name) => ({
          name,
          cpu: values.cpu,
          memory: values.memory,
          pods: values.pods,
          labels,
          taints,
        })),
      );
      await waitForNodesReady(kubeconfig, names);
      console.log(`created ${names.length} Ready node(s): ${names.join(', ')}`);
      return 0;
    }
    case 'delete': {
      let names = positionals;
      if (values.prefix !== undefined) {
        names = [
          ...names,
          ...(await listFakeNodes(kubeconfig, values.prefix)).map((n) => n.metadata?.name ?? ''),
        ];
      }
      if (names.length === 0) {
        if (values.prefix === undefined) throw new UsageError('nodes delete needs --prefix P or node names');
        console.log(`no fake nodes with prefix "${values.prefix}"`);
        return 0;
      }
      const deleted = await deleteFakeNodes(kubeconfig, names);
      console.log(`deleted ${deleted.length} node(s)${deleted.length ? `: ${deleted.join(', ')}` : ''}`);
      return 0;
    }
    case 'list': {
      const list = await listFakeNodes(kubeconfig, values.prefix);
      for (const n of list) {
        const cap = n.status?.allocatable ?? {};
        console.log(
          `${n.metadata?.name}  ${isNodeReady(n) ? 'Ready' : 'NotReady'}  cpu=${cap['cpu']} memory=${cap['memory']} pods=${cap['pods']}`,
        );
      }
      if (list.length === 0) console.log('no fake nodes');
      return 0;
    }
    default:
      throw new UsageError(`unknown nodes subcommand "${sub ?? ''}"`);
  }
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...args] = argv;
  switch (cmd) {
    case 'up':
      return await up(args);
    case 'down':
      return await down();
    case 'status':
      return await status();
    case 'nodes':
      return await nodes(args);
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      console.log(USAGE);
      return cmd === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${cmd}"`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`error: ${(err as Error).message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else {
      console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    }
  },
);

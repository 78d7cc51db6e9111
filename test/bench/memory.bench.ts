import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { createLogger } from '../../src/server/log.js';
import { freePorts, waitForDefaultServiceAccount } from '../cluster/controlplane.js';
import { loadKubeConfig } from '../cluster/nodes.js';
import {
  acquireCluster,
  type BenchCluster,
  deploymentNodeOptions,
  ensureBenchNodes,
  ensureNamespace,
  fmt,
  gatewayEntry,
  isMain,
  log,
  procStats,
  sleep,
  spawnJs,
  spawnTs,
  stopChild,
  waitForUrl,
} from './lib.js';
import { parseMemoryBreakdown } from './memory-breakdown.js';
import { deleteAllPods, runPhase, SCHED_NAMESPACE, type SchedulerProcess } from './scheduler-phase.js';

const SCHEDULER = 'nodeload-scheduler';

// ---------------------------------------------------------------------------------------------------------
// heap snapshot analysis

interface HeapSnapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface ConstructorRow {
  name: string;
  count: number;
  selfBytes: number;
  /** Sum of the retained sizes of the instances not dominated by another instance of the same name. */
  retainedBytes: number;
}

export interface HeapSummary {
  totalBytes: number;
  rows: ConstructorRow[];
}

/** Self and retained size per constructor (node name for objects, node type otherwise). */
export function summarizeSnapshot(file: string): HeapSummary {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot;
  const meta = snap.snapshot.meta;
  const NF = meta.node_fields.length;
  const EF = meta.edge_fields.length;
  const nType = meta.node_fields.indexOf('type');
  const nName = meta.node_fields.indexOf('name');
  const nSize = meta.node_fields.indexOf('self_size');
  const nEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eTo = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const weak = edgeTypes.indexOf('weak');
  const shortcut = edgeTypes.indexOf('shortcut');
  const n = snap.nodes.length / NF;
  const firstEdge = new Uint32Array(n + 1);
  for (let i = 0, e = 0; i < n; i++) {
    firstEdge[i] = e;
    e += (snap.nodes[i * NF + nEdges] as number) * EF;
  }
  firstEdge[n] = snap.edges.length;
  const label = (i: number): string => {
    const t = nodeTypes[snap.nodes[i * NF + nType] as number] ?? '?';
    if (t === 'object' || t === 'native' || t === 'closure') {
      const name = snap.strings[snap.nodes[i * NF + nName] as number] ?? '?';
      return t === 'closure' ? `(closure) ${name}` : name;
    }
    return `(${t})`;
  };
  // Dominators (Cooper–Harvey–Kennedy) over a DFS from the root (node 0), skipping weak edges.
  const order = new Int32Array(n).fill(-1);
  const post: number[] = [];
  const preds: number[][] = Array.from({ length: n }, () => []);
  const stack: number[] = [0];
  const cursor = new Uint32Array(n);
  order[0] = 0;
  cursor[0] = firstEdge[0] as number;
  while (stack.length) {
    const v = stack[stack.length - 1] as number;
    let pushed = false;
    while ((cursor[v] as number) < (firstEdge[v + 1] as number)) {
      const e = cursor[v] as number;
      cursor[v] = e + EF;
      const t = snap.edges[e + eType] as number;
      if (t === weak || t === shortcut) continue;
      const w = (snap.edges[e + eTo] as number) / NF;
      (preds[w] as number[]).push(v);
      if (order[w] === -1) {
        order[w] = 0;
        cursor[w] = firstEdge[w] as number;
        stack.push(w);
        pushed = true;
        break;
      }
    }
    if (!pushed && stack[stack.length - 1] === v) {
      stack.pop();
      post.push(v);
    }
  }
  const postIndex = new Int32Array(n).fill(-1);
  post.forEach((v, i) => {
    postIndex[v] = i;
  });
  const idom = new Int32Array(n).fill(-1);
  idom[0] = 0;
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while ((postIndex[a] as number) < (postIndex[b] as number)) a = idom[a] as number;
      while ((postIndex[b] as number) < (postIndex[a] as number)) b = idom[b] as number;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = post.length - 1; i >= 0; i--) {
      const v = post[i] as number;
      if (v === 0) continue;
      let d = -1;
      for (const p of preds[v] as number[]) {
        if (idom[p] === -1) continue;
        d = d === -1 ? p : intersect(p, d);
      }
      if (d !== -1 && idom[v] !== d) {
        idom[v] = d;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(n);
  for (let i = 0; i < n; i++) retained[i] = snap.nodes[i * NF + nSize] as number;
  for (const v of post) {
    const d = idom[v] as number;
    if (v !== 0 && d >= 0) retained[d] = (retained[d] as number) + (retained[v] as number);
  }
  const rows = new Map<string, ConstructorRow>();
  const labels = Array.from({ length: n }, (_, i) => label(i));
  for (let i = 0; i < n; i++) {
    if (postIndex[i] === -1) continue;
    const name = labels[i] as string;
    let row = rows.get(name);
    if (!row) {
      row = { name, count: 0, selfBytes: 0, retainedBytes: 0 };
      rows.set(name, row);
    }
    row.count++;
    row.selfBytes += snap.nodes[i * NF + nSize] as number;
    // Count an instance's retained size once: skip it when an ancestor in the dominator tree has the same name.
    let a = idom[i] as number;
    let nested = false;
    for (let depth = 0; a > 0 && depth < 64; depth++, a = idom[a] as number) {
      if (labels[a] === name) {
        nested = true;
        break;
      }
    }
    if (!nested) row.retainedBytes += retained[i] as number;
  }
  return { totalBytes: retained[0] as number, rows: [...rows.values()] };
}

export function heapTable(s: HeapSummary, top = 25): string {
  const by = [...s.rows].sort((a, b) => b.retainedBytes - a.retainedBytes).slice(0, top);
  const kib = (b: number) => (b / 1024).toFixed(0);
  return [
    `heap ${fmt.mib(s.totalBytes)} MiB`,
    '| constructor | count | self KiB | retained KiB |',
    '| --- | --: | --: | --: |',
    ...by.map(
      (r) => `| ${r.name.slice(0, 60)} | ${r.count} | ${kib(r.selfBytes)} | ${kib(r.retainedBytes)} |`,
    ),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// the run

async function snapshot(pid: number, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const fresh = readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    // The file is complete once its size stops changing.
    if (fresh.length) {
      const file = path.join(dir, fresh[0] as string);
      let last = -1;
      for (;;) {
        const size = statSync(file).size;
        if (size === last && size > 0) return file;
        last = size;
        await sleep(1000);
      }
    }
  }
  throw new Error('no heap snapshot written');
}

export interface MemoryBenchOptions {
  nodes: number;
  pods: number;
  rounds: number;
  /** The gateway's entry point: a .ts file runs under tsx, a .js file (a build) under plain node. */
  entry?: string;
  idleSnapshot: boolean;
  /** Pending pods (schedulerName nobody serves) held in the cache for the last snapshot. */
  heldPods: number;
  /** Quiet seconds after the rounds before a last reading (0: none); past the gateway's idle reclaim. */
  quietSeconds: number;
}

async function processMetrics(
  base: string,
): Promise<{ heapUsed: number; heapTotal: number; external: number }> {
  const m = parseMemoryBreakdown(await fetch(`${base}/metrics`).then((r) => r.text()), 'nodeload_');
  return {
    heapUsed: m?.heapUsedBytes ?? Number.NaN,
    heapTotal: m?.heapTotalBytes ?? Number.NaN,
    external: m?.externalBytes ?? Number.NaN,
  };
}

async function createHeldPods(core: CoreV1Api, count: number): Promise<void> {
  const create = (i: number) =>
    core.createNamespacedPod({
      namespace: SCHED_NAMESPACE,
      body: {
        metadata: {
          name: `held-${String(i).padStart(5, '0')}`,
          labels: { app: 'bench', shard: String(i % 10) },
        },
        spec: {
          schedulerName: 'nobody',
          containers: [
            {
              name: 'app',
              image: 'registry.invalid/bench:1',
              resources: { requests: { cpu: '100m', memory: '128Mi' } },
            },
          ],
        },
      },
    });
  for (let i = 0; i < count; i += 16) {
    await Promise.all(Array.from({ length: Math.min(16, count - i) }, (_, k) => create(i + k)));
  }
}

export async function runMemoryBench(cluster: BenchCluster, opts: MemoryBenchOptions): Promise<string> {
  const kubeconfig = cluster.state.kubeconfig;
  const kc = loadKubeConfig(kubeconfig);
  await ensureCrd(kc, createLogger('silent'));
  await ensureBenchNodes(kubeconfig, opts.nodes);
  await ensureNamespace(kubeconfig, SCHED_NAMESPACE);
  await waitForDefaultServiceAccount(kubeconfig, SCHED_NAMESPACE, 60_000);
  const [httpPort] = (await freePorts(1)) as [number];
  const logFile = path.join(cluster.workDir, 'gateway.log');
  const args = [
    `--kubeconfig=${kubeconfig}`,
    `--http-port=${httpPort}`,
    '--bind-address=127.0.0.1',
    '--anonymous-user-port=true', // reads /metrics and /scheduler/status without a token
    '--leader-elect=false',
    '--install-crd=false',
    `--scheduler-name=${SCHEDULER}`,
    '--log-level=info',
  ];
  // The Deployment's V8 flags (heap caps, --expose-gc), as the scheduler bench runs it.
  const nodeArgs = [
    ...deploymentNodeOptions(),
    '--heapsnapshot-signal=SIGUSR2',
    `--diagnostic-dir=${cluster.workDir}`,
  ];
  const entry = opts.entry ?? gatewayEntry();
  const child = entry.endsWith('.ts')
    ? spawnTs(entry, args, { logFile, nodeArgs })
    : spawnJs(entry, args, { logFile, nodeArgs });
  const base = `http://127.0.0.1:${httpPort}`;
  try {
    await waitForUrl(`${base}/readyz`, (s) => s === 200, {
      what: 'gateway',
      child,
      logFile,
      timeoutMs: 90_000,
    });
    await waitForUrl(
      `${base}/scheduler/status`,
      (s, body) => s === 200 && (JSON.parse(body) as { cacheSynced?: boolean }).cacheSynced === true,
      { what: 'gateway synced', child, logFile },
    );
    if (!child.pid) throw new Error('gateway has no pid');
    const pid = child.pid;
    const sched: SchedulerProcess = {
      label: 'nodeload',
      schedulerName: SCHEDULER,
      pid,
      child,
      prefix: 'mem',
    };
    const out: string[] = [];
    // RSS and heap figures are read before any snapshot: writing one grows the process by about the heap.
    const figures = async (what: string) => {
      const st = procStats(pid);
      const m = await processMetrics(base);
      out.push(
        `${what}: RSS ${fmt.mib(st.rssBytes)} MiB (peak ${fmt.mib(st.peakRssBytes)}), V8 heap used ` +
          `${fmt.mib(m.heapUsed)} / total ${fmt.mib(m.heapTotal)} MiB, external ${fmt.mib(m.external)} MiB`,
      );
    };
    await sleep(5000);
    await figures('idle');
    if (opts.idleSnapshot) out.push(heapTable(summarizeSnapshot(await snapshot(pid, cluster.workDir))));
    const core = kc.makeApiClient(CoreV1Api);
    const phaseOpts = { pods: opts.pods, concurrency: 16, phaseTimeoutMs: 180_000 };
    for (let r = 0; r < opts.rounds; r++) {
      const res = await runPhase(cluster, kc, { ...sched, prefix: `mem${r}` }, 'live', phaseOpts, () => {});
      log(`round ${r}: ${res.bound} bound`);
    }
    await sleep(5000);
    await figures(`after ${opts.rounds} rounds of ${opts.pods} bound pods (deleted)`);
    // The steady state: past --idle-memory-reclaim-seconds of quiet, the gateway has returned what the
    // burst grew the heap to (src/server/idle-memory.ts).
    if (opts.quietSeconds > 0) {
      await sleep(opts.quietSeconds * 1000);
      await figures(`after ${opts.quietSeconds} s more of quiet`);
    }
    // Pods for no scheduler stay Pending: what the cache holds per pod, with nothing else going on.
    if (opts.heldPods > 0) {
      await createHeldPods(core, opts.heldPods);
      await sleep(5000);
      await figures(`holding ${opts.heldPods} pending pods`);
    }
    out.push(heapTable(summarizeSnapshot(await snapshot(pid, cluster.workDir))));
    const status = await fetch(`${base}/scheduler/status`).then((r) => r.json());
    out.push(`status ${JSON.stringify(status)}`);
    await deleteAllPods(core);
    return out.join('\n\n');
  } finally {
    await stopChild(child);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string' },
      pods: { type: 'string' },
      rounds: { type: 'string' },
      entry: { type: 'string' },
      'idle-snapshot': { type: 'boolean' },
      'held-pods': { type: 'string' },
      'quiet-seconds': { type: 'string' },
      analyse: { type: 'string' },
    },
  });
  if (values.analyse) {
    console.log(heapTable(summarizeSnapshot(values.analyse), 40));
    return;
  }
  const cluster = await acquireCluster({ scheduler: false });
  try {
    console.log(
      await runMemoryBench(cluster, {
        nodes: Number(values.nodes ?? 100),
        pods: Number(values.pods ?? 1000),
        rounds: Number(values.rounds ?? 2),
        ...(values.entry ? { entry: path.resolve(values.entry) } : {}),
        idleSnapshot: values['idle-snapshot'] === true,
        heldPods: Number(values['held-pods'] ?? 2000),
        // Past the default --idle-memory-reclaim-seconds (60).
        quietSeconds: Number(values['quiet-seconds'] ?? 70),
      }),
    );
  } finally {
    await cluster.release();
  }
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

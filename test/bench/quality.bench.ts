// Placement quality: what load-awareness buys. Two identical pools of KWOK nodes whose real usage is
// skewed — a share of the nodes is busy with work their requests do not show (as Trimaran's and
// Koordinator's load-aware designs assume), the rest idle — served through metrics.k8s.io by the test
// backend behind the real aggregator. The same pods go to one pool through the stock kube-scheduler
// (default profile) and to the other through nodeload (with a NodeLoadRule: maxCPU/maxMemory 80 %).
// Usage follows placement: every 2 s each node's usage = its base + Σ requests × factor of its pods.
// After placement, then through churn (a share of the pods replaced every interval), the report gives
// per pool: max node CPU% and memory% by usage, their standard deviation, nodes above 80 %, pods left
// Pending, and for nodeload the rule violations (a node over the rule's threshold by usage that got a
// pod while over it — must be 0).
//
// With --scrape-seconds S, usage is served as metrics-server serves it: a sample every S seconds, each a
// rate over the S seconds before it, so a pod bound within the window shows only the part it ran there —
// usage lags placement, and only the estimate of recent pods stands between a burst and one node.
//
//   npx tsx test/bench/quality.bench.ts [--nodes 100] [--pods 300] [--churn-seconds 120] [--factor 0.8]
//                                       [--scrape-seconds 15]
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { bytes, cpuMilli } from '../../src/cluster/quantity.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { createLogger } from '../../src/server/log.js';
import { freePorts } from '../cluster/controlplane.js';
import { createFakeNodes, loadKubeConfig, waitForNodesReady } from '../cluster/nodes.js';
import { type FakeMetricsServer, startFakeMetricsServer } from '../fixtures/metrics-server.js';
import {
  acquireCluster,
  type BenchReport,
  ensureNamespace,
  gatewayEntry,
  isMain,
  log,
  renderReport,
  sleep,
  spawnJs,
  stopChild,
  waitForUrl,
} from './lib.js';
import { type QualityOptions, qualityReport, THRESHOLD, type UsageSummary } from './quality-report.js';

const POOLS = { kube: 'k', nodeload: 'n' } as const;
type Engine = keyof typeof POOLS;
const SCHEDULERS: Record<Engine, string> = { kube: 'default-scheduler', nodeload: 'nodeload-scheduler' };
const NODE_CPU_MILLI = 8000;
const NODE_MEMORY = 32 * 2 ** 30;
const POOL_LABEL = 'nodeload.bench/quality-pool';

/** Node i's own usage, unseen by requests: 3 in 10 busy (65 % CPU, 55 % memory), the rest idle. */
function baseUsage(i: number): { cpuMilli: number; memoryBytes: number } {
  const busy = i % 10 < 3;
  return {
    cpuMilli: Math.round(NODE_CPU_MILLI * (busy ? 0.65 : 0.1)),
    memoryBytes: Math.round(NODE_MEMORY * (busy ? 0.55 : 0.15)),
  };
}

/** The bench's request mix (as the scheduler bench's): 250m–1 CPU, 512Mi–3Gi. */
function podSpec(i: number): { cpu: string; memory: string } {
  return {
    cpu: ['250m', '500m', '750m', '1'][i % 4] as string,
    memory: ['512Mi', '1Gi', '2Gi', '3Gi'][i % 4] as string,
  };
}

interface PoolState {
  engine: Engine;
  namespace: string;
  nodes: string[];
  base: Map<string, { cpuMilli: number; memoryBytes: number }>;
  created: number;
  /** Rule violations seen while sampling (node over the threshold that got a new pod). */
  violations: Set<string>;
  /** Node → pods bound there, and its usage, at the previous sample. */
  lastPods: Map<string, Set<string>>;
  lastUsage: Map<string, Usage>;
  series: UsageSummary[];
}

interface Usage {
  node: string;
  cpuPercent: number;
  memoryPercent: number;
}

/** When the pod was bound (its PodScheduled condition, to the second), in ms; 0 when unknown. */
function boundAt(p: V1Pod): number {
  const c = p.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'True');
  const t = c?.lastTransitionTime ? new Date(c.lastTransitionTime).getTime() : 0;
  return Number.isFinite(t) ? t : 0;
}

/**
 * Each node's usage: its base plus its pods' requests × factor. With `window` (ms) the usage is a rate
 * over the window ending `at`: a pod bound within it counts for the fraction of the window it ran.
 */
function usageOf(
  pool: PoolState,
  pods: V1Pod[],
  factor: number,
  window?: { at: number; ms: number },
): Usage[] {
  const req = new Map<string, { cpu: number; mem: number }>();
  for (const p of pods) {
    const node = p.spec?.nodeName;
    if (!node || p.metadata?.deletionTimestamp) continue;
    const r = p.spec?.containers[0]?.resources?.requests ?? {};
    const ran = window ? Math.min(1, Math.max(0, (window.at - boundAt(p)) / window.ms)) : 1;
    const cur = req.get(node) ?? { cpu: 0, mem: 0 };
    cur.cpu += cpuMilli(r['cpu']) * ran;
    cur.mem += bytes(r['memory']) * ran;
    req.set(node, cur);
  }
  return pool.nodes.map((node) => {
    const b = pool.base.get(node) ?? { cpuMilli: 0, memoryBytes: 0 };
    const r = req.get(node) ?? { cpu: 0, mem: 0 };
    return {
      node,
      cpuPercent: (100 * (b.cpuMilli + r.cpu * factor)) / NODE_CPU_MILLI,
      memoryPercent: (100 * (b.memoryBytes + r.mem * factor)) / NODE_MEMORY,
    };
  });
}

const stddev = (xs: number[]) => {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
};

function summary(u: Usage[], atSeconds = 0): UsageSummary {
  const cpu = u.map((x) => x.cpuPercent);
  const mem = u.map((x) => x.memoryPercent);
  return {
    maxCpu: Math.max(...cpu),
    sdCpu: stddev(cpu),
    maxMem: Math.max(...mem),
    sdMem: stddev(mem),
    over: u.filter((x) => x.cpuPercent > THRESHOLD || x.memoryPercent > THRESHOLD).length,
    atSeconds,
  };
}

export async function runQualityBench(opts: QualityOptions): Promise<BenchReport> {
  const cluster = await acquireCluster({ scheduler: true });
  const kubeconfig = cluster.state.kubeconfig;
  const kc = loadKubeConfig(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  let metrics: FakeMetricsServer | undefined;
  let gateway: ChildProcess | undefined;
  try {
    await ensureCrd(kc, createLogger('silent'));
    metrics = await startFakeMetricsServer({ pkiDir: cluster.state.pkiDir, kubeconfig });
    const pools = {} as Record<Engine, PoolState>;
    for (const engine of ['kube', 'nodeload'] as Engine[]) {
      const prefix = `quality-${POOLS[engine]}`;
      const nodes = Array.from({ length: opts.nodes }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);
      await createFakeNodes(
        kubeconfig,
        nodes.map((name) => ({ name, cpu: 8, memory: '32Gi', pods: 110, labels: { [POOL_LABEL]: engine } })),
      );
      await waitForNodesReady(kubeconfig, nodes, { timeoutMs: 120_000, intervalMs: 500 });
      const namespace = `${prefix}-pods`;
      await ensureNamespace(kubeconfig, namespace);
      pools[engine] = {
        engine,
        namespace,
        nodes,
        base: new Map(nodes.map((n, i) => [n, baseUsage(i)])),
        created: 0,
        violations: new Set(),
        lastPods: new Map(),
        lastUsage: new Map(),
        series: [],
      };
    }
    await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace: pools.nodeload.namespace,
      body: {
        apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
        kind: 'NodeLoadRule',
        metadata: { name: 'quality' },
        spec: { maxCPU: THRESHOLD, maxMemory: THRESHOLD },
      },
    });

    const listPods = async (pool: PoolState) =>
      (await core.listNamespacedPod({ namespace: pool.namespace })).items;
    // Usage follows placement; a pod placed on a node that was over the threshold at the previous
    // sample is a rule violation. Samples carry the time they were taken, so the gateway's estimate
    // covers exactly the pods bound after it (as with metrics-server's scrape time).
    // Seconds since the churn began, for the per-minute table (0 before it).
    let churnStart = Number.NaN;
    const scrapeMs = (opts.scrapeSeconds ?? 0) * 1000;
    let scrapedAt = Number.NEGATIVE_INFINITY;
    const sample = async (record: boolean) => {
      const scrape = scrapeMs === 0 || Date.now() - scrapedAt >= scrapeMs;
      if (scrape) scrapedAt = Date.now();
      for (const pool of Object.values(pools)) {
        const takenAt = new Date();
        const pods = await listPods(pool);
        const usage = usageOf(pool, pods, opts.factor);
        const now = new Map<string, Set<string>>();
        for (const p of pods) {
          const n = p.spec?.nodeName;
          if (!n || p.metadata?.deletionTimestamp) continue;
          now.set(n, (now.get(n) ?? new Set()).add(p.metadata?.name as string));
        }
        for (const [node, names] of now) {
          const prev = pool.lastPods.get(node) ?? new Set();
          const was = pool.lastUsage.get(node);
          const over = was && (was.cpuPercent > THRESHOLD || was.memoryPercent > THRESHOLD);
          if (over && [...names].some((n) => !prev.has(n))) pool.violations.add(node);
        }
        pool.lastPods = now;
        pool.lastUsage = new Map(usage.map((u) => [u.node, u]));
        // Without a scrape interval the usage served is the placement at the sample's time, not a rate
        // over metrics-server's 20 s: window 2 s. With one, it is the rate over the interval.
        const served =
          scrapeMs > 0 ? usageOf(pool, pods, opts.factor, { at: takenAt.getTime(), ms: scrapeMs }) : usage;
        for (const u of scrape ? served : []) {
          metrics?.setUsage(
            u.node,
            {
              cpu: `${Math.round((u.cpuPercent * NODE_CPU_MILLI) / 100)}m`,
              memory: String(Math.round((u.memoryPercent * NODE_MEMORY) / 100)),
            },
            takenAt,
            scrapeMs > 0 ? `${opts.scrapeSeconds}s` : '2s',
          );
        }
        if (record)
          pool.series.push(summary(usage, Number.isNaN(churnStart) ? 0 : (Date.now() - churnStart) / 1000));
      }
    };
    await sample(false);

    const [httpPort] = (await freePorts(1)) as [number];
    const logFile = path.join(cluster.workDir, 'gateway-quality.log');
    gateway = spawnJs(
      gatewayEntry(),
      [
        `--kubeconfig=${kubeconfig}`,
        `--http-port=${httpPort}`,
        '--bind-address=127.0.0.1',
        '--leader-elect=false',
        '--install-crd=false',
        '--metrics-poll-seconds=2',
        '--anonymous-user-port=true', // reads /api/node-load without a token (loopback only)
        '--log-level=info',
      ],
      { logFile },
    );
    await waitForUrl(`http://127.0.0.1:${httpPort}/readyz`, (s) => s === 200, {
      what: 'nodeload gateway',
      child: gateway,
      logFile,
      timeoutMs: 90_000,
    });
    // Its cache may have synced before metrics.k8s.io answered (an APIService registered but not yet
    // available is "served" and its poll fails): until a poll succeeds it would place by requests alone,
    // blind to the busy nodes. Wait until it reads every node of its pool from metrics.
    const fromMetrics = async () => {
      const res = await fetch(`http://127.0.0.1:${httpPort}/api/node-load`).catch(() => undefined);
      if (!res?.ok) return false;
      const body = (await res.json()) as { nodes: { name: string; source: string; metricsStale: boolean }[] };
      const mine = new Set(pools.nodeload.nodes);
      const read = body.nodes.filter((n) => mine.has(n.name) && n.source !== 'requests' && !n.metricsStale);
      return read.length === mine.size;
    };
    const servedBy = Date.now() + 90_000;
    while (!(await fromMetrics())) {
      if (Date.now() > servedBy)
        throw new Error(`the gateway never read its nodes from metrics (${logFile})`);
      await sleep(500);
    }
    await sleep(5000); // a metrics poll after the first samples

    const create = async (pool: PoolState, count: number) => {
      const bodies = Array.from({ length: count }, () => {
        const i = pool.created++;
        const r = podSpec(i);
        return {
          metadata: { name: `q-${i}`, labels: { app: 'quality' } },
          spec: {
            schedulerName: SCHEDULERS[pool.engine],
            nodeSelector: { [POOL_LABEL]: pool.engine },
            terminationGracePeriodSeconds: 0,
            containers: [
              {
                name: 'c',
                image: 'registry.invalid/app:1',
                resources: { requests: { cpu: r.cpu, memory: r.memory } },
              },
            ],
          },
        } satisfies V1Pod;
      });
      for (const body of bodies) await core.createNamespacedPod({ namespace: pool.namespace, body });
    };
    const settle = async () => {
      for (let i = 0; i < 60; i++) {
        const all = await Promise.all(Object.values(pools).map(listPods));
        const undecided = all
          .flat()
          .filter(
            (p) =>
              !p.spec?.nodeName &&
              !p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False'),
          );
        if (undecided.length === 0) return;
        await sleep(500);
      }
    };

    // Placement in waves, so usage (and nodeload's metrics) can follow.
    const wave = Math.max(1, Math.round(opts.pods / 15));
    for (let placed = 0; placed < opts.pods; placed += wave) {
      const n = Math.min(wave, opts.pods - placed);
      await Promise.all(Object.values(pools).map((p) => create(p, n)));
      await settle();
      await sample(false);
      await sleep(2500);
      await sample(false);
    }
    await sample(true);
    const afterPlacement = Object.fromEntries(
      Object.values(pools).map((p) => [p.engine, p.series.at(-1)]),
    ) as Record<Engine, UsageSummary>;
    const pending = async (pool: PoolState) => (await listPods(pool)).filter((p) => !p.spec?.nodeName).length;
    const pendingAfter = { kube: await pending(pools.kube), nodeload: await pending(pools.nodeload) };

    // Churn: every 10 s, 10 % of each pool's pods replaced by new ones of the same mix.
    churnStart = Date.now();
    for (const p of Object.values(pools)) p.series = [];
    while (Date.now() - churnStart < opts.churnSeconds * 1000) {
      for (const pool of Object.values(pools)) {
        const pods = (await listPods(pool)).filter((p) => p.spec?.nodeName);
        const victims = pods.filter((_, i) => i % 10 === Math.floor(Date.now() / 1000) % 10);
        for (const v of victims)
          await core
            .deleteNamespacedPod({
              namespace: pool.namespace,
              name: v.metadata?.name as string,
              gracePeriodSeconds: 0,
            })
            .catch(() => undefined);
        await create(pool, victims.length);
      }
      await settle();
      for (let i = 0; i < 4; i++) {
        await sample(true);
        await sleep(2500);
      }
    }
    return qualityReport({
      opts,
      waves: Math.ceil(opts.pods / wave),
      afterPlacement,
      pending: pendingAfter,
      violations: pools.nodeload.violations.size,
      churn: { kube: pools.kube.series, nodeload: pools.nodeload.series },
      floorCpuPercent: Math.max(
        ...pools.nodeload.nodes.map((_, i) => (100 * baseUsage(i).cpuMilli) / NODE_CPU_MILLI),
      ),
    });
  } finally {
    if (gateway) await stopChild(gateway);
    await metrics?.stop().catch(() => undefined);
    await cluster.release();
  }
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '100' },
      pods: { type: 'string', default: '300' },
      'churn-seconds': { type: 'string', default: '120' },
      factor: { type: 'string', default: '0.8' },
      'scrape-seconds': { type: 'string', default: '0' },
    },
  });
  const report = await runQualityBench({
    nodes: Number(values.nodes),
    pods: Number(values.pods),
    churnSeconds: Number(values['churn-seconds']),
    factor: Number(values.factor),
    scrapeSeconds: Number(values['scrape-seconds']),
  });
  log(renderReport(report));
}

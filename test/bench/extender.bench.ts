// Extender mode against its two alternatives, on the same API server and KWOK nodes:
//   kube-scheduler alone (client QPS 500 / burst 1000),
//   the same kube-scheduler with nodeload as its extender (manifests/scheduler/extender.yaml: filter,
//     prioritize, bind over TLS with a client certificate; the gateway's HTTPS port on 127.0.0.1),
//   nodeload standalone (the same gateway's own loop, bind QPS 500 / burst 1000).
//
//   npx tsx test/bench/extender.bench.ts [--pods 1000] [--nodes 100] [--concurrency 16] [--rounds 1] [--workload W]
//
// Live phases only (pods created while the schedulers run), in alternating order per round; each pod is
// timed from its create call to the watch event showing it bound. Every pod is covered by a NodeLoadRule
// (thresholds above what the workload reaches), so the extender does its rule work for each one.
import { freePorts } from '../cluster/controlplane.js';
import { localExtenderSchedulerConfig } from '../cluster/extender.js';
import { type BenchCluster, type BenchReport, fmt, markdownTable, runWhenMain, stopChild } from './lib.js';
import {
  prepareCluster,
  SCHEDULER_DEFAULTS,
  type SchedulerBenchOptions,
  schedulerBenchArgs,
  startFastKubeScheduler,
  startGateway,
  startKubeScheduler,
} from './scheduler.bench.js';
import {
  type Combined,
  combine,
  type PhaseResult,
  runPhase,
  type SchedulerProcess,
} from './scheduler-phase.js';

const WITH_EXTENDER = 'kube-scheduler-extender';
const CLIENT_LIMITS = { qps: 500, burst: 1000 };

async function startSchedulers(cluster: BenchCluster) {
  const { state } = cluster;
  const [httpsPort] = (await freePorts(1)) as [number];
  // One gateway: its loop places nodeload-scheduler pods, its extender answers the second kube-scheduler.
  const gateway = await startGateway(cluster, [
    `--https-port=${httpsPort}`,
    `--tls-cert-file=${state.pki.servingCert}`,
    `--tls-key-file=${state.pki.servingKey}`,
    `--extender-client-ca-file=${state.pki.caCert}`,
  ]);
  const alone = { ...(await startFastKubeScheduler(cluster)), label: 'kube-scheduler alone (QPS 500)' };
  const extended = await startKubeScheduler(cluster, {
    label: 'kube-scheduler + nodeload extender (QPS 500)',
    schedulerName: WITH_EXTENDER,
    prefix: 'kx',
    config: localExtenderSchedulerConfig({
      kubeconfig: state.kubeconfig,
      pki: state.pki,
      port: httpsPort,
      profiles: [WITH_EXTENDER],
      qps: CLIENT_LIMITS,
    }),
  });
  return { gateway: { ...gateway, label: 'nodeload standalone (bind QPS 500)' }, alone, extended };
}

export async function runExtenderBench(
  cluster: BenchCluster,
  options: Partial<SchedulerBenchOptions> = {},
): Promise<BenchReport> {
  const opts = { ...SCHEDULER_DEFAULTS, rounds: 1, ...options };
  const kc = await prepareCluster(cluster, opts);
  const { gateway, alone, extended } = await startSchedulers(cluster);
  const children = [gateway.child, alone.child, extended.child];
  try {
    const alive = () => {
      for (const c of children)
        if (c && c.exitCode !== null) throw new Error(`a scheduler exited (${c.spawnargs.join(' ')})`);
    };
    const order: SchedulerProcess[] = [alone, extended, gateway];
    const phases = new Map<SchedulerProcess, PhaseResult[]>(order.map((s) => [s, []]));
    for (let round = 0; round < opts.rounds; round++) {
      const turn = round % 2 === 0 ? order : [...order].reverse();
      for (const s of turn) phases.get(s)?.push(await runPhase(cluster, kc, s, 'live', opts, alive));
    }
    return report(
      opts,
      order.map((s) => combine(phases.get(s) ?? [])),
    );
  } finally {
    for (const c of children.reverse()) if (c) await stopChild(c);
  }
}

const rate = (r: Combined) => r.bound / r.wallSeconds;

function report(opts: SchedulerBenchOptions, rows: Combined[]): BenchReport {
  const [alone, extended, nodeload] = rows as [Combined, Combined, Combined];
  const line = (r: Combined) => [
    r.scheduler.label + (r.complete ? '' : ` — **incomplete: ${r.bound}/${r.rounds * opts.pods} bound**`),
    fmt.int(rate(r)),
    fmt.ms(r.latencyMs.p50),
    fmt.ms(r.latencyMs.p99),
    `${r.createSeconds.toFixed(1)} / ${r.tailSeconds.toFixed(1)}`,
    `${r.overcommitted.length}`,
  ];
  const ratio = (a: Combined, b: Combined, name: string) => [
    `**${name}**`,
    fmt.ratio(rate(a) / rate(b)),
    fmt.ratio(a.latencyMs.p50 / b.latencyMs.p50),
    fmt.ratio(a.latencyMs.p99 / b.latencyMs.p99),
    '',
    '',
  ];
  return {
    title: 'Extender mode: kube-scheduler + nodeload vs kube-scheduler alone vs nodeload standalone',
    setup:
      `${fmt.int(opts.pods)} pods per phase on ${opts.nodes} KWOK nodes, created by one client with ` +
      `${opts.concurrency} creates in flight (the scheduler bench's mixed workload, every pod under a ` +
      `NodeLoadRule); live phases, ${opts.rounds} round(s) in alternating order, on one API server. Both ` +
      'kube-schedulers run with client QPS 500 / burst 1000; the extender one calls the gateway for filter, ' +
      'prioritize and bind (TLS, client certificate, nodeCacheCapable).',
    table: markdownTable(
      [
        'live: scheduler',
        'pods/s (first create → last bound)',
        'create→bound p50 ms',
        'p99 ms',
        'create s / tail s',
        'over-committed nodes',
      ],
      [
        ...rows.map(line),
        ratio(extended, alone, 'kube-scheduler + extender ÷ kube-scheduler alone'),
        ratio(extended, nodeload, 'kube-scheduler + extender ÷ nodeload standalone'),
      ],
    ),
    ratios: [
      {
        metric: 'extender mode pods/s, live',
        value: rate(extended) / rate(alone),
        anchor: 'kube-scheduler alone',
      },
      {
        metric: 'extender mode p99 create→bound, live',
        value: extended.latencyMs.p99 / alone.latencyMs.p99,
        anchor: 'kube-scheduler alone',
        note: 'lower is better',
      },
      {
        metric: 'extender mode pods/s, live',
        value: rate(extended) / rate(nodeload),
        anchor: 'nodeload standalone',
      },
    ],
    notes: [
      'In extender mode every pod costs kube-scheduler three HTTPS round trips to the gateway, and the bind ' +
        "goes through the gateway; a covered pod's filter also waits for the binds of the pods let through " +
        'before it (so that none is missing from the loads it judges) when they could change its answer, ' +
        "which serializes kube-scheduler's scheduling cycles behind its binds near a rule's limits.",
      `Over-commit check after each phase (pods, CPU and memory requests per node): ${rows.every((r) => r.overcommitted.length === 0) ? 'held on every node in every phase' : '**violated**'}.`,
    ],
  };
}

// The cluster's own kube-scheduler is not needed: this bench starts the two it compares.
runWhenMain(import.meta.url, { scheduler: false }, (cluster) =>
  runExtenderBench(cluster, schedulerBenchArgs()),
);

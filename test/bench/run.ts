// `npm run bench`: every benchmark against one private local cluster (loopback only), a Markdown report on
// stdout and in test/bench/RESULTS.md. Not part of `npm test`: these measure, they assert nothing.
//
//   NODELOAD_BENCH_CLUSTER_DIR=.run/cluster   reuse a running cluster (started with `cluster:up --scheduler`)
//   NODELOAD_BENCH_KEEP=1                      keep the scratch dir (component and gateway logs)
//   NODELOAD_BENCH_OUT=path                    write the report elsewhere than test/bench/RESULTS.md (a complete
//                                              run into RESULTS.md also rewrites the README's quote of it)
//   NODELOAD_BENCH_PROFILE=1                   V8 CPU profiles of the servers under test (use with KEEP=1)
//   NODELOAD_BENCH_SCHEDULER_5K=5k             the full 5,000-node / 20,000-pod scheduler profile (default quick)
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runAggregatedBench } from './aggregated.bench.js';
import { runExtenderBench } from './extender.bench.js';
import { runFanoutBench } from './fanout.bench.js';
import {
  acquireCluster,
  type BenchReport,
  fmt,
  log,
  machineInfo,
  markdownTable,
  renderReport,
} from './lib.js';
import { runQualityBench } from './quality.bench.js';
import { quoteReadme } from './readme-quote.js';
import { runSchedulerBench, SCHEDULER_PROFILES } from './scheduler.bench.js';
import { runViewsBench } from './views.bench.js';
import { runWebhookBench } from './webhook.bench.js';

// NODELOAD_BENCH_SCHEDULER_5K=5k runs the full 5,000-node / 20,000-pod profile (about half an hour on 2
// cores); the default is the quick one (5,000 nodes, 3,000 pods).
const SCHEDULER_1K = '1k';
const SCHEDULER_5K = process.env['NODELOAD_BENCH_SCHEDULER_5K'] ?? 'quick';
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
const OUT = process.env['NODELOAD_BENCH_OUT'] ?? RESULTS;
const README = fileURLToPath(new URL('../../README.md', import.meta.url));

function summary(reports: BenchReport[]): string {
  const rows = reports.flatMap((r) =>
    r.ratios.map((x) => [x.metric, x.anchor, fmt.ratio(x.value), x.note ?? 'higher is better']),
  );
  return markdownTable(['metric', 'anchor', 'nodeload ÷ anchor', ''], rows);
}

/**
 * RESULTS.md for the benches done so far. Written after each one, so a run cut short (the full run is over
 * an hour on 2 cores) still leaves what it measured; the header says how many of the benches it holds.
 */
function report(
  machine: ReturnType<typeof machineInfo>,
  started: number,
  reports: BenchReport[],
  failures: string[],
  done: number,
  total: number,
): string {
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const load = machine.loadAverage.map((l) => l.toFixed(1)).join(' / ');
  const partial =
    done < total
      ? `\n\n**Partial: ${done} of ${total} benches done when this was written** (the run was still going or was stopped).`
      : '';
  return `# nodeload benchmarks

Measured ${machine.date.slice(0, 16).replace('T', ' ')} UTC with \`npm run bench\` (${minutes} min) on ${machine.cpus} CPUs
(${machine.cpuModel}), ${machine.memoryGiB.toFixed(1)} GiB RAM, Node ${machine.node}; load average at the start
(1 / 5 / 15 min): ${load}. Everything ran on this one machine over 127.0.0.1: a private control plane (etcd,
kube-apiserver, kube-controller-manager, kube-scheduler, KWOK), the servers under test and the load generators, so
absolute figures move with whatever else the box runs; the ratios, taken from alternating or back-to-back runs on
the same cluster, are the figures to compare across runs.${partial}

## Summary: nodeload as a ratio of its anchors

${summary(reports)}

${reports.map(renderReport).join('\n')}${failures.length ? `\n## Benches that failed in this run\n\n${failures.map((f) => `- ${f}`).join('\n')}\n` : ''}`;
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const started = Date.now();
  const cluster = await acquireCluster({ scheduler: true });
  const reports: BenchReport[] = [];
  const failures: string[] = [];
  type Bench = [name: string, run: () => Promise<BenchReport>];
  // Smallest cluster first: the benches add KWOK nodes and never remove them (every scheduler sees them all).
  const onSharedCluster: Bench[] = [
    ['webhook bench', () => runWebhookBench(cluster)],
    ['extender bench', () => runExtenderBench(cluster)],
    ['scheduler bench, 1,000 nodes', () => runSchedulerBench(cluster, SCHEDULER_PROFILES[SCHEDULER_1K])],
    ['views bench, 1,000 nodes', () => runViewsBench(cluster)],
    ['subscription fan-out bench, 1,000 nodes', () => runFanoutBench(cluster)],
    ['aggregated API bench, 5,000 nodes', () => runAggregatedBench(cluster)],
    [
      `scheduler bench, 5,000 nodes (profile ${SCHEDULER_5K})`,
      () => runSchedulerBench(cluster, SCHEDULER_PROFILES[SCHEDULER_5K]),
    ],
  ];
  // Each on a cluster of its own: it registers metrics.k8s.io (cluster-wide) for the skewed usage. The
  // second serves usage as metrics-server does (a rate over 15 s, every 15 s), so it lags placement; the
  // third is the issue's larger pool and its 10 minutes of churn.
  const onOwnCluster: Bench[] = [
    [
      'placement quality bench, 100 nodes',
      () => runQualityBench({ nodes: 100, pods: 300, churnSeconds: 120, factor: 0.8 }),
    ],
    [
      'placement quality bench, 100 nodes, metrics scraped every 15 s',
      () => runQualityBench({ nodes: 100, pods: 300, churnSeconds: 120, factor: 0.8, scrapeSeconds: 15 }),
    ],
    [
      'placement quality bench, 1,000 nodes',
      () => runQualityBench({ nodes: 1000, pods: 3000, churnSeconds: 600, factor: 0.8 }),
    ],
  ];
  const total = onSharedCluster.length + onOwnCluster.length;
  let done = 0;
  // One bench failing must not cost the others' figures: it is reported, the rest go on.
  const bench = async ([name, run]: Bench) => {
    log(name);
    try {
      reports.push(await run());
    } catch (err) {
      log(`${name} failed: ${String(err)}`);
      failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
    done++;
    if (done < total) await writeFile(OUT, report(machine, started, reports, failures, done, total));
  };
  try {
    for (const b of onSharedCluster) await bench(b);
  } finally {
    await cluster.release();
  }
  for (const b of onOwnCluster) await bench(b);
  if (failures.length) process.exitCode = 1;
  const markdown = report(machine, started, reports, failures, done, total);
  await writeFile(OUT, markdown);
  console.log(markdown);
  log(`wrote ${OUT}`);
  // A complete run into the checked-in RESULTS.md is what the README quotes.
  if (OUT === RESULTS && failures.length === 0) {
    await quoteReadme(OUT, README);
    log(`quoted its summary in ${README}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

// Backlog phases of the scheduler bench, against nodeload alone, again and again: the gateway is stopped
// (SIGSTOP) while the pods are created and resumed once they all exist. A phase that does not complete
// is what this looks for; every few seconds the gateway's /scheduler/status and its cache and write
// metrics go to soak.jsonl in the kept scratch dir, so the moment a drain stops can be read afterwards.
//
//   NODELOAD_BENCH_KEEP=1 npx tsx test/bench/backlog-soak.bench.ts [--nodes 1000] [--pods 5000] [--phases 8]
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { acquireCluster, log } from './lib.js';
import {
  prepareCluster,
  SCHEDULER_PROFILES,
  startFastKubeScheduler,
  startGateway,
} from './scheduler.bench.js';
import { runPhase } from './scheduler-phase.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1000' },
    pods: { type: 'string', default: '5000' },
    phases: { type: 'string', default: '8' },
    timeout: { type: 'string', default: '150' },
    // Each nodeload phase follows a kube-scheduler (client QPS 500) backlog phase, as in the bench's rounds.
    alternate: { type: 'boolean', default: false },
  },
});

const WATCHED = [
  'nodeload_cache_watch_events_total',
  'nodeload_cache_watch_restarts_total',
  'nodeload_cache_lists_total',
  'nodeload_cache_watches_total',
  'nodeload_scheduler_pending_writes',
  'nodeload_scheduler_binds_in_flight',
  'nodeload_scheduler_pending_pods',
  'nodeload_rest_client_request_retries_total',
];

async function main(): Promise<void> {
  const cluster = await acquireCluster({ scheduler: false });
  const gatewayStop: (() => Promise<void>)[] = [];
  try {
    const opts = {
      ...SCHEDULER_PROFILES['1k'],
      nodes: Number(values.nodes),
      pods: Number(values.pods),
      concurrency: 16,
      phaseTimeoutMs: Number(values.timeout) * 1000,
      rounds: 1,
      stock: false,
      ceiling: false,
      workload: 'contract' as const,
    };
    const kc = await prepareCluster(cluster, opts);
    const fast = values.alternate ? await startFastKubeScheduler(cluster) : undefined;
    const gateway = await startGateway(cluster);
    gatewayStop.push(async () => {
      gateway.child?.kill('SIGTERM');
      fast?.child?.kill('SIGTERM');
    });
    const base = `http://127.0.0.1:${gateway.httpPort}`;
    const out = path.join(cluster.workDir, 'soak.jsonl');
    let phaseNo = 0;
    const sample = async () => {
      try {
        const status = await fetch(`${base}/scheduler/status`).then((r) => r.json());
        const metrics = (await fetch(`${base}/metrics`).then((r) => r.text()))
          .split('\n')
          .filter((l) => WATCHED.some((m) => l.startsWith(m)));
        appendFileSync(
          out,
          `${JSON.stringify({ at: new Date().toISOString(), phaseNo, status, metrics })}\n`,
        );
      } catch (err) {
        appendFileSync(
          out,
          `${JSON.stringify({ at: new Date().toISOString(), phaseNo, err: String(err) })}\n`,
        );
      }
    };
    const timer = setInterval(() => void sample(), 3000);
    let incomplete = 0;
    try {
      for (phaseNo = 1; phaseNo <= Number(values.phases); phaseNo++) {
        if (fast) await runPhase(cluster, kc, fast, 'backlog', opts, () => {});
        const r = await runPhase(cluster, kc, gateway, 'backlog', opts, () => {
          if (gateway.child?.exitCode !== null) throw new Error('the gateway exited');
        });
        log(`soak phase ${phaseNo}: ${r.bound}/${opts.pods} bound, complete ${r.complete}`);
        if (!r.complete) incomplete++;
      }
    } finally {
      clearInterval(timer);
    }
    log(`soak: ${incomplete} of ${values.phases} phases incomplete; samples in ${out}`);
  } finally {
    for (const stop of gatewayStop) await stop();
    await cluster.release();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

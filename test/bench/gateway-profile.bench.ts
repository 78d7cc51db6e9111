/**
 * Where the gateway's CPU goes while it schedules, without the rest of the scheduler bench: one gateway
 * (as deployed, every component) over N KWOK nodes, its CPU measured idle for a while, then the live
 * and/or backlog phases (--modes) of the scheduler bench's pods. Prints CPU ms per pod, the idle
 * cost per second and pods/s; with NODELOAD_BENCH_PROFILE=1 the gateway writes a V8 CPU profile into the
 * scratch directory (kept with NODELOAD_BENCH_KEEP=1) when it exits.
 *
 *   NODELOAD_BENCH_PROFILE=1 NODELOAD_BENCH_KEEP=1 npx tsx test/bench/gateway-profile.bench.ts \
 *     [--nodes 1000] [--pods 3000] [--idle 15] [--modes live,backlog] [--workload contract]
 *
 * With NODELOAD_BENCH_ALLOC_PROFILE=1 each phase is also sampled for allocations, garbage included
 * (alloc-profile.ts): the largest sites per pod are printed and the profile kept as alloc-<mode>.heapprofile.
 *
 * A diagnostic, not a comparison: the ratios to kube-scheduler come from scheduler.bench.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { allocationTable, startAllocationSampling } from './alloc-profile.js';
import { procStats, runWhenMain, stopChild } from './lib.js';
import { describeMemory, parseMemoryBreakdown } from './memory-breakdown.js';
import { prepareCluster, SCHEDULER_DEFAULTS, startGateway } from './scheduler.bench.js';
import { type BenchWorkload, type PhaseMode, runPhase } from './scheduler-phase.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1000' },
    pods: { type: 'string', default: '3000' },
    idle: { type: 'string', default: '15' },
    modes: { type: 'string', default: 'live' },
    workload: { type: 'string', default: 'contract' },
  },
});

runWhenMain(import.meta.url, { scheduler: false }, async (cluster) => {
  const opts = {
    ...SCHEDULER_DEFAULTS,
    nodes: Number(values.nodes),
    pods: Number(values.pods),
    workload: values.workload as BenchWorkload,
    phaseTimeoutMs: 900_000,
  };
  const kc = await prepareCluster(cluster, opts);
  const gateway = await startGateway(cluster);
  const rows: string[] = [];
  try {
    const idleSeconds = Number(values.idle);
    const a = procStats(gateway.pid);
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const b = procStats(gateway.pid);
    rows.push(`idle: ${(((b.cpuSeconds - a.cpuSeconds) / idleSeconds) * 1000).toFixed(0)} CPU ms/s`);
    const alive = () => {
      if (gateway.child?.exitCode !== null) throw new Error('the gateway exited');
    };
    for (const mode of values.modes.split(',') as PhaseMode[]) {
      const timeline = sampleQueues(gateway.httpPort, gateway.pid);
      const sampling = gateway.inspectPort ? await startAllocationSampling(gateway.inspectPort) : undefined;
      const r = await runPhase(cluster, kc, gateway, mode, opts, alive).finally(timeline.stop);
      if (sampling) {
        const head = await sampling.stop(path.join(cluster.workDir, `alloc-${mode}.heapprofile`));
        rows.push(`${mode}, garbage included: ${allocationTable(head, r.bound, 30)}`);
      }
      rows.push(
        `${mode} timeline (s: active/backoff/unschedulable queue, binds in flight, CPU %):\n${timeline.lines()}`,
      );
      const cpu = r.after.cpuSeconds - r.before.cpuSeconds;
      const sorted = [...r.latencies].sort((x, y) => x - y);
      const pct = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      rows.push(
        `${mode}: ${r.bound} bound in ${r.wallSeconds.toFixed(1)} s (${(r.bound / r.wallSeconds).toFixed(1)} pods/s; ` +
          `create ${r.createSeconds.toFixed(1)} s, tail ${r.tailSeconds.toFixed(1)} s), ` +
          `${((cpu / r.bound) * 1000).toFixed(2)} CPU ms/pod, p50 ${pct(0.5).toFixed(0)} ms, p99 ${pct(0.99).toFixed(0)} ms, ` +
          `RSS ${(r.after.rssBytes / 2 ** 20).toFixed(0)} MiB`,
      );
      console.error(rows.at(-1));
    }
    // Nodes a cycle has to examine and reject (the node lifecycle controller taints nodes whose KWOK
    // heartbeat lags on a saturated box): they cost filtering without adding a feasible node.
    const taints = new Map<string, number>();
    for (const n of (await kc.makeApiClient(CoreV1Api).listNode()).items)
      for (const t of n.spec?.taints ?? [])
        taints.set(`${t.key}:${t.effect}`, (taints.get(`${t.key}:${t.effect}`) ?? 0) + 1);
    rows.push(
      `tainted nodes after the phases: ${[...taints].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`,
    );
    // Where the resident memory is: V8's spaces (the gateway's own metrics) against the process's mappings.
    const metrics = await fetch(`http://127.0.0.1:${gateway.httpPort}/metrics`).then((r) => r.text());
    const memory = parseMemoryBreakdown(metrics, 'nodeload_');
    if (memory) rows.push(describeMemory(memory));
    // Whether pods waited in the queue (attempts per result; SLI = first attempt → bound, attempt = the cycle).
    rows.push(
      `scheduler: ${[...metrics.matchAll(/^nodeload_scheduler_(schedule_attempts_total\{[^}]*\}|scheduling_attempt_duration_seconds_(?:sum|count)|pod_scheduling_sli_duration_seconds_(?:sum|count))(?:\{[^}]*\})? (\S+)/gm)].map((m) => `${m[1]} ${Number(m[2]).toFixed(m[1]?.endsWith('sum') ? 1 : 0)}`).join(', ')}`,
    );
    const rollup = readFileSync(`/proc/${gateway.pid}/smaps_rollup`, 'utf8');
    rows.push(
      `smaps: ${['Rss', 'Anonymous', 'Shared_Clean', 'Private_Clean'].map((k) => `${k} ${(Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0) / 1024).toFixed(0)}`).join(', ')} MiB`,
    );
    console.error(rows.join('\n'));
  } finally {
    if (gateway.child) await stopChild(gateway.child, 30_000);
  }
  console.error(`scratch: ${cluster.workDir}`);
  return {
    title: 'gateway profile',
    setup: `${opts.nodes} nodes, ${opts.pods} pods`,
    table: rows.join('\n\n'),
    ratios: [],
    notes: [],
  };
});

/**
 * Every 2 s during a phase: the scheduler's queues and binds in flight (its /metrics) and the gateway's
 * CPU share: whether pods wait on the algorithm (active queue long, CPU near 100 %), on the binds (in
 * flight at the limit) or on something else (both low while pods are still unbound).
 */
function sampleQueues(port: number, pid: number): { stop: () => void; lines: () => string } {
  const samples: string[] = [];
  const started = performance.now();
  let last = { at: started, cpu: procStats(pid).cpuSeconds };
  const gauge = (text: string, re: RegExp) => Number(re.exec(text)?.[1] ?? Number.NaN);
  const timer = setInterval(() => {
    void fetch(`http://127.0.0.1:${port}/metrics`)
      .then((r) => r.text())
      .then((text) => {
        const now = { at: performance.now(), cpu: procStats(pid).cpuSeconds };
        const cpu = ((now.cpu - last.cpu) / ((now.at - last.at) / 1000)) * 100;
        last = now;
        const q = (name: string) =>
          gauge(text, new RegExp(`^nodeload_scheduler_pending_pods\\{queue="${name}"\\} (\\S+)`, 'm'));
        samples.push(
          `${((now.at - started) / 1000).toFixed(0)}: ${q('active')}/${q('backoff')}/${q('unschedulable')}, ` +
            `${gauge(text, /^nodeload_scheduler_binds_in_flight (\S+)/m)}, ${cpu.toFixed(0)} %`,
        );
      })
      .catch(() => {});
  }, 2000);
  return { stop: () => clearInterval(timer), lines: () => samples.join('; ') };
}

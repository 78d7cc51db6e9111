// Subscription fan-out at scale: 1,000 subscribers of schedulingEvents, half over SSE and half over
// graphql-ws, while the scheduler places a burst of 5,000 pods; the same burst with no subscriber is the
// anchor.
//
//   npx tsx test/bench/fanout.bench.ts [--nodes 1000] [--pods 5000] [--subscribers 1000] [--warmup-pods 500]
//
// One gateway (`dist/bundle/main.mjs`, every component, the Deployment's V8 flags, anonymous user port on
// loopback) over `nodes` KWOK nodes. Phases, one after another: a small warm-up burst (JIT, caches), the
// anchor burst with nobody subscribed, then the subscribers connect (two child processes of
// fanout-client.ts, one per transport, so their CPU is their own), a one-pod probe whose decision every
// subscriber must receive before the burst (proof that each is listening, not only connected), and the
// measured burst. Every delivery's latency is the client's receive time minus the moment the gateway
// published the decision (same machine clock).
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  type FanoutMeasure,
  type FlushTotals,
  fanoutReport,
  type LoopSample,
  type TransportResult,
} from './fanout-report.js';
import {
  type BenchCluster,
  type BenchReport,
  busyCores,
  fmt,
  log,
  machineCpu,
  type ProcStats,
  procStats,
  REPO_ROOT,
  runWhenMain,
  sleep,
  stopChild,
  summarize,
} from './lib.js';
import { prepareCluster, SCHEDULER_DEFAULTS, startGateway } from './scheduler.bench.js';
import { runPhase, SCHED_NAMESPACE, type SchedulerProcess } from './scheduler-phase.js';

export interface FanoutBenchOptions {
  nodes: number;
  /** Pods of the measured burst (and of the anchor). */
  pods: number;
  /** Half over SSE, half over graphql-ws. */
  subscribers: number;
  /** Pods of the unmeasured first burst. */
  warmupPods: number;
}

export const FANOUT_DEFAULTS: FanoutBenchOptions = {
  nodes: 1000,
  pods: 5000,
  subscribers: 1000,
  warmupPods: 500,
};

const CLIENT_SCRIPT = new URL('./fanout-client.ts', import.meta.url).pathname;
const BURST_PREFIX = 'fo';
const PROBE_PREFIX = 'fp';

type Gateway = SchedulerProcess & { httpPort: number };

// ---------------------------------------------------------------------------------------------------------
// the gateway's figures during a burst

/**
 * The event-loop delay gauges of the gateway's /metrics (prom-client resets its histogram on each read),
 * and its heap in use.
 */
async function readLoopDelay(port: number): Promise<Omit<LoopSample, 'at'>> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  const value = (name: string) => Number(new RegExp(`^nodeload_nodejs_${name} (\\S+)`, 'm').exec(text)?.[1]);
  return {
    p50Ms: value('eventloop_lag_p50_seconds') * 1000,
    p99Ms: value('eventloop_lag_p99_seconds') * 1000,
    maxMs: value('eventloop_lag_max_seconds') * 1000,
    heapUsedBytes: value('heap_size_used_bytes'),
    windowMs: Number(/^nodeload_graphql_push_write_window_seconds (\S+)/m.exec(text)?.[1]) * 1000,
  };
}

/**
 * The write window's totals so far (src/graphql/server.ts's histograms): how many flushes wrote out the
 * subscribers' connections, what they cost, and how many were slower than 50 and 100 ms.
 */
async function readFlushTotals(port: number): Promise<FlushTotals> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  const samples = new Map(
    text
      .split('\n')
      .map((line) => [line.slice(0, line.lastIndexOf(' ')), line.slice(line.lastIndexOf(' ') + 1)]),
  );
  const read = (series: string) => Number(samples.get(`nodeload_graphql_push_${series}`) ?? 0);
  const flushes = read('flush_duration_seconds_count');
  return {
    flushes,
    seconds: read('flush_duration_seconds_sum'),
    connections: read('flush_connections_sum'),
    over50ms: flushes - read('flush_duration_seconds_bucket{le="0.05"}'),
    over100ms: flushes - read('flush_duration_seconds_bucket{le="0.1"}'),
  };
}

/** Reads the delay every second until stopped: each sample covers the second before it. */
function loopSampler(port: number): { stop: () => Promise<LoopSample[]> } {
  const samples: LoopSample[] = [];
  let running = true;
  const loop = (async () => {
    await readLoopDelay(port).catch(() => undefined); // resets the histogram: the first sample covers one second
    while (running) {
      await sleep(1000);
      const s = await readLoopDelay(port).catch(() => undefined);
      if (!s) continue;
      samples.push({ at: Date.now(), ...s });
      if (samples.length % 15 === 0)
        log(
          `fanout: gateway loop delay p99 ${s.p99Ms.toFixed(0)} ms, heap used ${fmt.mib(s.heapUsedBytes)} MiB`,
        );
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return samples;
    },
  };
}

async function schedulerCounters(port: number): Promise<Record<string, number>> {
  const st = (await fetch(`http://127.0.0.1:${port}/scheduler/status`).then((r) => r.json())) as Record<
    string,
    unknown
  >;
  return Object.fromEntries(
    ['bound', 'failed', 'unschedulable', 'conflicts'].map((k) => [k, Number(st[k] ?? 0)]),
  );
}

/** One burst of `pods` pods through the gateway, with its figures up to the last binding (not the deletion). */
async function measuredBurst(
  cluster: BenchCluster,
  kc: KubeConfig,
  gw: Gateway,
  prefix: string,
  pods: number,
): Promise<FanoutMeasure> {
  const counters = await schedulerCounters(gw.httpPort);
  const flushBefore = await readFlushTotals(gw.httpPort);
  const sampler = loopSampler(gw.httpPort);
  const start = { at: Date.now(), stats: procStats(gw.pid), machine: machineCpu() };
  let end = start;
  // runPhase calls alive() every 50 ms while it waits for the bindings: the last call marks their end.
  const alive = () => {
    if (gw.child && (gw.child.exitCode !== null || gw.child.signalCode !== null)) throw gatewayDied(cluster);
    end = { at: Date.now(), stats: procStats(gw.pid), machine: machineCpu() };
  };
  let r: Awaited<ReturnType<typeof runPhase>>;
  let all: LoopSample[];
  try {
    r = await runPhase(cluster, kc, { ...gw, prefix }, 'live', phaseOf(pods), alive);
  } finally {
    all = await sampler.stop();
  }
  const samples = all.filter((s) => s.at - 1000 < end.at);
  const after = await schedulerCounters(gw.httpPort);
  const flushAfter = await readFlushTotals(gw.httpPort);
  const flush = Object.fromEntries(
    Object.entries(flushAfter).map(([k, v]) => [k, v - flushBefore[k as keyof FlushTotals]]),
  ) as unknown as FlushTotals;
  return {
    podsPerSecond: r.complete ? r.bound / r.wallSeconds : Number.NaN,
    bound: r.bound,
    complete: r.complete,
    wallSeconds: (end.at - start.at) / 1000,
    cpuSeconds: end.stats.cpuSeconds - start.stats.cpuSeconds,
    machineBusyCores: busyCores(start.machine, end.machine, availableParallelism()),
    rssBytes: end.stats.rssBytes,
    peakRssBytes: end.stats.peakRssBytes,
    loop: samples,
    flush,
    decisions: Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (counters[k] ?? 0)])),
  };
}

// ---------------------------------------------------------------------------------------------------------
// the subscribers

interface ClientProcess {
  transport: 'sse' | 'ws';
  subscribers: number;
  child: ChildProcess;
  pid: number;
  out: string;
  /** The next stdout line of this type (JSON); rejects after timeoutMs or if the child exits. */
  next(type: string, timeoutMs: number): Promise<Record<string, unknown>>;
  send(line: string): void;
}

function startClients(
  cluster: BenchCluster,
  gw: Gateway,
  transport: 'sse' | 'ws',
  subscribers: number,
  pods: number,
): ClientProcess {
  const out = path.join(cluster.workDir, `fanout-${transport}`);
  const logFile = `${out}.log`;
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, ['--import', 'tsx', CLIENT_SCRIPT], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        FANOUT_PORT: String(gw.httpPort),
        FANOUT_TRANSPORT: transport,
        FANOUT_SUBSCRIBERS: String(subscribers),
        FANOUT_PODS: String(pods),
        FANOUT_PREFIX: `${BURST_PREFIX}-`,
        FANOUT_PROBE: `${PROBE_PREFIX}-`,
        FANOUT_NAMESPACE: SCHED_NAMESPACE,
        FANOUT_OUT: out,
      },
      stdio: ['pipe', 'pipe', fd],
    });
  } finally {
    closeSync(fd);
  }
  if (!child.pid || !child.stdout || !child.stdin)
    throw new Error(`fanout client (${transport}) did not start`);
  const stdin = child.stdin;
  const lines: Record<string, unknown>[] = [];
  let wake: (() => void) | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(JSON.parse(line) as Record<string, unknown>);
    wake?.();
  });
  child.once('exit', () => wake?.());
  return {
    transport,
    subscribers,
    child,
    pid: child.pid,
    out,
    send: (line) => stdin.write(`${line}\n`),
    async next(type, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const at = lines.findIndex((l) => l['type'] === type);
        if (at >= 0) return lines.splice(at, 1)[0] as Record<string, unknown>;
        if (child.exitCode !== null) throw new Error(`fanout client (${transport}) exited (see ${logFile})`);
        if (Date.now() > deadline)
          throw new Error(`fanout client (${transport}): no ${type} in ${timeoutMs} ms`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 250);
        });
      }
    },
  };
}

function readSamples(file: string): Float32Array {
  const buf = readFileSync(file);
  return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
}

// ---------------------------------------------------------------------------------------------------------
// the bench

export async function runFanoutBench(
  cluster: BenchCluster,
  options: Partial<FanoutBenchOptions> = {},
): Promise<BenchReport> {
  const opts = { ...FANOUT_DEFAULTS, ...options };
  const kc = await prepareCluster(cluster, { ...SCHEDULER_DEFAULTS, nodes: opts.nodes });
  const gw = await startGateway(cluster);
  const clients: ClientProcess[] = [];
  try {
    log(`fanout: warm-up burst of ${opts.warmupPods} pods`);
    await runPhase(cluster, kc, { ...gw, prefix: 'fw' }, 'live', phaseOf(opts.warmupPods), () => {});
    log(`fanout: anchor burst of ${opts.pods} pods, no subscribers`);
    const anchor = await measuredBurst(cluster, kc, gw, 'fa', opts.pods);
    const rssIdle = procStats(gw.pid).rssBytes;

    const sse = Math.ceil(opts.subscribers / 2);
    clients.push(startClients(cluster, gw, 'sse', sse, opts.pods));
    clients.push(startClients(cluster, gw, 'ws', opts.subscribers - sse, opts.pods));
    const connected = await Promise.all(clients.map((c) => c.next('connected', 180_000)));
    for (const [i, c] of connected.entries())
      log(
        `fanout: ${clients[i]?.transport}: ${c['ok']} connected, ${c['failed']} failed ${JSON.stringify(c['errors'])}`,
      );
    // A decision every subscriber must receive: proof that each subscription is registered, not only open.
    await runPhase(cluster, kc, { ...gw, prefix: PROBE_PREFIX }, 'live', phaseOf(1), () => {});
    const probed = await Promise.all(
      clients.map((c) =>
        c.next('probe', 60_000).then(
          () => c.subscribers,
          () => Number.NaN,
        ),
      ),
    );
    log(`fanout: probe decision seen by ${probed.join(' + ')} subscribers`);
    const rssSubscribed = procStats(gw.pid).rssBytes;

    for (const c of clients) c.send('start');
    const clientCpu = clients.map((c) => procStats(c.pid).cpuSeconds);
    log(`fanout: burst of ${opts.pods} pods, ${opts.subscribers} subscribers`);
    const burst = await measuredBurst(cluster, kc, gw, BURST_PREFIX, opts.pods);
    for (const c of clients) c.send('drain 5000 300000');
    const done = await Promise.all(clients.map((c) => c.next('done', 330_000)));
    const clientStats: ProcStats[] = clients.map((c) => procStats(c.pid));
    const transports: TransportResult[] = clients.map((c, i) => {
      const d = done[i] as Record<string, unknown>;
      const publish = readSamples(`${c.out}.publish.f32`);
      return {
        transport: c.transport,
        subscribers: c.subscribers,
        connected: Number(connected[i]?.['ok']),
        connectMs: Number(connected[i]?.['ms']),
        probed: probed[i] as number,
        received: Number(d['received']),
        expected: Number(d['expected']),
        publish,
        start: readSamples(`${c.out}.start.f32`),
        summary: summarize(publish),
        clientCpuSeconds: (clientStats[i]?.cpuSeconds ?? 0) - (clientCpu[i] ?? 0),
        clientLoopP99Ms: Number(d['loopDelayP99Ms']),
        clientLoopMaxMs: Number(d['loopDelayMaxMs']),
        done: d,
      };
    });
    for (const t of transports)
      log(
        `fanout: ${t.transport}: ${t.received}/${t.expected} deliveries, p99 ${t.summary.p99.toFixed(1)} ms, ` +
          `client CPU ${t.clientCpuSeconds.toFixed(1)} s ${JSON.stringify(t.done['failures'])}`,
      );
    return fanoutReport({ opts, anchor, burst, transports, rssIdle, rssSubscribed });
  } finally {
    for (const c of clients) {
      c.child.stdin?.end();
      await stopChild(c.child, 5000);
    }
    if (gw.child) await stopChild(gw.child);
  }
}

/** The gateway's end, in its own words (a V8 fatal error goes to its log). */
function gatewayDied(cluster: BenchCluster): Error {
  let last = '';
  try {
    const text = readFileSync(path.join(cluster.workDir, 'gateway.log'), 'utf8');
    last = /^FATAL ERROR.*$/m.exec(text)?.[0] ?? text.trimEnd().split('\n').slice(-1)[0] ?? '';
  } catch {}
  return new Error(`the gateway exited during the burst: ${last.slice(0, 300)}`);
}

// Long enough for the burst with every subscriber: fan-out slows the scheduler down (its figures say how much).
function phaseOf(pods: number) {
  return { pods, concurrency: 16, phaseTimeoutMs: 900_000 };
}

function args(): Partial<FanoutBenchOptions> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string' },
      pods: { type: 'string' },
      subscribers: { type: 'string' },
      'warmup-pods': { type: 'string' },
    },
  });
  const out: Partial<FanoutBenchOptions> = {};
  if (values.nodes) out.nodes = Number(values.nodes);
  if (values.pods) out.pods = Number(values.pods);
  if (values.subscribers) out.subscribers = Number(values.subscribers);
  if (values['warmup-pods']) out.warmupPods = Number(values['warmup-pods']);
  return out;
}

runWhenMain(import.meta.url, { scheduler: false }, (cluster) => runFanoutBench(cluster, args()));

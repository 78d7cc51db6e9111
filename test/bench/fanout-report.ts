// The fan-out bench's report (fanout.bench.ts measures).
import { availableParallelism } from 'node:os';
import { FANOUT_QUERY } from './fanout-parse.js';
import { type BenchReport, fmt, type LatencySummary, markdownTable, percentile, summarize } from './lib.js';

/** The gateway's event-loop delay over the second before `at` (its /metrics gauges). */
export interface LoopSample {
  at: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  heapUsedBytes: number;
  /** The subscribers' write window at `at` (the gateway's gauge), ms. */
  windowMs: number;
}

/** The gateway's flushes of subscriber connections (its write-window histograms), over one burst. */
export interface FlushTotals {
  flushes: number;
  seconds: number;
  /** Connections written to, summed over the flushes. */
  connections: number;
  over50ms: number;
  over100ms: number;
}

/** The gateway during one burst, from its start to the last binding. */
export interface FanoutMeasure {
  podsPerSecond: number;
  bound: number;
  complete: boolean;
  wallSeconds: number;
  cpuSeconds: number;
  /** The whole machine's busy CPU over the burst, in cores (every process: the API server and clients too). */
  machineBusyCores: number;
  rssBytes: number;
  peakRssBytes: number;
  loop: LoopSample[];
  flush: FlushTotals;
  /** The scheduler's counters (bound, failed, unschedulable, conflicts) during the burst. */
  decisions: Record<string, number>;
}

export interface TransportResult {
  transport: 'sse' | 'ws';
  subscribers: number;
  connected: number;
  connectMs: number;
  /** Subscribers that received the probe decision before the burst (NaN: not all of them in 60 s). */
  probed: number;
  received: number;
  expected: number;
  /** Per delivery (first of each subscriber × pod): receive − publication, and receive − cycle start, ms. */
  publish: Float32Array;
  start: Float32Array;
  summary: LatencySummary;
  /** The client process's CPU from the burst's start until every delivery was in. */
  clientCpuSeconds: number;
  clientLoopP99Ms: number;
  clientLoopMaxMs: number;
  done: Record<string, unknown>;
}

interface FanoutRun {
  opts: { nodes: number; pods: number; subscribers: number; warmupPods: number };
  anchor: FanoutMeasure;
  burst: FanoutMeasure;
  transports: TransportResult[];
  /** The gateway's RSS after the anchor burst, and with every subscriber connected (before the burst). */
  rssIdle: number;
  rssSubscribed: number;
}

const LABEL = { sse: 'SSE (one POST per subscriber)', ws: 'graphql-ws (one socket per subscriber)' };

function concat(parts: Float32Array[]): Float32Array {
  const all = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

function loopFigures(m: FanoutMeasure) {
  const p99s = Float64Array.from(m.loop.map((s) => s.p99Ms)).sort();
  return {
    medianP99: percentile(p99s, 50),
    worstP99: p99s.length ? (p99s[p99s.length - 1] as number) : Number.NaN,
    max: Math.max(...m.loop.map((s) => s.maxMs)),
  };
}

const maxHeap = (m: FanoutMeasure) => Math.max(...m.loop.map((s) => s.heapUsedBytes));

/**
 * What the write window makes every delivery wait, from the gateway's own metrics over the burst: a
 * message waits for the window to end, then for its connection's turn in the flush.
 */
function flushFigures(m: FanoutMeasure) {
  const { flushes, seconds, connections, over50ms, over100ms } = m.flush;
  const windows = m.loop.map((s) => s.windowMs).filter(Number.isFinite);
  const meanFlushMs = (seconds / flushes) * 1000;
  const windowMs = windows.length ? windows.reduce((a, b) => a + b, 0) / windows.length : Number.NaN;
  return {
    flushes,
    connectionsPerFlush: connections / flushes,
    meanFlushMs,
    usPerConnection: (seconds / connections) * 1e6,
    over50ms,
    over100ms,
    flushShare: seconds / m.wallSeconds,
    windowMs,
    /** Window + flush at their means: what a delivery waits before any event-loop delay. */
    floorMs: windowMs + meanFlushMs,
  };
}

export function fanoutReport(run: FanoutRun): BenchReport {
  const { opts, anchor, burst, transports } = run;
  const allPublish = summarize(concat(transports.map((t) => t.publish)));
  const allStart = summarize(concat(transports.map((t) => t.start)));
  const received = transports.reduce((n, t) => n + t.received, 0);
  const expected = transports.reduce((n, t) => n + t.expected, 0);
  const clientCpu = transports.reduce((n, t) => n + t.clientCpuSeconds, 0);
  const deliveryRow = (
    name: string,
    t: { subscribers: number; connected: string; received: number; expected: number },
    pub: LatencySummary,
    start: LatencySummary,
    cpu: number,
    clientLoop: string,
  ) => [
    name,
    `${fmt.int(t.subscribers)} / ${t.connected}`,
    `${fmt.int(t.received)} / ${fmt.int(t.expected)}`,
    fmt.int(t.expected - t.received),
    `${fmt.ms(pub.p50)} / ${fmt.ms(pub.p99)} / ${fmt.ms(pub.max)}`,
    `${fmt.ms(start.p50)} / ${fmt.ms(start.p99)} / ${fmt.ms(start.max)}`,
    `${cpu.toFixed(1)} (${(cpu / burst.wallSeconds).toFixed(2)})`,
    clientLoop,
  ];
  const deliveryTable = markdownTable(
    [
      'transport',
      'subscribers / connected and probed',
      'deliveries received / expected',
      'lost',
      'published → client p50 / p99 / max ms',
      'cycle start → client p50 / p99 / max ms',
      'client CPU-s (cores)',
      'client loop delay p99 / max ms',
    ],
    [
      ...transports.map((t) =>
        deliveryRow(
          LABEL[t.transport],
          {
            subscribers: t.subscribers,
            connected: `${fmt.int(t.connected)} and ${fmt.int(t.probed)}`,
            received: t.received,
            expected: t.expected,
          },
          t.summary,
          summarize(t.start),
          t.clientCpuSeconds,
          `${fmt.ms(t.clientLoopP99Ms)} / ${fmt.ms(t.clientLoopMaxMs)}`,
        ),
      ),
      deliveryRow(
        '**all**',
        {
          subscribers: opts.subscribers,
          connected: '',
          received,
          expected,
        },
        allPublish,
        allStart,
        clientCpu,
        '',
      ),
    ],
  );
  const la = loopFigures(anchor);
  const lb = loopFigures(burst);
  const f = flushFigures(burst);
  const gatewayRow = (name: string, m: FanoutMeasure, l: ReturnType<typeof loopFigures>) => [
    name,
    `${fmt.int(m.bound)}${m.complete ? '' : ' (incomplete)'}`,
    fmt.int(m.podsPerSecond),
    `${m.cpuSeconds.toFixed(1)} (${(m.cpuSeconds / m.wallSeconds).toFixed(2)})`,
    m.machineBusyCores.toFixed(2),
    `${fmt.ms(l.medianP99)} / ${fmt.ms(l.worstP99)}`,
    fmt.ms(l.max),
    fmt.mib(m.rssBytes),
  ];
  const gatewayTable = markdownTable(
    [
      `burst of ${fmt.int(opts.pods)} pods`,
      'bound',
      'pods/s',
      'gateway CPU-s (cores)',
      `machine CPU busy, cores of ${availableParallelism()}`,
      'event-loop delay p99 per second: median / worst ms',
      'delay max ms',
      'gateway RSS after MiB',
    ],
    [
      gatewayRow('no subscribers (anchor)', anchor, la),
      gatewayRow(`${fmt.int(opts.subscribers)} subscribers`, burst, lb),
      [
        '**with ÷ without**',
        '',
        fmt.ratio(burst.podsPerSecond / anchor.podsPerSecond),
        fmt.ratio(burst.cpuSeconds / burst.wallSeconds / (anchor.cpuSeconds / anchor.wallSeconds)),
        fmt.ratio(burst.machineBusyCores / anchor.machineBusyCores),
        `${fmt.ratio(lb.medianP99 / la.medianP99)} / ${fmt.ratio(lb.worstP99 / la.worstP99)}`,
        fmt.ratio(lb.max / la.max),
        fmt.ratio(burst.rssBytes / anchor.rssBytes),
      ],
    ],
  );
  const failures = transports.flatMap((t) => (t.done['failures'] as string[] | undefined) ?? []);
  const odd = transports
    .map(
      (t) =>
        `${t.transport}: ${fmt.int(Number(t.done['repeated']))} repeated, ${fmt.int(Number(t.done['notScheduled']))} not SCHEDULED, ` +
        `${fmt.int(Number(t.done['unreadable']))} unreadable, ${fmt.int(Number(t.done['ended']))} streams ended early`,
    )
    .join('; ');
  const counters = (m: FanoutMeasure) =>
    Object.entries(m.decisions)
      .map(([k, v]) => `${k} ${fmt.int(v)}`)
      .join(', ');
  return {
    title: `Subscription fan-out: ${fmt.int(opts.subscribers)} subscribers during a ${fmt.int(opts.pods)}-pod burst`,
    setup:
      `One gateway (every component, as deployed, log level info) over ${fmt.int(opts.nodes)} KWOK nodes, its user port ` +
      `anonymous on loopback (--anonymous-user-port). ${fmt.int(opts.subscribers)} subscribers of \`${FANOUT_QUERY}\` ` +
      `(the bench namespace), half over SSE (a streaming POST each, read with node:http) and half over graphql-ws ` +
      `(the \`graphql-ws\` client on \`ws\`, a socket each), run by two child processes of the bench on the same ` +
      `2 cores. All subscriptions are identical, as a wall of dashboards would be, so they share one execution ` +
      `(src/graphql/shared-subscriptions.ts), whose results go straight to each subscriber's connection, written once per window of 20–100 ms (src/server/write-coalescer.ts). Each subscriber must ` +
      `receive a probe pod's decision before the burst. Bursts: ${fmt.int(opts.pods)} pods created live with 16 ` +
      `creates in flight as in the scheduler bench (small requests: all fit), first with no subscriber ` +
      `(the anchor), then with all of them, after an unmeasured ${fmt.int(opts.warmupPods)}-pod warm-up. ` +
      (opts.nodes === 1000
        ? 'Nodes: 1,000, the size the views bench leaves on the shared cluster.'
        : `Nodes: ${fmt.int(opts.nodes)}.`),
    table: `${deliveryTable}\n\n${gatewayTable}`,
    ratios: [
      {
        metric: `subscription fan-out p99 decision → client (${fmt.int(opts.subscribers)} subscribers, ${fmt.int(opts.pods)}-pod burst)`,
        anchor: 'the 100 ms target',
        value: allPublish.p99 / 100,
        note: `lower is better; target < 1.00× (${fmt.ms(allPublish.p99)} ms; ${fmt.int(expected - received)} of ${fmt.int(expected)} deliveries lost; write window + flush alone ${fmt.ms(f.floorMs)} ms at their means)`,
      },
      {
        metric: `scheduler pods/s with ${fmt.int(opts.subscribers)} subscribers`,
        anchor: 'the same burst without subscribers',
        value: burst.podsPerSecond / anchor.podsPerSecond,
      },
      {
        metric: `gateway event-loop delay p99 (median second) with ${fmt.int(opts.subscribers)} subscribers`,
        anchor: 'the same burst without subscribers',
        value: lb.medianP99 / la.medianP99,
        note: `lower is better (${fmt.ms(lb.medianP99)} ms vs ${fmt.ms(la.medianP99)} ms)`,
      },
    ],
    notes: [
      '"Published → client": the client\'s receive time (Date.now(), ms) minus the moment the gateway published the decision, which is its `time` (when its scheduling cycle started, ms precision) plus its `latencyMs` (the whole attempt: algorithm and bind). That is the fan-out alone. "Cycle start → client" adds the attempt itself: for a scheduled pod the bind call to the API server, which waits its turn under the bind QPS and on the busy API server, so it is not a figure of the subscription path. Same machine clock, ±1 ms.',
      `Lost = expected − received, where expected is every subscriber × every pod of the burst (each pod is bound once, so each has one SCHEDULED decision). Other deliveries: ${odd}. ` +
        `The scheduler's counters during the burst: ${counters(burst)} (anchor: ${counters(anchor)}).` +
        (failures.length ? ` Subscriber failures: ${failures.slice(0, 5).join('; ')}.` : ''),
      `Connecting: SSE ${fmt.int(transports.find((t) => t.transport === 'sse')?.connectMs ?? Number.NaN)} ms, graphql-ws ${fmt.int(transports.find((t) => t.transport === 'ws')?.connectMs ?? Number.NaN)} ms for all (50 handshakes at a time; SSE ones pass the user port's gate one by one). ` +
        `Gateway RSS: ${fmt.mib(run.rssIdle)} MiB after the anchor burst, ${fmt.mib(run.rssSubscribed)} MiB with every subscriber connected, ${fmt.mib(burst.rssBytes)} MiB after the burst (peak ${fmt.mib(burst.peakRssBytes)}); heap in use, largest per-second reading: ${fmt.mib(maxHeap(burst))} MiB during the burst, ${fmt.mib(maxHeap(anchor))} MiB during the anchor.`,
      `The event-loop delay is the gateway's own (prom-client's monitorEventLoopDelay gauges in /metrics, read every second; each read resets them), over the burst's ${burst.loop.length} seconds with subscribers and ${anchor.loop.length} without; the reads pass the user port's gate like any request. ` +
        `Client CPU is what the two subscriber processes used from the burst's start until every delivery was in (${clientCpu.toFixed(1)} CPU-s, ${(clientCpu / burst.wallSeconds).toFixed(2)} cores over the burst): on 2 cores it is taken from the gateway and the API server, so the pods/s ratio carries it too; the clients' own loop delay says whether they read late.`,
      `What bounds the latency (the gateway's write-window metrics over the burst with subscribers): ${fmt.int(f.flushes)} flushes wrote out ${fmt.int(f.connectionsPerFlush)} connections each on average, ` +
        `${fmt.ms(f.meanFlushMs)} ms per flush (${fmt.int(f.usPerConnection)} µs per connection: a write of what it gathered and one system call), ` +
        `${fmt.int(f.over50ms)} of them over 50 ms and ${fmt.int(f.over100ms)} over 100 ms; flushing took ${(100 * f.flushShare).toFixed(0)} % of the burst's wall time. ` +
        `The window averaged ${fmt.ms(f.windowMs)} ms (it widens from 20 to 100 ms until a flush costs at most a quarter of the time). ` +
        `A delivery waits up to one window, then for its connection's turn in the flush: ${fmt.ms(f.floorMs)} ms at their means, before any event-loop delay. ` +
        'A p99 under 100 ms needs a shorter window and a cheaper flush at once; with one connection per subscriber, each flush costs a system call per connection, on the loop the scheduler shares.',
      `Machine CPU busy: the whole machine's busy time over the burst (/proc/stat), every process counted — the API server, etcd, KWOK, the pod creator, the subscribers and the gateway. Near ${availableParallelism()} cores, each of them waited for a core, and that wait is in the gateway's event-loop delay and so in every delivery's latency.`,
    ],
  };
}

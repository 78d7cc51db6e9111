// The scheduler bench's tables and ratios: live and backlog phases of kube-scheduler (stock and QPS 500),
// nodeload and the bare binder (the ceiling), pooled over rounds by scheduler-phase.ts's combine().
import { histogramQuantile } from './histogram.js';
import { type BenchReport, fmt, markdownTable, type ProcStats } from './lib.js';
import { describeMemory } from './memory-breakdown.js';
import { type Combined, CPU, MEMORY, type SchedulerBenchOptions } from './scheduler-phase.js';

export interface LiveResults {
  stock?: Combined | undefined;
  fast: Combined;
  nodeload: Combined;
  bare?: Combined | undefined;
}
export type BacklogResults = Omit<LiveResults, 'stock'>;

const rate = (r: Combined) => r.bound / r.wallSeconds;
const perCpu = (r: Combined) => r.bound / r.cpuSeconds;
const label = (r: Combined, opts: SchedulerBenchOptions) =>
  r.scheduler.label +
  (r.rounds > 1 ? ` (${r.rounds} rounds)` : '') +
  (r.complete ? '' : ` — **incomplete: ${r.bound}/${r.rounds * opts.pods} bound**`);
const present = (rs: (Combined | undefined)[]) => rs.filter((r): r is Combined => r !== undefined);

function liveTable(opts: SchedulerBenchOptions, live: LiveResults, idle: Map<number, ProcStats>): string {
  const rows = present([live.stock, live.fast, live.nodeload, live.bare]).map((r) => [
    label(r, opts),
    fmt.int(rate(r)),
    fmt.ms(r.latencyMs.p50),
    fmt.ms(r.latencyMs.p99),
    `${r.createSeconds.toFixed(1)} / ${r.tailSeconds.toFixed(1)}`,
    fmt.int(perCpu(r)),
    `${fmt.mib(idle.get(r.scheduler.pid)?.rssBytes ?? Number.NaN)} / ${fmt.mib(r.rssBytes)} / ${fmt.mib(r.peakRssBytes)}`,
    `${r.overcommitted.length}`,
  ]);
  const { nodeload } = live;
  const ratioRow = (anchor: Combined, name: string) => [
    `**nodeload ÷ ${name}**`,
    fmt.ratio(rate(nodeload) / rate(anchor)),
    fmt.ratio(nodeload.latencyMs.p50 / anchor.latencyMs.p50),
    fmt.ratio(nodeload.latencyMs.p99 / anchor.latencyMs.p99),
    '',
    fmt.ratio(perCpu(nodeload) / perCpu(anchor)),
    fmt.ratio(nodeload.rssBytes / anchor.rssBytes),
    '',
  ];
  return markdownTable(
    [
      'live: scheduler',
      'pods/s (first create → last bound)',
      'create→bound p50 ms',
      'p99 ms',
      'create s / tail s',
      'pods per scheduler CPU-second',
      'RSS MiB idle / after / peak',
      'over-committed nodes',
    ],
    [
      ...rows,
      ...(live.stock ? [ratioRow(live.stock, 'stock kube-scheduler')] : []),
      ratioRow(live.fast, 'kube-scheduler QPS 500'),
    ],
  );
}

function backlogTable(opts: SchedulerBenchOptions, backlog: BacklogResults): string {
  const rows = present([backlog.fast, backlog.nodeload, backlog.bare]).map((r) => [
    label(r, opts),
    fmt.int(rate(r)),
    r.firstBoundSeconds.toFixed(2),
    fmt.int(r.drainRate),
    fmt.ms(r.latencyMs.p99),
    fmt.int(perCpu(r)),
    `${r.overcommitted.length}`,
  ]);
  const { fast, nodeload } = backlog;
  return markdownTable(
    [
      'backlog: scheduler',
      'pods/s (resume → last bound)',
      'resume → first bound s',
      'pods/s (first → last bound)',
      'resume→bound p99 ms',
      'pods per scheduler CPU-second',
      'over-committed nodes',
    ],
    [
      ...rows,
      [
        '**nodeload ÷ kube-scheduler QPS 500**',
        fmt.ratio(rate(nodeload) / rate(fast)),
        fmt.ratio(nodeload.firstBoundSeconds / fast.firstBoundSeconds),
        fmt.ratio(nodeload.drainRate / fast.drainRate),
        fmt.ratio(nodeload.latencyMs.p99 / fast.latencyMs.p99),
        fmt.ratio(perCpu(nodeload) / perCpu(fast)),
        '',
      ],
    ],
  );
}

/** Milliseconds at quantile q of a phase's algorithm histogram (NaN when the scheduler has none). */
const algorithmMs = (r: Combined | undefined, q: number) =>
  r?.algorithm ? histogramQuantile(q, r.algorithm) * 1000 : Number.NaN;
const algorithmCpuMs = (r: Combined | undefined, q: number) =>
  r?.algorithmCpu ? histogramQuantile(q, r.algorithmCpu) * 1000 : Number.NaN;

/**
 * The algorithm alone (filter, score, the choice; no queue wait, no bind), as each scheduler times it in
 * its own scheduling_algorithm_duration_seconds, live and backlog.
 */
function algorithmTable(live: LiveResults, backlog: BacklogResults): string | undefined {
  if (!live.nodeload.algorithm || !live.fast.algorithm) return undefined;
  const row = (name: string, l: Combined, b: Combined) => [
    name,
    fmt.ms(algorithmMs(l, 0.5)),
    fmt.ms(algorithmMs(l, 0.99)),
    fmt.ms(algorithmMs(b, 0.5)),
    fmt.ms(algorithmMs(b, 0.99)),
  ];
  const r = (a: number, b: number) => fmt.ratio(a / b);
  return markdownTable(
    ['algorithm alone, ms', 'live p50', 'live p99', 'backlog p50', 'backlog p99'],
    [
      row('kube-scheduler QPS 500', live.fast, backlog.fast),
      row('nodeload', live.nodeload, backlog.nodeload),
      ...(live.nodeload.algorithmCpu && backlog.nodeload.algorithmCpu
        ? [
            [
              'nodeload, on a CPU (less waiting for a core)',
              fmt.ms(algorithmCpuMs(live.nodeload, 0.5)),
              fmt.ms(algorithmCpuMs(live.nodeload, 0.99)),
              fmt.ms(algorithmCpuMs(backlog.nodeload, 0.5)),
              fmt.ms(algorithmCpuMs(backlog.nodeload, 0.99)),
            ],
          ]
        : []),
      [
        '**nodeload ÷ kube-scheduler QPS 500**',
        r(algorithmMs(live.nodeload, 0.5), algorithmMs(live.fast, 0.5)),
        r(algorithmMs(live.nodeload, 0.99), algorithmMs(live.fast, 0.99)),
        r(algorithmMs(backlog.nodeload, 0.5), algorithmMs(backlog.fast, 0.5)),
        r(algorithmMs(backlog.nodeload, 0.99), algorithmMs(backlog.fast, 0.99)),
      ],
    ],
  );
}

/**
 * What bounds nodeload's algorithm p99: its time on a CPU beside the wall time (the gap is time the OS ran
 * other processes on the cores mid-cycle), and the gateway's GC pauses during each phase.
 */
function algorithmBoundNote(live: Combined, backlog: Combined): string | undefined {
  if (!live.algorithmCpu || !live.gc || !backlog.gc) return undefined;
  const pauses = (r: Combined) =>
    [...(r.gc ?? new Map())]
      .filter(([, v]) => v.count > 0)
      .map(([kind, v]) => `${fmt.int(v.count)} ${kind} (mean ${fmt.ms((v.sum / v.count) * 1000)} ms)`)
      .join(', ') || 'none';
  return (
    "What bounds nodeload's algorithm tail: its wall time against its time on a CPU " +
    "(nodeload_scheduler_scheduling_algorithm_cpu_seconds: the same code's wall time less the time the " +
    "scheduler thread waited for a core meanwhile, Linux's schedstat run_delay), p99 " +
    `${fmt.ms(algorithmMs(live, 0.99))} vs ${fmt.ms(algorithmCpuMs(live, 0.99))} ms live, ` +
    `${fmt.ms(algorithmMs(backlog, 0.99))} vs ${fmt.ms(algorithmCpuMs(backlog, 0.99))} ms backlog. ` +
    "Time on a CPU includes the garbage collections that paused a cycle; the gateway's GC pauses " +
    `(nodeload_nodejs_gc_duration_seconds, by kind): live ${pauses(live)}; backlog ${pauses(backlog)}.`
  );
}

/** nodeload's and kube-scheduler's rates as a fraction of the bare binder's, live and backlog. */
function ceilingTable(live: LiveResults, backlog: BacklogResults): string | undefined {
  if (!live.bare || !backlog.bare) return undefined;
  const { bare: liveBare } = live;
  const { bare: drainBare } = backlog;
  const row = (name: string, l: Combined, b: Combined) => [
    name,
    fmt.ratio(rate(l) / rate(liveBare)),
    fmt.ratio(b.drainRate / drainBare.drainRate),
  ];
  return markdownTable(
    ['fraction of the ceiling (bare binder)', 'live pods/s', 'backlog pods/s (first → last bound)'],
    [
      row('nodeload', live.nodeload, backlog.nodeload),
      row('kube-scheduler QPS 500', live.fast, backlog.fast),
    ],
  );
}

export function schedulerReport(
  opts: SchedulerBenchOptions,
  live: LiveResults,
  backlog: BacklogResults,
  idle: Map<number, ProcStats>,
  gatewayStatus: Record<string, unknown>,
): BenchReport {
  const { fast, nodeload } = live;
  const name = (r: Combined) =>
    ({ nl: 'nodeload', ks: 'stock', bb: 'bare binder' })[r.scheduler.prefix] ?? 'QPS 500';
  const phases = present([
    live.stock,
    live.fast,
    live.nodeload,
    live.bare,
    backlog.fast,
    backlog.nodeload,
    backlog.bare,
  ]);
  const spread = phases
    .map(
      (r) =>
        `${name(r)} ${r.mode}: ${r.nodesUsed} nodes used, ≤ ${r.maxPodsOnNode} pods and ` +
        `≤ ${r.maxCpuPercent.toFixed(0)} % CPU requested per node`,
    )
    .join('; ');
  const overcommitted = phases
    .filter((r) => r.scheduler.prefix !== 'bb')
    .flatMap((r) => r.overcommitted.map((o) => `${name(r)}: ${o}`));
  const ceiling = ceilingTable(live, backlog);
  const workload =
    opts.workload === 'contract'
      ? 'one pod in ten has required pod anti-affinity (hostname, groups of ten) and one in ten a zone spread constraint (maxSkew 1, DoNotSchedule), the rest requests only; '
      : opts.workload && opts.workload !== 'mixed'
        ? `workload ${opts.workload}; `
        : '';
  const stockNote = live.stock
    ? 'the stock one a single live round'
    : 'the stock kube-scheduler (client QPS 50) is left out at this size: its client limit, not its algorithm, would set the pace';
  return {
    title: `Scheduler at ${fmt.int(opts.nodes)} nodes / ${fmt.int(opts.pods)} pods: nodeload vs kube-scheduler`,
    setup:
      `${fmt.int(opts.pods)} pods per phase on ${fmt.int(opts.nodes)} KWOK nodes (8 CPU / 32 GiB / 110 pods each), ` +
      `created by one keep-alive HTTPS client with ${opts.concurrency} creates in flight; requests cycle through ` +
      `${CPU.join('/')} CPU and ${MEMORY.join('/')} memory; ${workload}same API server, ` +
      'same nodes, phases one after another (pods deleted in between); every scheduler watches throughout. ' +
      `The two QPS-500 schedulers run ${opts.rounds} round(s) per mode in alternating order, ${stockNote}; ` +
      'figures pool the rounds (latency percentiles over all their pods). ' +
      '**Live**: the scheduler runs while the pods are created. **Backlog**: the scheduler process is ' +
      'stopped (SIGSTOP) while all pods are created and resumed (SIGCONT) once they exist: its drain rate.' +
      (ceiling
        ? ' **Ceiling**: a bare binder that decides nothing binds the same pods to precomputed nodes under the same client limits.'
        : ''),
    table: [liveTable(opts, live, idle), backlogTable(opts, backlog), ceiling, algorithmTable(live, backlog)]
      .filter(Boolean)
      .join('\n\n'),
    ratios: [
      ...(live.stock
        ? [
            {
              metric: 'scheduler pods/s, live',
              value: rate(nodeload) / rate(live.stock),
              anchor: 'stock kube-scheduler',
            },
          ]
        : []),
      {
        metric: 'scheduler pods/s, live',
        value: rate(nodeload) / rate(fast),
        anchor: 'kube-scheduler QPS 500',
      },
      {
        metric: 'scheduler pods/s, backlog drain',
        value: rate(backlog.nodeload) / rate(backlog.fast),
        anchor: 'kube-scheduler QPS 500',
      },
      {
        metric: 'scheduler pods/s first → last bound, backlog',
        value: backlog.nodeload.drainRate / backlog.fast.drainRate,
        anchor: 'kube-scheduler QPS 500',
      },
      {
        metric: 'scheduler p99 create→bound, live',
        value: nodeload.latencyMs.p99 / fast.latencyMs.p99,
        anchor: 'kube-scheduler QPS 500',
        note: 'lower is better',
      },
      {
        metric: 'scheduler pods per CPU-second, live',
        value: perCpu(nodeload) / perCpu(fast),
        anchor: 'kube-scheduler QPS 500',
      },
      {
        metric: 'scheduler pods per CPU-second, backlog',
        value: perCpu(backlog.nodeload) / perCpu(backlog.fast),
        anchor: 'kube-scheduler QPS 500',
      },
      ...(live.nodeload.algorithm && live.fast.algorithm
        ? [
            {
              metric: 'scheduler algorithm p99, live',
              value: algorithmMs(nodeload, 0.99) / algorithmMs(fast, 0.99),
              anchor: 'kube-scheduler QPS 500',
              note: `lower is better; ${fmt.ms(algorithmMs(nodeload, 0.99))} ms vs ${fmt.ms(algorithmMs(fast, 0.99))} ms (target < 5 ms at 1,000 nodes)`,
            },
          ]
        : []),
      {
        metric: 'scheduler RSS after its live phase',
        value: nodeload.rssBytes / fast.rssBytes,
        anchor: 'kube-scheduler QPS 500',
        note: 'lower is better',
      },
      ...(live.bare && backlog.bare
        ? [
            {
              metric: 'scheduler pods/s, live',
              value: rate(nodeload) / rate(live.bare),
              anchor: 'bare binder (ceiling)',
            },
            {
              metric: 'scheduler pods/s first → last bound, backlog',
              value: backlog.nodeload.drainRate / backlog.bare.drainRate,
              anchor: 'bare binder (ceiling)',
            },
          ]
        : []),
    ].map((r) => ({ ...r, metric: `${r.metric} (${fmt.int(opts.nodes)} nodes)` })),
    notes: [
      '"create s / tail s": seconds from the first create call until the last create was answered, then ' +
        'until the last pod was bound. A tail near zero means the scheduler kept up with the creator, whose ' +
        'pace then bounds pods/s; on 2 cores a scheduler that burns more CPU also slows the API server and so ' +
        'the creator (compare the create seconds).',
      'Backlog: "resume → first bound" is how soon the first binding shows after SIGCONT; "first → last ' +
        'bound" is the drain rate once binding runs; resume→bound percentiles are dominated by the queue ' +
        `length (${fmt.int(opts.pods)} pods waiting at once).`,
      `Over-commit check after each phase: per node, pods ≤ allocatable pods and the sum of CPU and memory ` +
        `requests ≤ allocatable, and no two pods of an anti-affinity group on one node — ${overcommitted.length ? `**violated**: ${overcommitted.join('; ')}` : 'held on every node in every phase of the schedulers'} ` +
        `(the bare binder checks nothing). Placement: ${spread}.`,
      "Algorithm alone: each scheduler's own histogram of one attempt's filter, score and choice of a node " +
        "(no queue wait, no bind): kube-scheduler's scheduler_scheduling_algorithm_duration_seconds (buckets from " +
        "1 ms) and nodeload's nodeload_scheduler_scheduling_algorithm_duration_seconds (from 0.1 ms), read before " +
        "and after each phase; quantiles interpolated within a bucket as PromQL's histogram_quantile does, so a " +
        'figure under 1 ms for kube-scheduler only says its attempts fell in the first bucket.',
      ...[algorithmBoundNote(nodeload, backlog.nodeload)].filter((n): n is string => n !== undefined),
      `nodeload writes its Events off the hot path: at its last binding, Events were still queued; the bench ` +
        `waits until its queue is empty before the next phase (longest wait: live ${fmt.ms((nodeload.eventTailSeconds ?? 0) * 1000)} ms, ` +
        `backlog ${fmt.ms((backlog.nodeload.eventTailSeconds ?? 0) * 1000)} ms), so those writes do not load the API server under ` +
        "another scheduler's timing, and counts the CPU they cost in its pods per CPU-second. kube-scheduler " +
        "writes each Event as it goes, on a goroutine of its own within its client's QPS (client-go's events " +
        'broadcaster); its pods/s include that work.' +
        (nodeload.scheduledEventBytes && fast.scheduledEventBytes
          ? ` One Scheduled Event, median of 20 sampled per phase as JSON from the core API: nodeload ` +
            `${fmt.int(nodeload.scheduledEventBytes)} B (its decision rides in an annotation), kube-scheduler ` +
            `${fmt.int(fast.scheduledEventBytes)} B.`
          : ''),
      ...(nodeload.memory
        ? [
            `nodeload's memory right after its live phase (its /metrics: prom-client's process and V8 heap ` +
              `gauges): ${describeMemory(nodeload.memory)}. The new space is V8's young generation, which a ` +
              "burst grows up to the Deployment's --max-semi-space-size per semi-space; the " +
              "gateway returns it after the loop has been quiet (--idle-memory-reclaim-seconds). kube-scheduler's " +
              'RSS is a Go heap of its informer caches and the scheduler cache.',
          ]
        : []),
      `nodeload's own counters after its phases: bound ${String(gatewayStatus['bound'])}, failed ` +
        `${String(gatewayStatus['failed'])}, conflicts ${String(gatewayStatus['conflicts'])}, unschedulable ` +
        `${String(gatewayStatus['unschedulable'])}. ${describeWrites(gatewayStatus)}`,
      'The gateway is `dist/bundle/main.mjs` (compiled by `npm run build`, bundled by `npm run build:bundle`, ' +
        'run by plain node as the image runs it) with ' +
        "every component (operator, scheduler, webhook, aggregated API, GraphQL), the Deployment's V8 flags and its " +
        `cache of ${fmt.int(opts.nodes)} nodes and all pods, logging at info to a file; ` +
        'kube-scheduler is a Go binary with its own informers.',
    ],
  };
}

/**
 * What the gateway's writes met: failed binds by error (each requeued and bound later, so a failure is a
 * delay, not a lost pod), requests sent again at the API server's word, and Events dropped.
 */
function describeWrites(status: Record<string, unknown>): string {
  const failed = Object.entries((status['failedBinds'] as Record<string, number> | undefined) ?? {})
    .sort((a, b) => b[1] - a[1])
    .map(([err, n]) => `${fmt.int(n)} × "${err}"`);
  return (
    `Failed binds by error, from its log (each requeued and bound later): ${failed.length ? failed.join(', ') : 'none'}. ` +
    `Bindings and Events sent again after a 429 or a 5xx with Retry-After: ${fmt.int(Number(status['requestRetries'] ?? 0))}. ` +
    `Events dropped (best effort; its Event queue holds 5,000, written 4 at a time, up to 16 while they pile up): ${fmt.int(Number(status['eventsDropped'] ?? 0))}.`
  );
}

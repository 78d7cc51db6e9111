// The views at scale, and whether the user port can starve the kube port.
//
//   npm run bench                                    (with the others; writes RESULTS.md)
//   npx tsx test/bench/views.bench.ts [--nodes 1000] [--seconds 15] [--graphql-connections 50] [--pods 500]
//                                      [--settings 3]   (the first N gate settings, the shipped one first)
//
// One gateway (every component, as deployed) over `nodes` KWOK nodes. Views: GraphQL `nodes` against the
// plain JSON route serving the same data (/api/node-load), each by 50 closed-loop connections. Isolation:
// the webhook's latency (4 connections, the 5 KB pod review of the webhook bench) alone and while 50
// connections flood GraphQL, and the scheduler's live rate alone and during the flood — once with the
// user-port gate as shipped (--user-port-concurrency=1) and once with it off (0), which is how the gateway
// ran before the gate existed.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { LOOP_SHARE_DEFAULTS } from '../../src/server/loop-share.js';
import { freePorts } from '../cluster/controlplane.js';
import {
  ClosedLoopProcess,
  closedLoop,
  type LoopRequest,
  type LoopResult,
  okCount,
  pooled,
} from './closed-loop.js';
import {
  type BenchCluster,
  type BenchReport,
  busyCores,
  fmt,
  log,
  machineCpu,
  markdownTable,
  procStats,
  runWhenMain,
  sleep,
  stopChild,
  summarize,
} from './lib.js';
import { prepareCluster, SCHEDULER_DEFAULTS, startGateway } from './scheduler.bench.js';
import { runPhase } from './scheduler-phase.js';
import { prepareWebhookRules } from './webhook.bench.js';
import { podReviewTemplate, UID_MARK, WEBHOOK_NAMESPACE } from './webhook-workload.js';

export interface ViewsBenchOptions {
  nodes: number;
  /** Length of each measured phase. */
  seconds: number;
  graphqlConnections: number;
  webhookConnections: number;
  /** Pods the scheduler places in each of its phases. */
  pods: number;
  /** How many of the gate settings to run, from the shipped one (a quicker run while iterating). */
  settings: number;
}

export const VIEWS_DEFAULTS: ViewsBenchOptions = {
  nodes: 1000,
  seconds: 15,
  graphqlConnections: 50,
  webhookConnections: 4,
  pods: 500,
  settings: 3,
};

/**
 * The webhook alone and under the flood alternate in this many rounds (alone first, then flooded first, …)
 * and each side's rounds are pooled. The webhook's tail is GC pauses, and those move with what the seconds
 * before left behind (the views phase's garbage, an old-generation collection due): measured as one phase
 * after the other, all of that drift fell on one side of the ratio — p99 alone 4.05 ms in one full run,
 * 14.0 ms in a run of this bench an hour later, with the flooded p99 at 22.8 and 18.4 ms.
 */
const ISOLATION_ROUNDS = 4;

const NODES_QUERY = '{ nodes { name podCount load { cpuPercent memoryPercent source stale } } }';

const graphqlNodes: LoopRequest = {
  method: 'POST',
  path: '/graphql',
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: () => JSON.stringify({ query: NODES_QUERY }),
};
const nodeLoadRoute: LoopRequest = { method: 'GET', path: '/api/node-load' };

function webhookRequest(): LoopRequest {
  const [pre, post] = podReviewTemplate(WEBHOOK_NAMESPACE).split(UID_MARK) as [string, string];
  const run = randomUUID().slice(0, 23);
  return {
    method: 'POST',
    path: '/mutate',
    headers: { 'content-type': 'application/json' },
    body: (i) => `${pre}${run}-${String(i).padStart(12, '0')}${post}`,
  };
}

interface Phase {
  loop: LoopResult;
  cpuSeconds: number;
  /** Cores the flood's reader (a child process) and the whole machine used over the phase. */
  clientCores: number;
  machineCores: number;
}

function describeLoop(r: LoopResult) {
  const lat = summarize(r.latenciesMs);
  const ok = okCount(r);
  return { ...lat, ok, rate: (ok * 1000) / r.elapsedMs, shed: r.byStatus.get(503) ?? 0 };
}

/** A way to run the gateway's user port: its flags and how the table names it. */
interface GateSetting {
  label: string;
  flags: string[];
}

const GATE_SETTINGS: GateSetting[] = [
  { label: `gate + loop share ${LOOP_SHARE_DEFAULTS.share} (shipped)`, flags: [] },
  { label: 'gate only (--user-port-loop-share=1)', flags: ['--user-port-loop-share=1'] },
  { label: 'no gate (--user-port-concurrency=0)', flags: ['--user-port-concurrency=0'] },
];

interface GateRun {
  setting: GateSetting;
  /** The GraphQL phase's response-cache lookups (hit, miss) and data changes by source, from the gateway's /metrics. */
  views?: { graphql: Phase; rest: Phase; cache: Record<string, number>; machineIdleCores: number };
  webhookAlone: LoopResult;
  webhookFlooded: LoopResult;
  floodDuringWebhook: LoopResult;
  /** Cores the flood's reader (a child process) used during the flooded rounds, and the whole machine. */
  floodClientCores: number;
  machineBusyFlooded: number;
  schedAlone: number;
  schedFlooded: number;
  floodDuringSched: LoopResult;
}

async function measureGate(
  cluster: BenchCluster,
  opts: ViewsBenchOptions,
  setting: GateSetting,
  withViews: boolean,
): Promise<GateRun> {
  const [httpsPort] = (await freePorts(1)) as [number];
  const gw = await startGateway(cluster, [
    `--tls-cert-file=${cluster.state.pki.servingCert}`,
    `--tls-key-file=${cluster.state.pki.servingKey}`,
    `--https-port=${httpsPort}`,
    ...setting.flags,
  ]);
  const ca = readFileSync(cluster.state.pki.caCert);
  const ms = opts.seconds * 1000;
  // The user port's loops run in a process of their own: reading ~2,500 answers of 112 KB a second, they
  // would delay the webhook loop's timings in this one.
  const userLoops = new ClosedLoopProcess();
  const flood = (durationMs: number, signal?: AbortSignal) =>
    userLoops.run({
      port: gw.httpPort,
      concurrency: opts.graphqlConnections,
      durationMs,
      request: graphqlNodes,
      ...(signal ? { signal } : {}),
    });
  const webhook = (durationMs: number) =>
    closedLoop({
      port: httpsPort,
      ca,
      concurrency: opts.webhookConnections,
      durationMs,
      request: webhookRequest(),
    });
  const timed = async (fn: () => Promise<LoopResult>): Promise<Phase> => {
    const before = [
      procStats(gw.pid).cpuSeconds,
      procStats(userLoops.pid ?? 0).cpuSeconds,
      machineCpu(),
    ] as const;
    const loop = await fn();
    const seconds = loop.elapsedMs / 1000;
    return {
      loop,
      cpuSeconds: procStats(gw.pid).cpuSeconds - before[0],
      clientCores: (procStats(userLoops.pid ?? 0).cpuSeconds - before[1]) / seconds,
      machineCores: busyCores(before[2], machineCpu(), os.cpus().length),
    };
  };
  try {
    // What the rest of the machine runs before any load: in a full `npm run bench` the cluster carries
    // what the benches before this one left.
    const idleBefore = machineCpu();
    await sleep(3000);
    const machineIdleCores = busyCores(idleBefore, machineCpu(), os.cpus().length);
    log(`views (${setting.label}): machine busy ${machineIdleCores.toFixed(2)} cores before the warm-up`);
    log(`views (${setting.label}): warm-up`);
    await Promise.all([flood(5000), webhook(5000)]);
    let views: GateRun['views'];
    if (withViews) {
      const cacheBefore = await cacheCounters(gw.httpPort);
      const graphql = await timed(() => flood(ms));
      const cacheAfter = await cacheCounters(gw.httpPort);
      const cache = Object.fromEntries(
        Object.entries(cacheAfter).map(([counter, n]) => [counter, n - (cacheBefore[counter] ?? 0)]),
      );
      const rest = await timed(() =>
        userLoops.run({
          port: gw.httpPort,
          concurrency: opts.graphqlConnections,
          durationMs: ms,
          request: nodeLoadRoute,
        }),
      );
      views = { graphql, rest, cache, machineIdleCores };
      log(
        `views: graphql ${fmt.int(describeLoop(graphql.loop).rate)}/s, rest ${fmt.int(describeLoop(rest.loop).rate)}/s`,
      );
    }
    await sleep(1000);
    const aloneRounds: LoopResult[] = [];
    const floodedRounds: LoopResult[] = [];
    // What the flood's reader and the whole machine used meanwhile: the flood's answers are read on the same cores.
    const floodClient = { cpuSeconds: 0, machineBusy: [] as number[] };
    const floodRounds: LoopResult[] = [];
    const roundMs = ms / ISOLATION_ROUNDS;
    for (let round = 0; round < ISOLATION_ROUNDS; round++) {
      const measureAlone = async () => {
        aloneRounds.push(await webhook(roundMs));
      };
      const measureFlooded = async () => {
        const before = [procStats(userLoops.pid ?? 0).cpuSeconds, machineCpu()] as const;
        const [w, f] = await Promise.all([webhook(roundMs), flood(roundMs)]);
        floodedRounds.push(w);
        floodRounds.push(f);
        floodClient.cpuSeconds += procStats(userLoops.pid ?? 0).cpuSeconds - before[0];
        floodClient.machineBusy.push(busyCores(before[1], machineCpu(), os.cpus().length));
      };
      for (const measure of round % 2 === 0 ? [measureAlone, measureFlooded] : [measureFlooded, measureAlone])
        await measure();
    }
    const webhookAlone = pooled(aloneRounds);
    const webhookFlooded = pooled(floodedRounds);
    const floodDuringWebhook = pooled(floodRounds);
    log(
      `views (${setting.label}): webhook p99 alone ${fmt.ms(describeLoop(webhookAlone).p99)} ms, ` +
        `flooded ${fmt.ms(describeLoop(webhookFlooded).p99)} ms`,
    );
    const kc = await prepareCluster(cluster, { ...SCHEDULER_DEFAULTS, nodes: opts.nodes });
    const phase = { pods: opts.pods, concurrency: 16, phaseTimeoutMs: 300_000 };
    const alone = await runPhase(cluster, kc, gw, 'live', phase, () => {});
    const stopFlood = new AbortController();
    const floodRun = flood(600_000, stopFlood.signal);
    const flooded = await runPhase(cluster, kc, gw, 'live', phase, () => {}).finally(() => stopFlood.abort());
    const floodDuringSched = await floodRun;
    const rate = (r: typeof alone) => (r.complete ? r.bound / r.wallSeconds : Number.NaN);
    log(`views (${setting.label}): scheduler ${fmt.int(rate(alone))} → ${fmt.int(rate(flooded))} pods/s`);
    return {
      setting,
      ...(views ? { views } : {}),
      webhookAlone,
      webhookFlooded,
      floodDuringWebhook,
      floodClientCores: floodClient.cpuSeconds / (pooled(floodRounds).elapsedMs / 1000),
      machineBusyFlooded: floodClient.machineBusy.reduce((a, b) => a + b, 0) / floodClient.machineBusy.length,
      schedAlone: rate(alone),
      schedFlooded: rate(flooded),
      floodDuringSched,
    };
  } finally {
    userLoops.close();
    if (gw.child) await stopChild(gw.child);
  }
}

export async function runViewsBench(
  cluster: BenchCluster,
  options: Partial<ViewsBenchOptions> = {},
): Promise<BenchReport> {
  const opts = { ...VIEWS_DEFAULTS, ...options };
  await prepareCluster(cluster, { ...SCHEDULER_DEFAULTS, nodes: opts.nodes });
  await prepareWebhookRules(cluster, { nodes: opts.nodes });
  const runs: GateRun[] = [];
  for (const [i, setting] of GATE_SETTINGS.slice(0, opts.settings).entries())
    runs.push(await measureGate(cluster, opts, setting, i === 0));
  const shipped = runs[0] as GateRun;
  const views = shipped.views as NonNullable<GateRun['views']>;
  const g = describeLoop(views.graphql.loop);
  const r = describeLoop(views.rest.loop);
  const perAnswer = (p: Phase) => p.loop.bytes / Math.max(1, okCount(p.loop)) / 1024;
  const perCpu = (p: Phase) => okCount(p.loop) / p.cpuSeconds;
  const viewRow = (name: string, p: Phase, d: ReturnType<typeof describeLoop>) => [
    name,
    fmt.int(d.rate),
    fmt.ms(d.p50),
    fmt.ms(d.p99),
    fmt.ms(d.max),
    (perAnswer(p) || 0).toFixed(0),
    fmt.int(perCpu(p)),
  ];
  const viewsTable = markdownTable(
    [
      'route (50 connections)',
      'answers/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'KiB per answer',
      'answers per gateway CPU-s',
    ],
    [
      viewRow('GraphQL `nodes` (podCount, load)', views.graphql, g),
      viewRow('`/api/node-load` (anchor)', views.rest, r),
      [
        '**GraphQL ÷ JSON route**',
        fmt.ratio(g.rate / r.rate),
        fmt.ratio(g.p50 / r.p50),
        fmt.ratio(g.p99 / r.p99),
        '',
        '',
        fmt.ratio(perCpu(views.graphql) / perCpu(views.rest)),
      ],
    ],
  );
  const isoRow = (run: GateRun) => {
    const alone = describeLoop(run.webhookAlone);
    const flooded = describeLoop(run.webhookFlooded);
    const fl = describeLoop(run.floodDuringWebhook);
    return [
      run.setting.label,
      `${fmt.ms(alone.p50)} / ${fmt.ms(alone.p99)}`,
      `${fmt.ms(flooded.p50)} / ${fmt.ms(flooded.p99)} / ${fmt.ms(flooded.max)}`,
      fmt.ratio(flooded.p99 / alone.p99),
      `${fmt.int(alone.rate)} → ${fmt.int(flooded.rate)}`,
      `${fmt.int(fl.rate)} (${fmt.int(fl.shed)} × 503)`,
      `${fmt.int(run.schedAlone)} → ${fmt.int(run.schedFlooded)}`,
      fmt.ratio(run.schedFlooded / run.schedAlone),
    ];
  };
  const isoTable = markdownTable(
    [
      'gateway',
      'webhook alone p50 / p99 ms',
      'webhook under flood p50 / p99 / max ms',
      'p99 flooded ÷ alone',
      'webhook reviews/s alone → flooded',
      'GraphQL answers/s during the flood',
      'scheduler pods/s alone → flooded',
      'pods/s flooded ÷ alone',
    ],
    runs.map(isoRow),
  );
  const wa = describeLoop(shipped.webhookAlone);
  const wf = describeLoop(shipped.webhookFlooded);
  return {
    title: `Views at ${fmt.int(opts.nodes)} nodes, and the kube port under a GraphQL flood`,
    setup:
      `One gateway (every component, as deployed, log level info) over ${fmt.int(opts.nodes)} KWOK nodes; the load ` +
      `generators run on the same machine: the user port's (GraphQL, the JSON route) in a child process of the bench, ` +
      `the webhook's and the pod creator in the bench process, so reading the views' answers does not delay the ` +
      `webhook's timings. Each phase ${opts.seconds} s of closed loops ` +
      `(every connection sends its next request when the answer ended). GraphQL: \`${NODES_QUERY}\` over HTTP ` +
      `POST, ${opts.graphqlConnections} connections; the user port runs anonymous on loopback ` +
      `(--anonymous-user-port), so TokenReview and SubjectAccessReview are not in these figures. Webhook: ` +
      `${opts.webhookConnections} HTTPS connections of the webhook bench's pod review, alone and under the flood in ` +
      `${ISOLATION_ROUNDS} alternating rounds of ${fmt.ms(opts.seconds / ISOLATION_ROUNDS)} s each (alone first, then ` +
      `flooded first, …), each side's rounds pooled. Scheduler: ${opts.pods} pods created live by 16 ` +
      `creates in flight, as the scheduler bench does.`,
    table: `${viewsTable}\n\n${isoTable}`,
    ratios: [
      {
        metric: 'GraphQL `nodes` answers/s, 50 connections',
        anchor: '`/api/node-load`',
        value: g.rate / r.rate,
      },
      {
        metric: 'GraphQL `nodes` p99, 50 connections',
        anchor: '`/api/node-load`',
        value: g.p99 / r.p99,
        note: `lower is better (${fmt.ms(g.p99)} ms vs ${fmt.ms(r.p99)} ms)`,
      },
      {
        metric: 'webhook p99 while GraphQL is flooded',
        anchor: 'webhook p99 alone',
        value: wf.p99 / wa.p99,
        note: `lower is better; target ≤ 2× (${fmt.ms(wf.p99)} ms vs ${fmt.ms(wa.p99)} ms)`,
      },
      {
        metric: 'scheduler pods/s while GraphQL is flooded',
        anchor: 'scheduler pods/s alone',
        value: shipped.schedFlooded / shipped.schedAlone,
      },
    ],
    notes: [
      'The gate admits one user-port request at a time and the next only from a setImmediate callback, after the event loop has polled its sockets again: a webhook review waits for at most one GraphQL operation, however many are queued (src/server/user-port-gate.ts). Excess user-port requests wait in a bounded queue (503 + Retry-After past 1,024 or 10 s).',
      `While the webhook was flooded (shipped setting) the flood's reader used ${shipped.floodClientCores.toFixed(2)} cores and the whole machine ${shipped.machineBusyFlooded.toFixed(2)} of ${os.cpus().length}: the answers are read on the cores the gateway and the webhook's client run on, so the more answers the gateway writes in its share of the loop, the more the flooded p99 carries that reading.`,
      `The loop share (src/server/loop-share.ts) rations those turns in time: while the HTTPS port served a request in the last 250 ms or the scheduler has pods to place, user-port requests get at most --user-port-loop-share of the event loop (default ${LOOP_SHARE_DEFAULTS.share}); with both idle they are not held back.`,
      'GraphQL answers are cached per user while nothing they show changed (src/graphql/response-cache.ts), and a hit is written from the bytes yoga wrote for it, before yoga (src/graphql/answer-replay.ts); during the scheduler phases every binding changes the data, so those answers are executed in full. ' +
        `Response-cache lookups and data changes (by source) during the GraphQL phase above: ${Object.entries(
          views.cache,
        )
          .filter(([, n]) => n > 0)
          .map(([counter, n]) => `${fmt.int(n)} ${counter}`)
          .join(', ')}.`,
      `Cores used during the GraphQL phase: the gateway ${(views.graphql.cpuSeconds / (views.graphql.loop.elapsedMs / 1000)).toFixed(2)}, the flood's reader ${views.graphql.clientCores.toFixed(2)}, the whole machine ${views.graphql.machineCores.toFixed(2)} of ${os.cpus().length}; during the JSON route's: ${(views.rest.cpuSeconds / (views.rest.loop.elapsedMs / 1000)).toFixed(2)}, ${views.rest.clientCores.toFixed(2)}, ${views.rest.machineCores.toFixed(2)}. The machine before the gateway's warm-up (3 s, no load of this bench): ${views.machineIdleCores.toFixed(2)} cores busy — what the cluster and the benches before this one left running.`,
      'Each figure moves with what else the 2-core machine runs; the ratios compare phases of one run.',
    ],
  };
}

/**
 * Counters by label of the gateway's /metrics now: the response cache's lookups (hit, miss), the hits
 * replayed before yoga, and the data changes that start a new cache generation (by source).
 */
async function cacheCounters(port: number): Promise<Record<string, number>> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  const replays = /^nodeload_graphql_response_cache_replays_total (\S+)/m.exec(text)?.[1];
  return {
    ...Object.fromEntries(
      [
        ...text.matchAll(
          /^nodeload_graphql_(response_cache_lookups|data_changes)_total\{(?:result|source)="(\w+)"\} (\S+)/gm,
        ),
      ].map((m) => [`${m[1] === 'data_changes' ? 'change ' : ''}${m[2]}`, Number(m[3])]),
    ),
    ...(replays ? { 'of the hits replayed': Number(replays) } : {}),
  };
}

function args(): Partial<ViewsBenchOptions> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string' },
      seconds: { type: 'string' },
      'graphql-connections': { type: 'string' },
      pods: { type: 'string' },
      settings: { type: 'string' },
    },
  });
  const out: Partial<ViewsBenchOptions> = {};
  if (values.nodes) out.nodes = Number(values.nodes);
  if (values.seconds) out.seconds = Number(values.seconds);
  if (values['graphql-connections']) out.graphqlConnections = Number(values['graphql-connections']);
  if (values.pods) out.pods = Number(values.pods);
  if (values.settings) out.settings = Number(values.settings);
  return out;
}

runWhenMain(import.meta.url, { scheduler: false }, (cluster) => runViewsBench(cluster, args()));

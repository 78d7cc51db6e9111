// Admission webhook throughput and latency, as a ratio against a raw node:https server.
//
//   npm run bench                                 (with the scheduler bench; writes RESULTS.md)
//   npx tsx test/bench/webhook.bench.ts [--requests 20000] [--concurrency 16] [--rounds 4] [--log-level info]
//
// Both servers run in processes of their own (webhook-target.ts) with the cluster's serving certificate; this
// process is the load generator: one keep-alive agent, `concurrency` connections, each sending its next
// review as soon as the previous answer ended. Rounds alternate raw/nodeload so a noisy neighbour on the
// shared 2-core box hits both alike; the first round starts with an unmeasured warm-up (JIT, TLS sessions).
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { createLogger } from '../../src/server/log.js';
import { loadKubeConfig } from '../cluster/nodes.js';
import {
  type BenchCluster,
  type BenchReport,
  compiledGatewayDir,
  ensureBenchNodes,
  ensureNamespace,
  fmt,
  log,
  markdownTable,
  procStats,
  runWhenMain,
  spawnTs,
  stopChild,
  summarize,
} from './lib.js';
import { podReviewTemplate, UID_MARK, WEBHOOK_NAMESPACE, webhookRules } from './webhook-workload.js';

export interface WebhookBenchOptions {
  /** Measured requests per server, split over the rounds. */
  requests: number;
  concurrency: number;
  rounds: number;
  warmup: number;
  nodes: number;
  /** The gateway's log level (info is the shipped default: one line per patched pod). */
  logLevel: string;
}

export const WEBHOOK_DEFAULTS: WebhookBenchOptions = {
  requests: 20_000,
  concurrency: 16,
  rounds: 4,
  warmup: 2_000,
  nodes: 100,
  logLevel: 'info',
};

const TARGET_SCRIPT = new URL('./webhook-target.ts', import.meta.url).pathname;

// ---------------------------------------------------------------------------------------------------------
// servers under test

/** raw: the anchor; sized: the anchor answering as many bytes as nodeload does (BENCH_ANSWER_PAD). */
type TargetName = 'raw' | 'gateway' | 'sized';

interface Target {
  name: TargetName;
  child: ChildProcess;
  pid: number;
  port: number;
}

async function startTarget(
  name: TargetName,
  cluster: BenchCluster,
  opts: WebhookBenchOptions,
  expectRules: number,
  answerPad = 0,
): Promise<Target> {
  const logFile = path.join(cluster.workDir, `webhook-${name}.log`);
  const child = spawnTs(TARGET_SCRIPT, [name === 'sized' ? 'raw' : name], {
    logFile,
    stdout: 'pipe',
    // NODELOAD_BENCH_PROFILE=1: a V8 CPU profile of each server, written to the kept scratch dir on exit.
    nodeArgs:
      process.env['NODELOAD_BENCH_PROFILE'] === '1'
        ? ['--cpu-prof', `--cpu-prof-dir=${path.join(cluster.workDir, `profile-webhook-${name}`)}`]
        : [],
    env: {
      BENCH_TLS_CERT: cluster.state.pki.servingCert,
      BENCH_TLS_KEY: cluster.state.pki.servingKey,
      BENCH_KUBECONFIG: cluster.state.kubeconfig,
      BENCH_GATEWAY_LOG: path.join(cluster.workDir, 'webhook-gateway.pino.log'),
      BENCH_LOG_LEVEL: opts.logLevel,
      BENCH_EXPECT_RULES: String(expectRules),
      BENCH_EXPECT_NODES: String(opts.nodes),
      ...(name === 'sized' ? { BENCH_ANSWER_PAD: String(answerPad) } : {}),
      // The gateway's compiled modules (dist/, built once per bench process). Not the bundle the image
      // runs: it has no entry point that starts the webhook component alone.
      ...(name === 'gateway' ? { BENCH_GATEWAY_DIST: compiledGatewayDir() } : {}),
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`${name} target not ready after 90 s (see ${logFile})`)),
      90_000,
    );
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} target exited with ${code}: ${readFileSync(logFile, 'utf8').slice(-2000)}`));
    });
  });
  if (!child.pid) throw new Error(`${name} target has no pid`);
  return { name, child, pid: child.pid, port };
}

// ---------------------------------------------------------------------------------------------------------
// load generator

interface DriveResult {
  latenciesMs: Float64Array;
  elapsedMs: number;
  failures: number;
  firstFailure?: string;
  /** The decoded answer to the first request (to show what work the server did). */
  sample?: { allowed: boolean; patchOps: number; patchPaths: string[]; bytes: number };
}

function drive(
  port: number,
  ca: Buffer,
  template: string,
  count: number,
  concurrency: number,
  sampleFirst: boolean,
): Promise<DriveResult> {
  const [pre, post] = template.split(UID_MARK) as [string, string];
  const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, ca });
  const latencies = new Float64Array(count);
  const runId = randomUUID().slice(0, 23);
  let next = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  let sample: DriveResult['sample'];

  const one = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const uid = `${runId}-${String(i).padStart(12, '0')}`;
      const body = pre + uid + post;
      const start = performance.now();
      const fail = (why: string) => {
        failures++;
        firstFailure ??= why;
        latencies[i] = performance.now() - start;
        resolve();
      };
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/mutate',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            text += d;
          });
          res.on('end', () => {
            latencies[i] = performance.now() - start;
            if (res.statusCode !== 200 || !text.includes(uid)) {
              fail(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
              return;
            }
            if (sampleFirst && i === 0) {
              const r = (JSON.parse(text) as { response: { allowed: boolean; patch?: string } }).response;
              const ops = r.patch
                ? (JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8')) as { path: string }[])
                : [];
              sample = {
                allowed: r.allowed,
                patchOps: ops.length,
                patchPaths: ops.map((o) => o.path),
                bytes: Buffer.byteLength(text),
              };
            }
            resolve();
          });
          res.on('error', (err) => fail(err.message));
        },
      );
      req.on('error', (err) => fail(err.message));
      req.end(body);
    });

  const started = performance.now();
  const worker = async () => {
    while (next < count) await one(next++);
  };
  return Promise.all(Array.from({ length: concurrency }, worker)).then(() => {
    const elapsedMs = performance.now() - started;
    agent.destroy();
    return { latenciesMs: latencies, elapsedMs, failures, firstFailure, sample };
  });
}

// ---------------------------------------------------------------------------------------------------------
// the bench

interface Measured {
  latencies: number[];
  elapsedMs: number;
  requests: number;
  failures: number;
  serverCpuSeconds: number;
  clientCpuSeconds: number;
  rssBytes: number;
  peakRssBytes: number;
  idleRssBytes: number;
  sample?: DriveResult['sample'];
}

/** The webhook namespace with its NodeLoadRules over `nodes` bench nodes; returns how many rules. */
export async function prepareWebhookRules(
  cluster: BenchCluster,
  opts: Pick<WebhookBenchOptions, 'nodes'>,
): Promise<number> {
  const kubeconfig = cluster.state.kubeconfig;
  const kc = loadKubeConfig(kubeconfig);
  await ensureCrd(kc, createLogger('silent'));
  await ensureBenchNodes(kubeconfig, opts.nodes);
  await ensureNamespace(kubeconfig, WEBHOOK_NAMESPACE);
  const api = kc.makeApiClient(CustomObjectsApi);
  const list = webhookRules(opts.nodes);
  for (const r of list) {
    const body = {
      apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
      kind: 'NodeLoadRule',
      metadata: { name: r.name, namespace: WEBHOOK_NAMESPACE },
      spec: r.spec,
    };
    const ref = {
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace: WEBHOOK_NAMESPACE,
    };
    try {
      await api.createNamespacedCustomObject({ ...ref, body });
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
  return list.length;
}

export async function runWebhookBench(
  cluster: BenchCluster,
  options: Partial<WebhookBenchOptions> = {},
): Promise<BenchReport> {
  const opts = { ...WEBHOOK_DEFAULTS, ...options };
  const ruleCount = await prepareWebhookRules(cluster, opts);
  const ca = readFileSync(cluster.state.pki.caCert);
  const template = podReviewTemplate(WEBHOOK_NAMESPACE);
  const perRound = Math.ceil(opts.requests / opts.rounds);

  const targets: Target[] = [];
  try {
    const results = new Map<TargetName, Measured>();
    const start = async (name: TargetName, answerPad = 0) => {
      const t = await startTarget(name, cluster, opts, ruleCount, answerPad);
      targets.push(t);
      return t;
    };
    const warmUp = async (t: Target) => {
      const warm = await drive(t.port, ca, template, opts.warmup, opts.concurrency, true);
      if (warm.failures)
        throw new Error(`${t.name}: ${warm.failures} failed warm-up requests: ${warm.firstFailure}`);
      const s = procStats(t.pid);
      results.set(t.name, {
        latencies: [],
        elapsedMs: 0,
        requests: 0,
        failures: 0,
        serverCpuSeconds: 0,
        clientCpuSeconds: 0,
        rssBytes: 0,
        peakRssBytes: 0,
        idleRssBytes: s.rssBytes,
        sample: warm.sample,
      });
      log(
        `webhook: ${t.name} warmed up (${opts.warmup} requests, ${fmt.int(warm.sample?.bytes ?? 0)}-byte ` +
          `answers), RSS ${fmt.mib(s.rssBytes)} MiB`,
      );
      return warm.sample?.bytes ?? 0;
    };
    const rawBytes = await warmUp(await start('raw'));
    const gatewayBytes = await warmUp(await start('gateway'));
    // The sized anchor starts once nodeload's warm-up answer tells how many bytes it sends.
    const patchFields = ',"patchType":"JSONPatch","patch":""'.length;
    await warmUp(await start('sized', Math.max(0, gatewayBytes - rawBytes - patchFields)));
    for (let round = 0; round < opts.rounds; round++) {
      for (const t of targets) {
        const m = results.get(t.name) as Measured;
        const before = procStats(t.pid);
        const clientBefore = process.cpuUsage();
        const r = await drive(t.port, ca, template, perRound, opts.concurrency, false);
        const client = process.cpuUsage(clientBefore);
        const after = procStats(t.pid);
        for (const v of r.latenciesMs) m.latencies.push(v);
        m.elapsedMs += r.elapsedMs;
        m.requests += perRound;
        m.failures += r.failures;
        m.serverCpuSeconds += after.cpuSeconds - before.cpuSeconds;
        m.clientCpuSeconds += (client.user + client.system) / 1e6;
        m.rssBytes = after.rssBytes;
        m.peakRssBytes = after.peakRssBytes;
        log(
          `webhook: round ${round + 1}/${opts.rounds} ${t.name}: ${fmt.int(perRound / (r.elapsedMs / 1000))} req/s` +
            (r.failures ? `, ${r.failures} failures (${r.firstFailure})` : ''),
        );
      }
    }
    return report(opts, template, results);
  } finally {
    for (const t of targets) await stopChild(t.child);
  }
}

function report(
  opts: WebhookBenchOptions,
  template: string,
  results: Map<TargetName, Measured>,
): BenchReport {
  const raw = results.get('raw') as Measured;
  const gw = results.get('gateway') as Measured;
  const sized = results.get('sized') as Measured;
  const row = (m: Measured) => {
    const lat = summarize(m.latencies);
    const rps = m.requests / (m.elapsedMs / 1000);
    return {
      lat,
      rps,
      perCpu: m.requests / m.serverCpuSeconds,
      cells: [
        fmt.int(rps),
        fmt.ms(lat.p50),
        fmt.ms(lat.p99),
        fmt.ms(lat.max),
        fmt.int(m.requests / m.serverCpuSeconds),
        `${fmt.mib(m.idleRssBytes)} / ${fmt.mib(m.rssBytes)} / ${fmt.mib(m.peakRssBytes)}`,
        String(m.failures),
      ],
    };
  };
  const r = row(raw);
  const g = row(gw);
  const z = row(sized);
  const ratio = {
    rps: g.rps / r.rps,
    p50: g.lat.p50 / r.lat.p50,
    p99: g.lat.p99 / r.lat.p99,
    perCpu: g.perCpu / r.perCpu,
    rss: gw.rssBytes / raw.rssBytes,
    /** Against the anchor sending nodeload's bytes: what deciding costs, apart from the answer's size. */
    perCpuSized: g.perCpu / z.perCpu,
    /** What the answer's size alone costs the anchor. */
    sizedOverRaw: z.perCpu / r.perCpu,
  };
  const table = markdownTable(
    [
      'server',
      'req/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'reviews per server CPU-second',
      'RSS MiB idle / after / peak',
      'failed',
    ],
    [
      ['raw `node:https` + `JSON.parse` (anchor)', ...r.cells],
      [`raw, answering nodeload's ${fmt.int(gw.sample?.bytes ?? 0)} bytes`, ...z.cells],
      [`nodeload gateway, webhook only (log level ${opts.logLevel})`, ...g.cells],
      [
        '**nodeload ÷ raw**',
        fmt.ratio(ratio.rps),
        fmt.ratio(ratio.p50),
        fmt.ratio(ratio.p99),
        '',
        fmt.ratio(ratio.perCpu),
        fmt.ratio(ratio.rss),
        '',
      ],
    ],
  );
  const sample = gw.sample;
  const clientCpu = (m: Measured) => m.clientCpuSeconds / (m.elapsedMs / 1000);
  return {
    title: 'Admission webhook: POST /mutate',
    setup:
      `${fmt.int(opts.requests)} measured requests per server (${opts.rounds} alternating rounds, after ` +
      `${fmt.int(opts.warmup)} warm-up requests), ${opts.concurrency} keep-alive HTTPS connections from one ` +
      `Node client process, a ${(Buffer.byteLength(template) / 1024).toFixed(1)} KB pod AdmissionReview ` +
      `(Deployment pod, two containers). Each server runs in its own process; latency is measured by the client.`,
    table,
    ratios: [
      { metric: 'webhook req/s', value: ratio.rps, anchor: 'raw node:https' },
      { metric: 'webhook p99 latency', value: ratio.p99, anchor: 'raw node:https', note: 'lower is better' },
      { metric: 'webhook reviews per CPU-second', value: ratio.perCpu, anchor: 'raw node:https' },
      {
        metric: 'webhook reviews per CPU-second, same answer size',
        value: ratio.perCpuSized,
        anchor: "raw node:https answering nodeload's bytes",
      },
      { metric: 'webhook RSS', value: ratio.rss, anchor: 'raw node:https', note: 'lower is better' },
    ],
    notes: [
      sample
        ? `Each nodeload answer is a JSON patch of ${sample.patchOps} operations (${sample.patchPaths.join(', ')}): ` +
          `the pod is covered by 3 of the namespace's 5 NodeLoadRules, whose allowedNodes and nodeSelector ` +
          `intersect to 20 of the ${opts.nodes} KWOK nodes; the anchor answers \`allowed: true\` without a patch.`
        : 'nodeload answered without a patch: the mutate path did no work (check the rules).',
      clientNote(clientCpu(raw), clientCpu(gw)),
      'Targets set for nodeload (team performance notes): ≥ 1 500 reviews/s on about one core, p50 < 2 ms and ' +
        'p99 < 10 ms in the server; the client-side latencies above also contain queueing at 16 connections.',
      'RSS: after warm-up / after the measured rounds / peak (VmHWM). The gateway RSS includes its cluster ' +
        `cache (${opts.nodes} nodes, rules, pods) and the client-node, express, zod and prom-client modules, ` +
        'loaded from dist/ (npm run build) by a target process that itself runs under tsx.',
      'Each answer is served by the plain node:http handler the gateway runs ahead of express ' +
        '(src/server/fast-routes.ts), and a pod shape seen before is answered from the patch memo ' +
        '(src/webhook/patch-memo.ts). A patch naming allowed nodes is long because the API server takes one ' +
        'node name per matchFields term, so the answer is a node-affinity term per allowed node. Its size ' +
        `alone costs the anchor ${fmt.ratio(ratio.sizedOverRaw)} of its reviews per CPU-second (the second ` +
        `row, same run); against that row nodeload is at ${fmt.ratio(ratio.perCpuSized)}: the rest is the ` +
        'decision (validating the pod, matching rules, the memo key and the answer’s copy with this uid).',
    ],
  };
}

/** Whether the load generator, rather than the server, set the pace: it decides how to read req/s. */
function clientNote(raw: number, gateway: number): string {
  const busy = raw > 0.8;
  return (
    `Load generator CPU per wall second: ${raw.toFixed(2)} during the raw runs, ${gateway.toFixed(2)} during ` +
    `the nodeload runs. ${
      busy
        ? 'The client was near one full core against the raw server, so the anchor is client-bound and the ' +
          "req/s ratio understates nodeload's overhead."
        : 'Neither the client nor the server used a full core: the rest of the box (control plane, other ' +
          'processes) set the pace, so req/s and latency move with its load.'
    } Reviews per server CPU-second compare the two servers' own cost and hardly depend on that.`
  );
}

function webhookBenchArgs(): Partial<WebhookBenchOptions> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string' },
      concurrency: { type: 'string' },
      rounds: { type: 'string' },
      'log-level': { type: 'string' },
    },
  });
  const opts: Partial<WebhookBenchOptions> = {};
  if (values.requests) opts.requests = Number(values.requests);
  if (values.concurrency) opts.concurrency = Number(values.concurrency);
  if (values.rounds) opts.rounds = Number(values.rounds);
  if (values['log-level']) opts.logLevel = values['log-level'];
  return opts;
}

runWhenMain(import.meta.url, { scheduler: false }, (cluster) => runWebhookBench(cluster, webhookBenchArgs()));

/**
 * What decoding a watch stream costs the gateway: client-node 2.0.1's Watch (undici fetch, Readable.fromWeb,
 * readline, JSON.parse) against httpsWatchFn (node:https, WatchLineDecoder), on a replay of pod MODIFIED
 * events. The pod is a real one (test/bench/watch-decode.pod.json: 10.7 KB as kube-apiserver 1.36 writes
 * it, two containers, status from KWOK, managedFields), each event with its own resourceVersion.
 *
 *   npx tsx test/bench/watch-decode.bench.ts [--events 20000] [--rounds 3] [--convert]
 *   node --cpu-prof --import tsx test/bench/watch-decode.bench.ts --only https   # profile in ./CPU.*.cpuprofile
 *
 * Two settings, each path in turn, `--rounds` times (the median is reported):
 * - `memory`: the decoding alone. The stream's bytes in 16 KiB chunks (a TLS record, what a socket read
 *   hands over) through readline + JSON.parse as client-node does, or through WatchLineDecoder, with and
 *   without managedFields (which the gateway's informers leave unparsed: watch-lean.ts).
 * - `https`: the whole client side over loopback TLS. A child process serves the events as kube-apiserver
 *   does (one write per event on a chunked response); this process's CPU is the client's alone.
 * `--convert` also turns every object into the cache's PodInfo (toPodInfo), to show that share.
 *
 * Per path: events/s (wall), CPU ms per 1,000 events (user + system of this process, all threads) and
 * bytes allocated per event (V8 heap, from the GC profiler: what each collection found used, less what
 * the previous one left, plus the growth since the last). A 2-core machine shared with other work gives
 * noisy absolute figures; compare the paths of one run.
 */
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { GCProfiler } from 'node:v8';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { toPodInfo } from '../../src/cluster/convert.js';
import { WatchLineDecoder } from '../../src/cluster/watch-decoder.js';
import { httpsWatchFn } from '../../src/cluster/watch-https.js';
import { fmt, markdownTable } from './lib.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    convert: { type: 'boolean', default: false },
    /** Run one setting only: memory or https. */
    only: { type: 'string' },
    /** Internal: this process is the replaying server. */
    serve: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

const POD_FILE = new URL('./watch-decode.pod.json', import.meta.url);
const TLS_RECORD = 16 * 1024;

/** One line per event, every event the same pod at the next resourceVersion. */
function eventLines(count: number): string[] {
  const pod = JSON.parse(readFileSync(POD_FILE, 'utf8')) as { metadata: { resourceVersion: string } };
  pod.metadata.resourceVersion = '@@RV@@';
  const [head, tail] = JSON.stringify({ type: 'MODIFIED', object: pod }).split('@@RV@@') as [string, string];
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`${head}${1000 + i}${tail}\n`);
  return lines;
}

// ---- the replaying server (a child, so that its CPU is not the client's) ----

async function serve(events: number, dir: string): Promise<void> {
  const https = await import('node:https');
  const lines = eventLines(events).map((l) => Buffer.from(l));
  const server = https.createServer(
    { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) },
    async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      for (const line of lines) {
        if (!res.write(line)) await new Promise((r) => res.once('drain', r));
      }
      res.end();
    },
  );
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    process.send?.({ port: address.port });
  });
}

// ---- measuring ----

interface Figures {
  path: string;
  events: number;
  wallMs: number;
  cpuMs: number;
  allocatedBytes: number;
}

async function measure(name: string, events: number, run: () => Promise<number>): Promise<Figures> {
  const gc = new GCProfiler();
  const startHeap = process.memoryUsage().heapUsed;
  gc.start();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const seen = await run();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const endHeap = process.memoryUsage().heapUsed;
  const profile = gc.stop();
  if (seen !== events) throw new Error(`${name}: ${seen} events of ${events}`);
  let allocated = 0;
  let after = startHeap;
  for (const s of profile?.statistics ?? []) {
    allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - after);
    after = s.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += Math.max(0, endHeap - after);
  return { path: name, events, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, allocatedBytes: allocated };
}

type Sink = (object: unknown) => void;

function sinkFor(convert: boolean): { sink: Sink; count: () => number } {
  let n = 0;
  let keep: unknown;
  return {
    sink: convert
      ? (object) => {
          keep = toPodInfo(object as Parameters<typeof toPodInfo>[0]);
          n++;
        }
      : (object) => {
          keep = object;
          n++;
        },
    count: () => (keep === undefined ? 0 : n),
  };
}

function chunked(lines: string[]): Buffer[] {
  const all = Buffer.from(lines.join(''));
  const chunks: Buffer[] = [];
  for (let i = 0; i < all.length; i += TLS_RECORD) chunks.push(all.subarray(i, i + TLS_RECORD));
  return chunks;
}

/** client-node 2.0.1's Watch body handling, as in its dist/watch.js, minus the fetch. */
async function readlinePath(chunks: Buffer[], sink: Sink): Promise<void> {
  const lines = createInterface(Readable.from(chunks));
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      const data = JSON.parse(line.toString()) as { type: string; object: unknown };
      sink(data.object);
    });
    lines.on('close', resolve);
    lines.on('error', reject);
  });
}

function decoderPath(withoutManagedFields: boolean) {
  return async (chunks: Buffer[], sink: Sink): Promise<void> => {
    const decoder = new WatchLineDecoder((event) => sink(event.object), { withoutManagedFields });
    for (const chunk of chunks) decoder.write(chunk);
    decoder.end();
  };
}

type HttpsPath = 'client-node' | 'httpsWatchFn' | 'lean';
const HTTPS_PATHS: Record<HttpsPath, string> = {
  'client-node': 'https: client-node Watch',
  httpsWatchFn: 'https: httpsWatchFn',
  lean: 'https: httpsWatchFn without managedFields (the gateway)',
};

async function overHttps(kind: HttpsPath, kc: KubeConfig, sink: Sink): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const done = (err: unknown) => (err ? reject(err) : resolve());
    const onEvent = (_type: string, object: unknown) => sink(object);
    if (kind === 'client-node') void new Watch(kc).watch('/api/v1/pods', {}, onEvent, done);
    else void httpsWatchFn(kc, { withoutManagedFields: kind === 'lean' })('/api/v1/pods', {}, onEvent, done);
  });
}

function selfSignedCert(dir: string): void {
  // biome-ignore format: one openssl command, flag by flag
  const args = [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
  ];
  execFileSync('openssl', args, { stdio: 'ignore' });
}

function kubeConfigFor(port: number, dir: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'replay', server: `https://127.0.0.1:${port}`, caFile: path.join(dir, 'cert.pem') }],
    users: [{ name: 'replay', token: 'not-checked' }],
    contexts: [{ name: 'replay', cluster: 'replay', user: 'replay' }],
    currentContext: 'replay',
  });
  return kc;
}

function median(figures: Figures[], key: 'wallMs' | 'cpuMs' | 'allocatedBytes'): number {
  const sorted = figures.map((f) => f[key]).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function main(): Promise<void> {
  const events = Number(values.events);
  const rounds = Number(values.rounds);
  const convert = values.convert ?? false;
  const results = new Map<string, Figures[]>();
  const record = (f: Figures) => results.set(f.path, [...(results.get(f.path) ?? []), f]);

  if (values.only !== 'https') {
    const chunks = chunked(eventLines(events));
    for (let r = 0; r < rounds; r++) {
      for (const [name, run] of [
        ['memory: readline + JSON.parse (client-node)', readlinePath],
        ['memory: WatchLineDecoder', decoderPath(false)],
        ['memory: WatchLineDecoder without managedFields', decoderPath(true)],
      ] as const) {
        const { sink, count } = sinkFor(convert);
        record(
          await measure(name, events, async () => {
            await run(chunks, sink);
            return count();
          }),
        );
      }
    }
  }

  if (values.only !== 'memory') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nodeload-watch-bench-'));
    selfSignedCert(dir);
    const server = fork(new URL(import.meta.url).pathname, ['--serve', dir, '--events', String(events)], {
      execArgv: process.execArgv,
    });
    try {
      const port = await new Promise<number>((resolve) =>
        server.once('message', (m: { port: number }) => resolve(m.port)),
      );
      const kc = kubeConfigFor(port, dir);
      for (let r = 0; r < rounds; r++) {
        for (const kind of Object.keys(HTTPS_PATHS) as HttpsPath[]) {
          const { sink, count } = sinkFor(convert);
          const name = HTTPS_PATHS[kind];
          record(
            await measure(name, events, async () => {
              await overHttps(kind, kc, sink);
              return count();
            }),
          );
        }
      }
    } finally {
      server.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const rows = [...results.entries()].map(([name, figures]) => {
    const wall = median(figures, 'wallMs');
    return [
      name,
      fmt.int(events / (wall / 1000)),
      (median(figures, 'cpuMs') / (events / 1000)).toFixed(1),
      fmt.int(median(figures, 'allocatedBytes') / events),
    ];
  });
  console.log(
    `${events} pod MODIFIED events of ${Buffer.byteLength(eventLines(1)[0] as string)} B, ` +
      `${rounds} rounds, median${convert ? ', with toPodInfo' : ''}; node ${process.version}, ${os.cpus().length} cores\n`,
  );
  console.log(markdownTable(['path', 'events/s', 'CPU ms / 1,000 events', 'bytes allocated / event'], rows));
}

if (values.help) {
  console.log(
    'usage: npx tsx test/bench/watch-decode.bench.ts [--events 20000] [--rounds 3] [--convert] [--only memory|https]',
  );
} else if (values.serve) {
  void serve(Number(values.events), values.serve);
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

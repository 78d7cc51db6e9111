// The fan-out bench's subscribers, one transport per process (started by fanout.bench.ts), so that their
// CPU is their own and can be reported beside the gateway's.
//
// Env: FANOUT_PORT (the gateway's loopback HTTP port), FANOUT_TRANSPORT (sse | ws), FANOUT_SUBSCRIBERS,
// FANOUT_PODS, FANOUT_PREFIX (the burst's pod names: `${prefix}NNNNN`), FANOUT_PROBE (the probe pod's
// prefix), FANOUT_NAMESPACE, FANOUT_OUT (where the latency samples go, as raw float32 files).
// Prints JSON lines on stdout: {connected}, {probe} once every subscriber saw the probe decision, and
// {done} after the stdin command `drain <quietMs> <timeoutMs>`: every subscriber has every burst pod's
// decision, or nothing arrived for quietMs, or timeoutMs passed.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { decisionFields, FANOUT_QUERY, NextEventSplitter, podIndex } from './fanout-parse.js';

const env = (k: string): string => {
  const v = process.env[k];
  if (!v) throw new Error(`fanout client: ${k} is not set`);
  return v;
};
const port = Number(env('FANOUT_PORT'));
const transport = env('FANOUT_TRANSPORT');
const subscribers = Number(env('FANOUT_SUBSCRIBERS'));
const pods = Number(env('FANOUT_PODS'));
const prefix = env('FANOUT_PREFIX');
const probePrefix = env('FANOUT_PROBE');
const namespace = env('FANOUT_NAMESPACE');
const out = env('FANOUT_OUT');

const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

// Per (subscriber, pod): the first delivery's latencies, from publication and from the cycle start.
const seen = new Uint8Array(subscribers * pods);
const fromPublish = new Float32Array(subscribers * pods);
const fromStart = new Float32Array(subscribers * pods);
const delivered = new Uint32Array(subscribers);
const probed = new Uint8Array(subscribers);
let probedCount = 0;
let repeated = 0;
let others = 0;
let notScheduled = 0;
let unreadable = 0;
let lastDeliveryAt = 0;
const failures: string[] = [];
let ended = 0;
const loopDelay = monitorEventLoopDelay({ resolution: 10 });

function onDecision(s: number, pod: string, result: string, startMs: number, publishedMs: number): void {
  const now = Date.now();
  lastDeliveryAt = now;
  const i = podIndex(pod, prefix);
  if (i < 0 || i >= pods) {
    if (pod.startsWith(probePrefix) && !probed[s]) {
      probed[s] = 1;
      if (++probedCount === subscribers) emit({ type: 'probe', seen: probedCount });
    } else others++;
    return;
  }
  if (result !== 'SCHEDULED') notScheduled++;
  const k = s * pods + i;
  if (seen[k]) {
    repeated++;
    return;
  }
  seen[k] = 1;
  delivered[s] = (delivered[s] as number) + 1;
  fromPublish[k] = now - publishedMs;
  fromStart[k] = now - startMs;
}

function failed(s: number, what: string): void {
  ended++;
  if (failures.length < 20) failures.push(`subscriber ${s}: ${what}`);
}

/** One SSE subscription over its own connection; resolves once the stream's headers arrived. */
function sseSubscriber(s: number): Promise<void> {
  const body = JSON.stringify({ query: FANOUT_QUERY, variables: { ns: namespace } });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/graphql',
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`HTTP ${res.statusCode}`));
          return;
        }
        resolve();
        const splitter = new NextEventSplitter();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          for (const data of splitter.push(chunk)) {
            const d = decisionFields(data);
            if (d) onDecision(s, d.pod, d.result, d.startMs, d.publishedMs);
            else unreadable++;
          }
        });
        res.on('end', () => failed(s, 'stream ended'));
        res.on('error', (err) => failed(s, String(err)));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface WsDecision {
  pod: string;
  result: string;
  time: string;
  latencyMs: number;
}

/** One graphql-ws client (its own socket) with one subscription; resolves once the socket is acknowledged. */
function wsSubscriber(s: number): Promise<void> {
  const client = createClient({
    url: `ws://127.0.0.1:${port}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
  });
  return new Promise((resolve, reject) => {
    client.on('connected', () => resolve());
    client.on('closed', () => reject(new Error('socket closed before it was acknowledged')));
    client.subscribe<{ schedulingEvents: WsDecision }>(
      { query: FANOUT_QUERY, variables: { ns: namespace } },
      {
        next: (r) => {
          const d = r.data?.schedulingEvents;
          if (!d) {
            unreadable++;
            return;
          }
          const startMs = Date.parse(d.time);
          onDecision(s, d.pod, d.result, startMs, startMs + d.latencyMs);
        },
        error: (err) => failed(s, err instanceof Error ? err.message : JSON.stringify(err)),
        complete: () => failed(s, 'subscription completed'),
      },
    );
  });
}

async function connectAll(): Promise<void> {
  const started = performance.now();
  const open = transport === 'sse' ? sseSubscriber : wsSubscriber;
  let next = 0;
  let ok = 0;
  const errors: string[] = [];
  // A few dozen handshakes at once: the SSE ones queue at the user port's gate, one admitted at a time.
  await Promise.all(
    Array.from({ length: Math.min(50, subscribers) }, async () => {
      while (next < subscribers) {
        const s = next++;
        try {
          await open(s);
          ok++;
        } catch (err) {
          if (errors.length < 5) errors.push(`subscriber ${s}: ${String(err)}`);
        }
      }
    }),
  );
  emit({ type: 'connected', ok, failed: subscribers - ok, errors, ms: performance.now() - started });
}

function writeSamples(): number {
  const a: number[] = [];
  const b: number[] = [];
  for (let k = 0; k < seen.length; k++)
    if (seen[k]) {
      a.push(fromPublish[k] as number);
      b.push(fromStart[k] as number);
    }
  writeFileSync(`${out}.publish.f32`, Buffer.from(Float32Array.from(a).buffer));
  writeFileSync(`${out}.start.f32`, Buffer.from(Float32Array.from(b).buffer));
  return a.length;
}

async function drain(quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const complete = () => delivered.every((n) => n === pods);
  while (!complete() && Date.now() < deadline && Date.now() - lastDeliveryAt < quietMs)
    await new Promise((r) => setTimeout(r, 100));
  const received = writeSamples();
  let short = 0;
  for (const n of delivered) if (n < pods) short++;
  emit({
    type: 'done',
    received,
    expected: subscribers * pods,
    subscribersMissingSome: short,
    repeated,
    notScheduled,
    others,
    unreadable,
    ended,
    failures,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    loopDelayMaxMs: loopDelay.max / 1e6,
  });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, a, b] = line.trim().split(/\s+/);
  if (cmd === 'start') loopDelay.enable();
  if (cmd === 'drain') void drain(Number(a), Number(b));
});
process.stdin.on('end', () => process.exit(0));
await connectAll();

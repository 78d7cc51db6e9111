// A closed-loop load generator for a fixed time: `concurrency` workers, each sending its next request as soon
// as the previous answer ended, over one keep-alive agent. Answers are read to the end and dropped (the
// client's JSON parsing would only steal the CPU the server under test shares with it).
import { type ChildProcess, fork } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';

export interface LoopRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** Body per request (the webhook's carries a fresh uid). */
  body?: (i: number) => string;
}

export interface LoopResult {
  latenciesMs: number[];
  elapsedMs: number;
  /** Answers by HTTP status; 0 = transport error. */
  byStatus: Map<number, number>;
  bytes: number;
  firstFailure?: string;
}

export function okCount(r: LoopResult): number {
  let n = 0;
  for (const [status, count] of r.byStatus) if (status >= 200 && status < 300) n += count;
  return n;
}

export async function closedLoop(opts: {
  port: number;
  /** HTTPS with this CA, else plain HTTP. */
  ca?: Buffer;
  concurrency: number;
  durationMs: number;
  request: LoopRequest;
  /** Stop early (another phase ended). */
  signal?: AbortSignal;
}): Promise<LoopResult> {
  const mod = opts.ca ? https : http;
  const agent = opts.ca
    ? new https.Agent({ keepAlive: true, maxSockets: opts.concurrency, ca: opts.ca })
    : new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const result: LoopResult = { latenciesMs: [], elapsedMs: 0, byStatus: new Map(), bytes: 0 };
  const count = (status: number) => result.byStatus.set(status, (result.byStatus.get(status) ?? 0) + 1);
  let i = 0;
  const started = performance.now();
  const end = started + opts.durationMs;

  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const body = opts.request.body?.(i++);
      const t0 = performance.now();
      const req = mod.request(
        {
          host: '127.0.0.1',
          port: opts.port,
          path: opts.request.path,
          method: opts.request.method,
          agent,
          headers: {
            ...opts.request.headers,
            ...(body === undefined ? {} : { 'content-length': Buffer.byteLength(body) }),
          },
        },
        (res) => {
          res.on('data', (d: Buffer) => {
            result.bytes += d.length;
          });
          res.on('end', () => {
            result.latenciesMs.push(performance.now() - t0);
            const status = res.statusCode ?? 0;
            count(status);
            if (status >= 300) result.firstFailure ??= `HTTP ${status}`;
            resolve();
          });
          res.on('error', (err) => {
            count(0);
            result.firstFailure ??= err.message;
            resolve();
          });
        },
      );
      req.on('error', (err) => {
        count(0);
        result.firstFailure ??= err.message;
        resolve();
      });
      req.end(body);
    });

  const worker = async () => {
    while (performance.now() < end && !opts.signal?.aborted) await one();
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  result.elapsedMs = performance.now() - started;
  agent.destroy();
  return result;
}

/** Several runs of one loop as one: latencies and answers together, their times added. */
export function pooled(runs: LoopResult[]): LoopResult {
  const out: LoopResult = { latenciesMs: [], elapsedMs: 0, byStatus: new Map(), bytes: 0 };
  for (const r of runs) {
    for (const ms of r.latenciesMs) out.latenciesMs.push(ms);
    out.elapsedMs += r.elapsedMs;
    out.bytes += r.bytes;
    for (const [status, n] of r.byStatus) out.byStatus.set(status, (out.byStatus.get(status) ?? 0) + n);
    if (r.firstFailure !== undefined) out.firstFailure ??= r.firstFailure;
  }
  return out;
}

/**
 * Closed loops over plain HTTP run by a child process (closed-loop-child.ts), one at a time, with a constant
 * body. A loop whose answers are large (a GraphQL `nodes` answer is 112 KB) keeps its reader's event loop
 * busy: run in the process that also times another loop, it delays those timings too, and what looked like
 * the server's latency was the load generator's.
 */
export class ClosedLoopProcess {
  private readonly child: ChildProcess;

  constructor() {
    this.child = fork(new URL('./closed-loop-child.ts', import.meta.url).pathname, [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  run(opts: {
    port: number;
    concurrency: number;
    durationMs: number;
    request: LoopRequest;
    signal?: AbortSignal;
  }): Promise<LoopResult> {
    const { body, ...request } = opts.request;
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the closed-loop process exited (${code})`));
      const onStop = () => this.child.send({ type: 'stop' });
      this.child.once('exit', onExit);
      opts.signal?.addEventListener('abort', onStop, { once: true });
      this.child.once(
        'message',
        (m: { type: string; result: LoopResult & { byStatus: [number, number][] } }) => {
          this.child.off('exit', onExit);
          opts.signal?.removeEventListener('abort', onStop);
          resolve({ ...m.result, byStatus: new Map(m.result.byStatus) });
        },
      );
      this.child.send({
        type: 'run',
        port: opts.port,
        concurrency: opts.concurrency,
        durationMs: opts.durationMs,
        request: { ...request, ...(body ? { bodyText: body(0) } : {}) },
      });
    });
  }

  close(): void {
    this.child.disconnect();
  }
}

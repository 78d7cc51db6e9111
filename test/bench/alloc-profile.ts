/**
 * Where a process allocates, garbage included: V8's sampling heap profiler over the inspector protocol,
 * asked to keep the samples of objects the minor and major GCs collected. (`node --heap-prof` keeps only
 * what is still alive at exit, which says what is retained, not what keeps the scavenger busy.)
 *
 * The process must run with `--inspect=127.0.0.1:<port>` (loopback only). A diagnostic for the benches:
 * gateway-profile.bench.ts uses it with NODELOAD_BENCH_ALLOC_PROFILE=1;
 * loop.bench.ts samples itself in-process and prints the same table.
 */
import { writeFileSync } from 'node:fs';
import WebSocket from 'ws';

/** A node of V8's sampling heap profile (HeapProfiler.stopSampling). */
export interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Connects to the inspector on `port` and starts sampling every `intervalBytes` allocated. */
export async function startAllocationSampling(
  port: number,
  intervalBytes = 16_384,
): Promise<{ stop(file: string): Promise<SamplingNode> }> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, { resolve(result: unknown): void; reject(err: Error): void }>();
  // The process exiting mid-profile closes the socket: the calls waiting on it fail instead of hanging.
  socket.on('error', () => {});
  socket.on('close', () => {
    for (const call of pending.values()) call.reject(new Error('the inspector connection closed'));
    pending.clear();
  });
  socket.on('message', (data: Buffer) => {
    const msg = JSON.parse(data.toString('utf8')) as { id?: number; result?: unknown; error?: unknown };
    const call = msg.id === undefined ? undefined : pending.get(msg.id);
    if (!call || msg.id === undefined) return;
    pending.delete(msg.id);
    if (msg.error) call.reject(new Error(JSON.stringify(msg.error)));
    else call.resolve(msg.result);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call('HeapProfiler.enable');
  await call('HeapProfiler.startSampling', {
    samplingInterval: intervalBytes,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    async stop(file) {
      const { profile } = (await call('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
      socket.close();
      writeFileSync(file, JSON.stringify(profile));
      return profile.head;
    },
  };
}

/**
 * Bytes allocated per function (self) in a sampling heap profile, largest first, per pod scheduled.
 * Sites carry the column too: a bundle puts a module's functions on one line.
 */
export function allocationTable(root: SamplingNode, pods: number, top = 25): string {
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (n: SamplingNode) => {
    const { functionName, url, lineNumber, columnNumber } = n.callFrame;
    const site = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}:${columnNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
    total += n.selfSize;
    for (const c of n.children) walk(c);
  };
  walk(root);
  const rows = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `allocated while scheduling: ${(total / 2 ** 20).toFixed(1)} MiB sampled, ${(total / pods / 1024).toFixed(1)} KiB per pod`,
    '| KiB per pod | share | where |',
    '| --: | --: | --- |',
    ...rows.map(
      ([site, b]) => `| ${(b / pods / 1024).toFixed(1)} | ${((100 * b) / total).toFixed(1)} % | ${site} |`,
    ),
  ].join('\n');
}

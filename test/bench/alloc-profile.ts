/**
 * Where a process allocates, garbage included: V8's sampling heap profiler over the inspector protocol,
 * asked to keep the samples of objects the minor and major GCs collected. (`node --heap-prof` keeps only
 * what is still alive at exit, which says what is retained, not what keeps the scavenger busy.)
 *
 * The process must run with `--inspect=127.0.0.1:<port>` (loopback only). A diagnostic for the benches:
 * gateway-profile.bench.ts uses it with NODELOAD_BENCH_ALLOC_PROFILE=1.
 */
import { writeFileSync } from 'node:fs';
import WebSocket from 'ws';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

interface AllocationSite {
  site: string;
  bytes: number;
}

/** Connects to the inspector on `port` and starts sampling every `intervalBytes` allocated. */
export async function startAllocationSampling(
  port: number,
  intervalBytes = 16_384,
): Promise<{ stop(file: string): Promise<AllocationSite[]> }> {
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
  const pending = new Map<number, (result: unknown) => void>();
  // The process exiting mid-profile closes the socket: the calls waiting on it fail instead of hanging.
  socket.on('error', () => {});
  socket.on('close', () => {
    for (const done of pending.values()) done(Promise.reject(new Error('the inspector connection closed')));
    pending.clear();
  });
  socket.on('message', (data: Buffer) => {
    const msg = JSON.parse(data.toString('utf8')) as { id?: number; result?: unknown; error?: unknown };
    if (msg.id === undefined) return;
    const done = pending.get(msg.id);
    pending.delete(msg.id);
    done?.(msg.error ? Promise.reject(new Error(JSON.stringify(msg.error))) : msg.result);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
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
      const { profile } = (await call('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
      socket.close();
      writeFileSync(file, JSON.stringify(profile));
      return allocationSites(profile.head);
    },
  };
}

/** Bytes allocated per function (self), largest first. */
function allocationSites(head: ProfileNode): AllocationSite[] {
  const bytes = new Map<string, number>();
  const walk = (n: ProfileNode) => {
    if (n.selfSize > 0) {
      const f = n.callFrame;
      const site = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber}:${f.columnNumber}`;
      bytes.set(site, (bytes.get(site) ?? 0) + n.selfSize);
    }
    for (const c of n.children) walk(c);
  };
  walk(head);
  return [...bytes].map(([site, b]) => ({ site, bytes: b })).sort((a, b) => b.bytes - a.bytes);
}

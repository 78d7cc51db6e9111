// The ceiling for the scheduler bench: a "scheduler" that decides nothing. It watches the bench namespace's
// pending pods of its schedulerName and binds each to a node fixed in advance (the bench nodes in turn, by the
// pod's number), under the same client limits as nodeload's binder (QPS 500, burst 1000, keep-alive
// connections, no cap on binds in flight). What it reaches is what the API server, the creator and this
// machine allow; the schedulers' rates are reported as a fraction of it.
//
// Run as a child process by startBareBinder (its CPU and memory are its own): prints {"ready":true} once the
// watch is open. Env: BENCH_APISERVER, BENCH_CA, BENCH_CERT, BENCH_KEY, BENCH_NAMESPACE, BENCH_NODES,
// BENCH_SCHEDULER_NAME.
import { readFileSync } from 'node:fs';
import https from 'node:https';

const env = (k: string): string => {
  const v = process.env[k];
  if (!v) throw new Error(`bare binder: ${k} is not set`);
  return v;
};

const server = new URL(env('BENCH_APISERVER'));
if (server.hostname !== '127.0.0.1') throw new Error(`refusing a non-loopback API server: ${server.host}`);
const namespace = env('BENCH_NAMESPACE');
const nodes = Number(env('BENCH_NODES'));
const schedulerName = env('BENCH_SCHEDULER_NAME');
const agent = new https.Agent({
  keepAlive: true,
  ca: readFileSync(env('BENCH_CA')),
  cert: readFileSync(env('BENCH_CERT')),
  key: readFileSync(env('BENCH_KEY')),
});

// client-go's token bucket: `burst` tokens, refilled at `qps` per second.
const QPS = 500;
const BURST = 1000;
let tokens = BURST;
let refilledAt = performance.now();
const waiting: (() => void)[] = [];
function take(): Promise<void> {
  const now = performance.now();
  tokens = Math.min(BURST, tokens + ((now - refilledAt) / 1000) * QPS);
  refilledAt = now;
  if (tokens >= 1 && waiting.length === 0) {
    tokens -= 1;
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (waiting.length === 1) setTimeout(drain, Math.ceil(((1 - tokens) / QPS) * 1000));
  });
}
function drain(): void {
  const now = performance.now();
  tokens = Math.min(BURST, tokens + ((now - refilledAt) / 1000) * QPS);
  refilledAt = now;
  while (tokens >= 1 && waiting.length) {
    tokens -= 1;
    waiting.shift()?.();
  }
  if (waiting.length) setTimeout(drain, Math.ceil(((1 - tokens) / QPS) * 1000));
}

const seen = new Set<string>();
const nodeFor = (pod: string): string => {
  const n = Number(/(\d+)$/.exec(pod)?.[1] ?? 0);
  return `bench-node-${String(n % nodes).padStart(3, '0')}`;
};

/** Binds with retries: a keep-alive socket the API server closed while this process was stopped (backlog
 * phases) fails its next request with "socket hang up", and the pod must not be lost for it. */
function bind(pod: string, attempt = 1): void {
  const body = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: pod },
    target: { apiVersion: 'v1', kind: 'Node', name: nodeFor(pod) },
  });
  const retry = (why: string) => {
    if (attempt >= 5) console.error(`bind ${pod}: ${why}; giving up`);
    else setTimeout(() => bind(pod, attempt + 1), 50 * attempt);
  };
  void take().then(() => {
    const req = https.request(
      new URL(`/api/v1/namespaces/${namespace}/pods/${pod}/binding`, server),
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status === 429 || status >= 500) retry(`HTTP ${status}`);
          else if (status !== 201) console.error(`bind ${pod}: HTTP ${status}`);
        });
      },
    );
    req.on('error', (err) => retry(err.message));
    req.end(body);
  });
}

function watch(): void {
  const query = new URLSearchParams({
    watch: 'true',
    fieldSelector: `spec.schedulerName=${schedulerName},spec.nodeName=`,
    allowWatchBookmarks: 'false',
  });
  const req = https.get(
    new URL(`/api/v1/namespaces/${namespace}/pods?${query}`, server),
    { agent },
    (res) => {
      if (res.statusCode !== 200) {
        console.error(`watch: HTTP ${res.statusCode}`);
        setTimeout(watch, 500);
        return;
      }
      console.log(JSON.stringify({ ready: true }));
      let rest = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          if (!line) continue;
          const ev = JSON.parse(line) as { type: string; object: { metadata?: { name?: string } } };
          const name = ev.object.metadata?.name;
          if (ev.type === 'ADDED' && name && !seen.has(name)) {
            seen.add(name);
            bind(name);
          }
          if (ev.type === 'DELETED' && name) seen.delete(name);
        }
      });
      res.on('end', () => setTimeout(watch, 100));
    },
  );
  req.on('error', () => setTimeout(watch, 500));
}

watch();

/**
 * A gateway-shaped server on fixture data, for looking at the dashboard at any scale without a
 * cluster: the real schema and resolvers (src/graphql) over a FixtureCluster of N nodes with varied
 * load, three rules, pending pods and explained decisions, plus the real dashboard router.
 *
 *   npx tsx test/browser/fixture-server.ts [nodes=1000] [port=8090]   # then open http://127.0.0.1:8090/
 *
 * The browser tests use it for the 1,000-node check; the end-to-end test uses the real gateway.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { createGraphQLServer } from '../../src/graphql/server.js';
import {
  explainedDecision,
  FakeScheduling,
  FixtureCluster,
  fixtureSources,
} from '../../src/graphql/testing.js';
import { dashboardRouter } from '../../src/server/dashboard.js';
import { fakeUserPortAuth } from '../../src/server/testing.js';
import { rawNode, rawPod, rawRule } from '../kit/objects.js';

/** Deterministic pseudo-random numbers (mulberry32), so every run draws the same cluster. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const POOLS = ['web', 'batch', 'general'] as const;

export interface FixtureServer {
  url: string;
  cluster: FixtureCluster;
  scheduling: FakeScheduling;
  nodeNames: string[];
  /** Records one more explained decision for a new pending pod; returns its id. */
  decide(pod: string): string;
  close(): Promise<void>;
}

export async function startFixtureServer(opts: {
  nodes: number;
  port?: number;
  dashboardDir?: string;
}): Promise<FixtureServer> {
  const rand = prng(42);
  const cluster = new FixtureCluster();
  const scheduling = new FakeScheduling(cluster);
  const nodeNames: string[] = [];
  const objects = [];
  for (let i = 0; i < opts.nodes; i++) {
    const pool = POOLS[i % 3]!;
    const name = `${pool}-${String(Math.floor(i / 3)).padStart(3, '0')}`;
    nodeNames.push(name);
    const cpu = [4, 8, 16][Math.floor(rand() * 3)]!;
    const ready = rand() > 0.01;
    objects.push(rawNode(name, { cpu: String(cpu), memory: `${cpu * 4}Gi`, labels: { pool }, ready }));
    // Load skewed to the middle with a hot tail: some nodes sit over the thresholds.
    const cpuTarget = Math.min(0.99, (rand() + rand() + rand()) / 4.2 + (rand() < 0.05 ? 0.45 : 0));
    const memTarget = Math.min(0.99, (rand() + rand()) / 3 + (rand() < 0.03 ? 0.45 : 0));
    const pods = 2 + Math.floor(rand() * 4);
    for (let p = 0; p < pods; p++) {
      objects.push(
        rawPod('shop', `${name}-app-${p}`, {
          node: name,
          cpu: `${Math.round((cpu * 1000 * cpuTarget) / pods)}m`,
          memory: `${Math.round((cpu * 4 * 1024 * memTarget) / pods)}Mi`,
          labels: { tier: pool === 'web' ? 'web' : 'worker' },
        }),
      );
    }
  }
  objects.push(
    rawRule('shop', 'web-tier', {
      maxCPU: 70,
      maxMemory: 80,
      nodeSelector: { matchLabels: { pool: 'web' } },
      podSelector: { matchLabels: { tier: 'web' } },
    }),
    rawRule('shop', 'workers', {
      maxCPU: 85,
      maxMemory: 75,
      podSelector: { matchLabels: { tier: 'worker' } },
    }),
    rawRule('ml', 'training', {
      maxCPU: 60,
      maxMemory: 60,
      allowedNodes: nodeNames.filter((n) => n.startsWith('batch')).slice(0, 40),
      burst: { maxPlacements: 3, windowSeconds: 30 },
    }),
  );
  cluster.add(...objects);

  let podSeq = 0;
  const decide = (pod: string) => {
    const tier = podSeq++ % 4 === 0 ? 'worker' : 'web';
    cluster.add(
      rawPod('shop', pod, { cpu: `${200 + ((podSeq * 137) % 1800)}m`, memory: '512Mi', labels: { tier } }),
    );
    const decision = explainedDecision(cluster, 'shop', pod, {
      time: new Date().toISOString(),
      latencyMs: 2 + (podSeq % 7),
      algorithmMs: 0.8 + (podSeq % 5) / 3,
    });
    scheduling.record(decision);
    return decision.id;
  };
  for (let i = 0; i < 14; i++) decide(`web-${String(i).padStart(2, '0')}-x${i * 7}`);
  cluster.add(rawPod('ml', 'trainer-big', { cpu: '14', memory: '40Gi', labels: {} }));
  const stuck = explainedDecision(cluster, 'ml', 'trainer-big', { time: new Date().toISOString() });
  scheduling.record(stuck);
  scheduling.pending = [
    {
      namespace: 'ml',
      pod: 'trainer-big',
      queue: 'unschedulable',
      reason: stuck.message,
      since: new Date(Date.now() - 95_000).toISOString(),
      attempts: 4,
    },
    {
      namespace: 'shop',
      pod: 'web-canary',
      queue: 'backoff',
      reason: '0/3 nodes are available: 3 node(s) exceed rule web-tier cpu 70%.',
      since: new Date(Date.now() - 12_000).toISOString(),
      attempts: 2,
    },
    {
      namespace: 'shop',
      pod: 'web-next',
      queue: 'active',
      reason: '',
      since: new Date(Date.now() - 1_000).toISOString(),
      attempts: 0,
    },
  ];

  const graphql = createGraphQLServer({
    sources: fixtureSources(cluster, { scheduling }),
    log: pino({ level: 'silent' }),
    graphiql: false,
  });
  const app = express();
  // The user port's gate, tokenless as --anonymous-user-port on loopback (the server listens on 127.0.0.1).
  app.use(fakeUserPortAuth({ anonymous: true }).auth.middleware());
  app.use(graphql.router);
  app.use(dashboardRouter(opts.dashboardDir ? { dir: opts.dashboardDir } : {}));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    cluster,
    scheduling,
    nodeNames,
    decide,
    async close() {
      await graphql.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      cluster.stop();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const nodes = Number(process.argv[2] ?? 1000);
  const fixture = await startFixtureServer({ nodes, port: Number(process.argv[3] ?? 8090) });
  let n = 0;
  setInterval(() => fixture.decide(`live-${n++}`), 2500);
  process.stdout.write(`fixture dashboard with ${nodes} nodes at ${fixture.url}\n`);
}

// A server under test for webhook.bench.ts, in a process of its own so its memory and CPU are its own:
//
//   node --import tsx test/bench/webhook-target.ts raw       the anchor: node:https, read body, JSON.parse,
//                                                             answer an allowed AdmissionReview (with
//                                                             BENCH_ANSWER_PAD, a JSON patch of that many
//                                                             base64 bytes: the anchor sending nodeload's bytes)
//   node --import tsx test/bench/webhook-target.ts gateway   startGateway with only the webhook component,
//                                                             from dist/ (BENCH_GATEWAY_DIST)
//
// Configuration comes from BENCH_* variables; once serving, prints one JSON line {"port":N} on stdout.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function raw(): Promise<{ port: number; stop: () => Promise<void> }> {
  // One annotation whose value fills the patch out to about `pad` base64 characters.
  const pad = Number(process.env['BENCH_ANSWER_PAD'] ?? 0);
  const op = (value: string) => JSON.stringify([{ op: 'add', path: '/metadata/annotations/pad', value }]);
  const padded = op('x'.repeat(Math.max(0, Math.floor((pad * 3) / 4) - op('').length)));
  const patch = pad > 0 ? { patchType: 'JSONPatch', patch: Buffer.from(padded).toString('base64') } : {};
  // The answer serialised once around its uid, as nodeload's patch memo keeps it: per request only the
  // uid is written in, so the padded anchor pays for the bytes, not for serialising them again.
  const answer = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: '', allowed: true, ...patch },
  });
  const at = answer.indexOf('"uid":""') + '"uid":'.length;
  const [head, tail] = [answer.slice(0, at), answer.slice(at + 2)];
  // Same TLS settings as the gateway's kube-facing server (src/server/tls-server.ts).
  const server = https.createServer(
    {
      cert: readFileSync(env('BENCH_TLS_CERT')),
      key: readFileSync(env('BENCH_TLS_KEY')),
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let uid = '';
        try {
          uid = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } }).request
            .uid;
        } catch {
          res.writeHead(400).end();
          return;
        }
        const body =
          pad > 0
            ? head + JSON.stringify(uid) + tail
            : JSON.stringify({
                apiVersion: 'admission.k8s.io/v1',
                kind: 'AdmissionReview',
                response: { uid, allowed: true },
              });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    },
  );
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

async function gateway(): Promise<{ port: number; stop: () => Promise<void> }> {
  // Loaded here, not at the top: the raw anchor's memory must not include the gateway's modules. From
  // dist/ (BENCH_GATEWAY_DIST, compiled by the bench), as the image runs them, not transpiled by tsx.
  const dist = (module: string) => import(pathToFileURL(path.join(env('BENCH_GATEWAY_DIST'), module)).href);
  const [{ default: pino }, { startGateway }, { parseConfig }, { createLogger }, { webhookComponent }] =
    (await Promise.all([
      import('pino'),
      dist('app.js'),
      dist('config.js'),
      dist('server/log.js'),
      dist('webhook/component.js'),
    ])) as [
      typeof import('pino'),
      typeof import('../../src/app.js'),
      typeof import('../../src/config.js'),
      typeof import('../../src/server/log.js'),
      typeof import('../../src/webhook/component.js'),
    ];
  const logLevel = process.env['BENCH_LOG_LEVEL'] ?? 'info';
  const config = parseConfig({
    kubeconfig: env('BENCH_KUBECONFIG'),
    httpPort: 0,
    httpsPort: 0,
    bindAddress: '127.0.0.1',
    tlsCertFile: env('BENCH_TLS_CERT'),
    tlsKeyFile: env('BENCH_TLS_KEY'),
    leaderElect: false,
    installCrd: false,
    logLevel,
  });
  // Logs go to a file, as a container's stdout would: their cost is part of what is measured.
  const destination = pino.destination({ dest: env('BENCH_GATEWAY_LOG'), sync: false, mkdir: true });
  const gw = await startGateway(config, [webhookComponent], { log: createLogger(logLevel, destination) });
  await gw.cache.ready();
  const rules = Number(env('BENCH_EXPECT_RULES'));
  const nodes = Number(env('BENCH_EXPECT_NODES'));
  const deadline = Date.now() + 60_000;
  while (gw.cache.rules.size < rules || gw.cache.nodes.size < nodes) {
    if (Date.now() > deadline) {
      throw new Error(
        `cache has ${gw.cache.rules.size}/${rules} rules, ${gw.cache.nodes.size}/${nodes} nodes`,
      );
    }
    await sleep(100);
  }
  if (gw.httpsPort === undefined) throw new Error('the gateway serves no HTTPS port');
  return {
    port: gw.httpsPort,
    stop: async () => {
      await gw.stop();
      destination.flushSync();
    },
  };
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  if (mode !== 'raw' && mode !== 'gateway') throw new Error('usage: webhook-target.ts raw|gateway');
  const target = mode === 'raw' ? await raw() : await gateway();
  process.stdout.write(`${JSON.stringify({ port: target.port })}\n`);
  process.once('SIGTERM', () => {
    void target.stop().then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `webhook-target: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});

/**
 * GraphQL on the user-facing port over HTTPS with --user-client-ca-file: a graphql-ws connection is
 * authenticated by the upgrade's client certificate as an HTTP request is, and a stream a certificate
 * let in (WebSocket or SSE) is not ended by the token it may carry too — that token is never watched.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Client, createClient } from 'graphql-ws';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { rawNode } from '../../test/kit/objects.js';
import type { OnRevoked } from '../server/stream-revalidation.js';
import { fakeUserPortAuth } from '../server/testing.js';
import { TestPki } from '../server/testing-pki.js';
import { createTlsServer } from '../server/tls-server.js';
import { createUserApp, finishApp } from '../server/user-app.js';
import { createGraphQLServer } from './server.js';
import { FixtureCluster, firstResult, fixtureSources, until } from './testing.js';

const log = pino({ level: 'silent' });

const users = {
  'tok-alice': { name: 'alice', can: ['list nodes', 'list pods'] },
  'tok-viewer': { name: 'viewer', can: ['list nodes', 'list pods'] },
};

/** Records what each stream is watched with. */
class RecordingStreamWatch {
  readonly watched: (string | undefined)[] = [];
  watch(authorization: string | undefined, _onRevoked: OnRevoked): () => void {
    this.watched.push(authorization);
    return () => {};
  }
}

let pki: TestPki;
const closers: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  pki = new TestPki();
  pki.ca('user-ca');
  pki.ca('other-ca');
  pki.leaf('server', 'nodeload', 'user-ca', 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n');
  pki.leaf('alice', '/CN=alice/O=dev', 'user-ca');
  pki.leaf('alice-elsewhere', '/CN=alice', 'other-ca');
});
afterAll(() => pki.dispose());
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The user app with GraphQL (HTTP, SSE, graphql-ws) over HTTPS on loopback, behind the gate. */
async function serve() {
  const cluster = new FixtureCluster().add(rawNode('node-a'));
  closers.push(() => cluster.stop());
  const streamWatch = new RecordingStreamWatch();
  const { auth } = fakeUserPortAuth({ users, clientCas: [pki.cert('user-ca')] });
  const graphql = createGraphQLServer({ sources: fixtureSources(cluster), log, streamWatch });
  const app = createUserApp({ registry: new Registry(), readiness: () => ({ ready: true }), auth });
  finishApp(app, log, [graphql.router]);
  const tls = await createTlsServer({
    certFile: path.join(pki.dir, 'server.crt'),
    keyFile: path.join(pki.dir, 'server.key'),
    handler: app,
    log,
  });
  graphql.attachWebSocket(tls.server as never, { auth, streamWatch });
  closers.push(
    () => tls.close(),
    () => graphql.close(),
  );
  await new Promise<void>((r) => tls.server.listen(0, '127.0.0.1', r));
  return { port: (tls.server.address() as AddressInfo).port, streamWatch };
}

function clientTls(leaf: string | undefined) {
  return {
    ca: pki.pem('user-ca'),
    ...(leaf ? { cert: pki.pem(leaf), key: readFileSync(path.join(pki.dir, `${leaf}.key`)) } : {}),
  };
}

function wsClient(port: number, opts: { cert?: string; token?: string }): Client {
  const tls = clientTls(opts.cert);
  const c = createClient({
    url: `wss://127.0.0.1:${port}/graphql`,
    webSocketImpl: class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, tls);
      }
    },
    retryAttempts: 0,
    lazy: true,
    ...(opts.token ? { connectionParams: { authorization: `Bearer ${opts.token}` } } : {}),
  });
  closers.push(() => c.dispose() as Promise<void>);
  return c;
}

describe('graphql-ws over HTTPS with --user-client-ca-file', () => {
  it.each([
    ['a certificate of the CA', { cert: 'alice' }, { data: { nodes: [{ name: 'node-a' }] } }, []],
    [
      'a certificate of the CA and an unknown token: the certificate, the token never watched',
      { cert: 'alice', token: 'stolen' },
      { data: { nodes: [{ name: 'node-a' }] } },
      [],
    ],
    [
      'a token: watched',
      { token: 'tok-viewer' },
      { data: { nodes: [{ name: 'node-a' }] } },
      ['Bearer tok-viewer'],
    ],
    [
      'a certificate of another CA',
      { cert: 'alice-elsewhere' },
      { closed: 4401, reason: expect.stringContaining('not signed by the --user-client-ca-file CA') },
      [],
    ],
  ])('%s', async (_what, opts, want, watched) => {
    const { port, streamWatch } = await serve();
    expect(await firstResult(wsClient(port, opts), '{ nodes { name } }')).toEqual(want);
    expect(streamWatch.watched).toEqual(watched);
  });
});

describe('an SSE subscription over HTTPS with --user-client-ca-file', () => {
  /** Opens a subscription; resolves with its status once the response has begun (the stream set up). */
  function subscribe(port: number, opts: { cert?: string; token?: string }): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/graphql',
          method: 'POST',
          agent: false,
          ...clientTls(opts.cert),
          headers: {
            'content-type': 'application/json',
            accept: 'text/event-stream',
            ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          },
        },
        (res) => {
          closers.push(() => void res.destroy());
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ query: 'subscription { schedulingEvents { pod } }' }));
    });
  }

  it('watches the token of a token-authenticated stream, not the one a certificate-authenticated stream carries', async () => {
    const { port, streamWatch } = await serve();
    expect(await subscribe(port, { cert: 'alice', token: 'stolen' })).toBe(200);
    expect(await subscribe(port, { token: 'tok-viewer' })).toBe(200);
    await until(() => streamWatch.watched.length > 0, 'the token stream watched');
    expect(streamWatch.watched).toEqual(['Bearer tok-viewer']);
  });
});

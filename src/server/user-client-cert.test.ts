/**
 * Client certificates on the user-facing port (--user-client-ca-file), served over HTTPS on loopback as
 * the gateway serves it (createTlsServer): a certificate the CA signed authenticates as its CN with its O
 * values as groups, tried before the token as kube-apiserver does; one that does not verify is a 401
 * (never anonymous); without the CA flag certificates are ignored; a CA file changed while serving is
 * re-read with the serving certificate (reload() called here, as a change of the files calls it).
 * TokenReview and SubjectAccessReview are the fakes of testing.ts.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Router } from 'express';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS } from './access.js';
import { NO_TOKEN_MESSAGE } from './authn.js';
import { loadClientCas } from './client-cert.js';
import type { Logger } from './log.js';
import { fakeUserPortAuth } from './testing.js';
import { TestPki } from './testing-pki.js';
import { createTlsServer, type TlsServer } from './tls-server.js';
import { createUserApp, finishApp } from './user-app.js';
import { accessOf, sendReadable } from './user-auth.js';

const log = pino({ level: 'silent' });

const users = {
  'tok-alice': { name: 'alice', can: ['list pods in shop'] },
  'tok-bob': { name: 'bob', can: ['list pods'] },
  'tok-admin': { name: 'admin', can: ['get /metrics', 'list pods'] },
};

const items = [
  { namespace: 'shop', name: 'a' },
  { namespace: 'ops', name: 'b' },
];

let pki: TestPki;

beforeAll(() => {
  pki = new TestPki();
  pki.ca('user-ca');
  pki.ca('other-ca');
  pki.ca('user-intermediate', 'user-ca');
  pki.leaf('server', 'nodeload', 'user-ca', 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n');
  pki.leaf('alice', '/CN=alice/O=dev/O=ops, team', 'user-ca');
  pki.leaf('alice-elsewhere', '/CN=alice/O=system:masters', 'other-ca');
  pki.leaf('bob-via-intermediate', '/CN=bob/O=dev', 'user-intermediate');
  pki.leaf('alice-server-only', '/CN=alice', 'user-ca', 'extendedKeyUsage=serverAuth\n');
  pki.leaf('no-cn', '/O=dev', 'user-ca');
});

afterAll(() => pki.dispose());

const servers: TlsServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/**
 * The user app over HTTPS on loopback, with a route answering who the gate let in. `caFile`: the CAs
 * are that file's, re-read by the server as the gateway's are.
 */
async function serve(opts: { clientCa: boolean; anonymous?: boolean; caFile?: string; log?: Logger }) {
  const clientCa = opts.caFile
    ? { file: opts.caFile, flag: '--user-client-ca-file', initial: loadClientCas(opts.caFile, 'test') }
    : undefined;
  const fake = fakeUserPortAuth({
    users,
    ...(opts.anonymous ? { anonymous: true } : {}),
    ...(opts.clientCa ? { clientCas: clientCa?.initial ?? [pki.cert('user-ca')] } : {}),
  });
  const app = createUserApp({
    registry: new Registry(),
    readiness: () => ({ ready: true }),
    auth: fake.auth,
  });
  const routes = Router();
  routes.get('/test/whoami', (req, res) => {
    res.json({ user: accessOf(req)?.userName });
  });
  routes.get('/test/pods', async (req, res) => {
    await sendReadable(req, res, PERMISSIONS.listPods, items, (i) => i.namespace);
  });
  finishApp(app, log, [routes]);
  const tls = await createTlsServer({
    certFile: path.join(pki.dir, 'server.crt'),
    keyFile: path.join(pki.dir, 'server.key'),
    // Asked for even without the CA, to show the gate ignores it then.
    requestCert: true,
    ...(clientCa ? { clientCa: { ...clientCa, use: (cas) => fake.auth.useClientCas(cas) } } : {}),
    handler: app,
    log: opts.log ?? log,
  });
  servers.push(tls);
  await new Promise<void>((r) => tls.server.listen(0, '127.0.0.1', r));
  return { ...fake, tls, base: `https://127.0.0.1:${(tls.server.address() as AddressInfo).port}` };
}

/** TLS options of a client presenting `chain` (leaf first; its key is the leaf's). */
function clientTls(chain: readonly string[] | undefined) {
  const leaf = chain?.[0];
  return {
    ca: pki.pem('user-ca'),
    ...(leaf
      ? { cert: chain.map((n) => pki.pem(n)).join(''), key: readFileSync(path.join(pki.dir, `${leaf}.key`)) }
      : {}),
  };
}

function get(
  url: string,
  opts: { chain?: readonly string[]; token?: string | undefined; agent?: https.Agent } = {},
): Promise<{ status: number; body: { user?: string; message?: string } & Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    https
      .get(
        url,
        {
          ...clientTls(opts.chain),
          agent: opts.agent ?? false,
          headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      )
      .on('error', reject);
  });
}

const NOT_SIGNED = 'client certificate is not signed by the --user-client-ca-file CA';

describe('--user-client-ca-file: a client certificate authenticates as kube-apiserver reads it', () => {
  it.each([
    ['a certificate of the CA', ['alice'], undefined, 200, 'alice'],
    [
      'a certificate through an intermediate it sends',
      ['bob-via-intermediate', 'user-intermediate'],
      undefined,
      200,
      'bob',
    ],
    [
      'a certificate of the CA with an unknown token: the certificate, tried first',
      ['alice'],
      'stolen',
      200,
      'alice',
    ],
    [
      "a certificate of the CA with another user's token: the certificate",
      ['alice'],
      'tok-admin',
      200,
      'alice',
    ],
    ['a token, no certificate', undefined, 'tok-admin', 200, 'admin'],
    [
      'a certificate of another CA with a valid token: the token',
      ['alice-elsewhere'],
      'tok-admin',
      200,
      'admin',
    ],
    ['a certificate of another CA', ['alice-elsewhere'], undefined, 401, NOT_SIGNED],
    [
      'a certificate through an intermediate it does not send',
      ['bob-via-intermediate'],
      undefined,
      401,
      NOT_SIGNED,
    ],
    [
      'a certificate of another CA with an unknown token: both reasons',
      ['alice-elsewhere'],
      'stolen',
      401,
      `invalid bearer token: token not known; ${NOT_SIGNED}`,
    ],
    [
      'a certificate only for servers',
      ['alice-server-only'],
      undefined,
      401,
      'not for client authentication',
    ],
    ['a certificate without a CN', ['no-cn'], undefined, 401, 'client certificate has no subject CN'],
    [
      'no certificate and no token',
      undefined,
      undefined,
      401,
      `${NO_TOKEN_MESSAGE}, or present a client certificate`,
    ],
  ] as const)('%s → %i %s', async (_what, chain, token, status, said) => {
    const { base, tokenReviews } = await serve({ clientCa: true });
    const res = await get(`${base}/test/whoami`, { chain, token });
    expect(res.status).toBe(status);
    if (status === 200) expect(res.body).toEqual({ user: said });
    else {
      expect(res.body).toMatchObject({
        error: 'Unauthorized',
        errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
      });
      expect(res.body.message).toContain(said);
    }
    // A certificate that authenticates leaves the token unreviewed.
    if (status === 200 && said !== 'admin') expect(tokenReviews).toEqual([]);
  });

  it('authorizes the certificate user through SubjectAccessReview: the CN, its O values and system:authenticated', async () => {
    const { base, accessReviews } = await serve({ clientCa: true });
    const pods = await get(`${base}/test/pods`, { chain: ['alice'] });
    expect(pods.body).toEqual([{ namespace: 'shop', name: 'a' }]);
    const metrics = await get(`${base}/metrics`, { chain: ['alice'] });
    expect(metrics.status).toBe(403);
    expect(metrics.body.message).toBe('forbidden: user "alice" lacks get /metrics');
    expect(accessReviews.length).toBeGreaterThan(0);
    for (const review of accessReviews) {
      expect(review.spec).toMatchObject({
        user: 'alice',
        groups: ['dev', 'ops, team', 'system:authenticated'],
      });
      expect(review.spec.extra).toBeUndefined();
    }
  });

  it('keeps the verdict of a connection for its next requests', async () => {
    const { base } = await serve({ clientCa: true });
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ...clientTls(['alice']) });
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await get(`${base}/test/whoami`, { chain: ['alice'], agent }));
      expect(answers.map((a) => [a.status, a.body.user])).toEqual([
        [200, 'alice'],
        [200, 'alice'],
        [200, 'alice'],
      ]);
    } finally {
      agent.destroy();
    }
    // The chain is read and verified once per connection (it costs more than a request).
    const { auth } = fakeUserPortAuth({ users, clientCas: [pki.cert('user-ca')] });
    const leaf = pki.cert('alice');
    const socket = {
      reads: 0,
      getPeerCertificate() {
        this.reads++;
        return { raw: leaf.raw, fingerprint256: leaf.fingerprint256 };
      },
    };
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await auth.authenticate(undefined, '127.0.0.1', socket));
    expect(results.map((r) => r.ok && [r.credential, r.access.userName])).toEqual([
      ['certificate', 'alice'],
      ['certificate', 'alice'],
      ['certificate', 'alice'],
    ]);
    expect(socket.reads).toBe(1);
  });

  it('refuses a certificate that does not verify even where tokenless requests are served anonymously', async () => {
    const { base } = await serve({ clientCa: true, anonymous: true });
    const refused = await get(`${base}/test/whoami`, { chain: ['alice-elsewhere'] });
    expect(refused.status).toBe(401);
    expect(refused.body.message).toContain(NOT_SIGNED);
    // Without a certificate the loopback anonymous user still is.
    expect((await get(`${base}/test/whoami`)).body).toEqual({ user: 'anonymous (loopback)' });
  });
});

describe('without --user-client-ca-file, client certificates are ignored', () => {
  it.each([
    ['a certificate alone', ['alice'], undefined, 401, NO_TOKEN_MESSAGE],
    ['a certificate and a token', ['alice'], 'tok-admin', 200, 'admin'],
    ['a certificate of another CA and a token', ['alice-elsewhere'], 'tok-bob', 200, 'bob'],
    ['a token alone', undefined, 'tok-bob', 200, 'bob'],
  ] as const)('%s → %i %s', async (_what, chain, token, status, said) => {
    const { base } = await serve({ clientCa: false });
    const res = await get(`${base}/test/whoami`, { chain, token });
    expect(res.status).toBe(status);
    if (status === 200) expect(res.body).toEqual({ user: said });
    else expect(res.body.message).toBe(said);
  });
});

describe('--user-client-ca-file changed while serving', () => {
  it('trusts the rotated CA from the next request on, and keeps the last good bundle when the file goes bad', async () => {
    const caFile = path.join(pki.dir, 'rotating-ca.crt');
    writeFileSync(caFile, pki.pem('user-ca'));
    const logged: { level: number; msg: string; err?: { message: string } }[] = [];
    const { base, tls } = await serve({
      clientCa: true,
      caFile,
      log: pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) }),
    });
    const whoami = (chain: readonly string[], agent?: https.Agent) =>
      get(`${base}/test/whoami`, { chain, ...(agent ? { agent } : {}) }).then((r) => [r.status, r.body]);
    // One kept-alive connection with the other CA's certificate: refused, then let in on the same socket.
    const elsewhere = new https.Agent({ keepAlive: true, maxSockets: 1, ...clientTls(['alice-elsewhere']) });
    const sockets = new Set<unknown>();
    elsewhere.on('free', (socket) => sockets.add(socket));
    try {
      expect(await whoami(['alice'])).toEqual([200, { user: 'alice' }]);
      expect(await whoami(['alice-elsewhere'], elsewhere)).toMatchObject([
        401,
        { message: expect.stringContaining(NOT_SIGNED) },
      ]);

      writeFileSync(caFile, pki.pem('other-ca'));
      await tls.reload();
      expect(await whoami(['alice-elsewhere'], elsewhere)).toEqual([200, { user: 'alice' }]);
      expect(sockets.size).toBe(1);
      expect(await whoami(['alice'])).toMatchObject([401, { message: expect.stringContaining(NOT_SIGNED) }]);
      expect(logged.map((l) => l.msg)).toContain('client CA bundle loaded');

      // Unreadable or without a certificate: the last good bundle stays, and a warning says why.
      for (const [breakIt, why] of [
        [() => writeFileSync(caFile, 'not a certificate'), 'holds no PEM certificate'],
        [() => rmSync(caFile), 'cannot read'],
      ] as const) {
        breakIt();
        await tls.reload();
        expect(logged).toContainEqual(
          expect.objectContaining({
            level: 40,
            msg: 'client CA bundle reload failed; keeping the previous one',
            err: expect.objectContaining({ message: expect.stringContaining(why) }),
          }),
        );
        expect(await whoami(['alice-elsewhere'])).toEqual([200, { user: 'alice' }]);
      }

      writeFileSync(caFile, pki.pem('user-ca') + pki.pem('other-ca'));
      await tls.reload();
      expect(await whoami(['alice'])).toEqual([200, { user: 'alice' }]);
      expect(await whoami(['alice-elsewhere'], elsewhere)).toEqual([200, { user: 'alice' }]);
    } finally {
      elsewhere.destroy();
    }
  });
});

// The user port over HTTPS with client certificates (--user-tls-cert-file, --user-tls-key-file,
// --user-client-ca-file), started as main starts it (startGateway) against the real API server: a
// certificate the CA signed is the user named by its CN, in the groups named by its O values, and RBAC
// bound to that group decides through the real SubjectAccessReview; a certificate of another CA is a
// 401, and a ServiceAccount token still authenticates over HTTPS.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { TestPki } from '../../src/server/testing-pki.js';
import { coreApi, kubeConfig, uniqueName } from './context.js';

let gateway: Gateway;
let pki: TestPki;
const group = uniqueName('it-cert-group');
const bindingName = uniqueName('nodeload-it-user-tls');
const namespace = 'default';
const serviceAccount = uniqueName('it-user-tls');

/** GET on the gateway's user port as the client `leaf` (a name of the test PKI) and/or with a token. */
function get(
  urlPath: string,
  opts: { leaf?: string; token?: string } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(
        {
          host: '127.0.0.1',
          port: gateway.httpPort,
          path: urlPath,
          agent: false,
          ca: pki.pem('user-ca'),
          ...(opts.leaf
            ? { cert: pki.pem(opts.leaf), key: readFileSync(path.join(pki.dir, `${opts.leaf}.key`)) }
            : {}),
          headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      )
      .on('error', reject);
  });
}

beforeAll(async () => {
  pki = new TestPki();
  pki.ca('user-ca');
  pki.ca('other-ca');
  pki.leaf('server', 'nodeload', 'user-ca', 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n');
  pki.leaf('member', `/CN=it-cert-user/O=${group}`, 'user-ca');
  pki.leaf('outsider', '/CN=it-cert-outsider/O=it-no-such-group', 'user-ca');
  pki.leaf('member-elsewhere', `/CN=it-cert-user/O=${group}`, 'other-ca');

  // The group (an O value of the member's certificate) may read /metrics; nobody else here.
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: { metadata: { name: bindingName }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: bindingName },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: bindingName },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
    },
  });
  await coreApi().createNamespacedServiceAccount({ namespace, body: { metadata: { name: serviceAccount } } });

  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  const config = parseConfig({
    kubeconfig: inject('kubeconfig'),
    httpPort: 0,
    bindAddress: '127.0.0.1',
    leaderElect: false,
    identity: uniqueName('it-user-tls'),
    installCrd: false,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
    userTlsCertFile: path.join(pki.dir, 'server.crt'),
    userTlsKeyFile: path.join(pki.dir, 'server.key'),
    userClientCaFile: path.join(pki.dir, 'user-ca.crt'),
  });
  gateway = await startGateway(config, []);
});

afterAll(async () => {
  await gateway?.stop();
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.deleteClusterRoleBinding({ name: bindingName }).catch(() => {});
  await rbac.deleteClusterRole({ name: bindingName }).catch(() => {});
  await coreApi()
    .deleteNamespacedServiceAccount({ name: serviceAccount, namespace })
    .catch(() => {});
  pki?.dispose();
});

describe('the user port over HTTPS with --user-client-ca-file', () => {
  it('authenticates a certificate of the CA as its CN in its O groups, authorized by RBAC on that group', async () => {
    expect(await get('/healthz')).toEqual({ status: 200, text: 'ok' });
    const member = await get('/metrics', { leaf: 'member' });
    expect(member.status).toBe(200);
    expect(member.text).toContain('nodeload_');
    const outsider = await get('/metrics', { leaf: 'outsider' });
    expect(outsider.status).toBe(403);
    expect(JSON.parse(outsider.text).message).toBe('forbidden: user "it-cert-outsider" lacks get /metrics');
  });

  it('answers 401 to a certificate of another CA and to a request with neither certificate nor token', async () => {
    const elsewhere = await get('/metrics', { leaf: 'member-elsewhere' });
    expect(elsewhere.status).toBe(401);
    expect(JSON.parse(elsewhere.text).message).toContain(
      'client certificate is not signed by the --user-client-ca-file CA',
    );
    const none = await get('/metrics');
    expect(none.status).toBe(401);
    expect(JSON.parse(none.text).message).toContain('or present a client certificate');
  });

  it('still reviews a bearer token without a certificate (TokenReview), and a certificate goes first', async () => {
    const request = await coreApi().createNamespacedServiceAccountToken({
      name: serviceAccount,
      namespace,
      body: { spec: { expirationSeconds: 600, audiences: [] } },
    });
    const token = request.status?.token as string;
    const byToken = await get('/metrics', { token });
    expect(byToken.status).toBe(403);
    expect(JSON.parse(byToken.text).message).toBe(
      `forbidden: user "system:serviceaccount:${namespace}:${serviceAccount}" lacks get /metrics`,
    );
    expect((await get('/metrics', { leaf: 'member', token })).status).toBe(200);
  });
});

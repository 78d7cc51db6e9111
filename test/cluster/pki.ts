// PKI of a local cluster, made with the openssl CLI (ECDSA P-256, 30 days): cluster CA, API server
// serving cert, admin client cert, service-account keys, a separate front-proxy CA and client cert for
// the aggregation layer, and the nodeload gateway's serving cert (webhook + aggregated API).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

const OPENSSL_CNF = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = placeholder
[v3_ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
`;

export interface PkiPaths {
  dir: string;
  caCert: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  adminCert: string;
  adminKey: string;
  saKey: string;
  saPub: string;
  frontProxyCaCert: string;
  frontProxyCaKey: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
  /** Serving cert of the nodeload gateway's kube-facing HTTPS port (webhook + aggregated API), signed by caCert. */
  servingCert: string;
  servingKey: string;
}

async function openssl(args: string[], cwd: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err)
        reject(new Error(`control plane: pki failed: openssl ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function makeCa(dir: string, name: string, cn: string): Promise<void> {
  await openssl(
    [
      'req',
      '-x509',
      '-config',
      'openssl.cnf',
      '-extensions',
      'v3_ca',
      ...EC_KEY,
      '-sha256',
      '-days',
      '30',
      '-subj',
      `/CN=${cn}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
  const bc = await openssl(['x509', '-in', `${name}.crt`, '-noout', '-ext', 'basicConstraints'], dir);
  if (!bc.includes('CA:TRUE'))
    throw new Error(`control plane: pki failed: ${name}.crt lacks basicConstraints CA:TRUE`);
}

async function makeLeaf(
  dir: string,
  name: string,
  subject: string,
  ca: string,
  usage: 'serverAuth' | 'clientAuth',
  sans: string[] = [],
): Promise<void> {
  const ext = [
    'basicConstraints = critical,CA:FALSE',
    'keyUsage = critical,digitalSignature',
    `extendedKeyUsage = ${usage}`,
    'subjectKeyIdentifier = hash',
    'authorityKeyIdentifier = keyid',
    ...(sans.length ? [`subjectAltName = ${sans.join(',')}`] : []),
  ];
  await writeFile(path.join(dir, `${name}.ext`), `${ext.join('\n')}\n`);
  await openssl(
    [
      'req',
      '-new',
      '-config',
      'openssl.cnf',
      ...EC_KEY,
      '-subj',
      subject,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    ],
    dir,
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-set_serial',
      `0x${randomBytes(12).toString('hex')}`,
      '-days',
      '30',
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
  await openssl(['verify', '-CAfile', `${ca}.crt`, `${name}.crt`], dir);
  await rm(path.join(dir, `${name}.csr`));
  await rm(path.join(dir, `${name}.ext`));
}

/** Generates the cluster PKI into dir (§6 of controlplane.md) plus the nodeload gateway serving cert. */
export async function generatePki(dir: string): Promise<PkiPaths> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(path.join(dir, 'openssl.cnf'), OPENSSL_CNF);
  await makeCa(dir, 'ca', 'nodeload-test-ca');
  await makeCa(dir, 'front-proxy-ca', 'nodeload-test-front-proxy-ca');
  await Promise.all([
    makeLeaf(dir, 'apiserver', '/CN=kube-apiserver', 'ca', 'serverAuth', [
      'DNS:localhost',
      'DNS:kubernetes',
      'DNS:kubernetes.default',
      'DNS:kubernetes.default.svc',
      'DNS:kubernetes.default.svc.cluster.local',
      'IP:127.0.0.1',
      'IP:10.0.0.1',
    ]),
    makeLeaf(dir, 'admin', '/O=system:masters/CN=admin', 'ca', 'clientAuth'),
    makeLeaf(dir, 'front-proxy-client', '/CN=front-proxy-client', 'front-proxy-ca', 'clientAuth'),
    makeLeaf(dir, 'serving', '/CN=nodeload-api.kube-system.svc', 'ca', 'serverAuth', [
      'DNS:localhost',
      'DNS:nodeload-api.kube-system.svc',
      'DNS:nodeload-api.kube-system.svc.cluster.local',
      'IP:127.0.0.1',
    ]),
    (async () => {
      await openssl(
        ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'sa.key'],
        dir,
      );
      await openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
    })(),
  ]);
  const p = (f: string) => path.join(dir, f);
  return {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    apiserverCert: p('apiserver.crt'),
    apiserverKey: p('apiserver.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
    frontProxyCaCert: p('front-proxy-ca.crt'),
    frontProxyCaKey: p('front-proxy-ca.key'),
    frontProxyClientCert: p('front-proxy-client.crt'),
    frontProxyClientKey: p('front-proxy-client.key'),
    servingCert: p('serving.crt'),
    servingKey: p('serving.key'),
  };
}

export function kubeconfigYaml(server: string, pki: PkiPaths): string {
  const q = JSON.stringify; // JSON strings are valid YAML scalars
  return `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: ${q(server)}
    certificate-authority: ${q(pki.caCert)}
users:
- name: admin
  user:
    client-certificate: ${q(pki.adminCert)}
    client-key: ${q(pki.adminKey)}
contexts:
- name: local
  context:
    cluster: local
    user: admin
current-context: local
`;
}

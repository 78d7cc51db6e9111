/**
 * The gateway's own CA and serving certificate (--cert-rotation=self-signed), as Gatekeeper's cert
 * rotator keeps them: a self-signed CA (10 years) signs a serving certificate (1 year) for the Service's
 * DNS names; the pair lives in a Secret (tls.crt, tls.key, ca.crt, ca.key) and ca.crt is the caBundle of
 * the webhook configurations and the APIService. Pure: what a Secret should hold, decided from what it
 * holds and the time. Keys are made by node:crypto (RSA 2048); node-forge writes the X.509 certificates
 * (node:crypto reads them but cannot write them).
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** The Secret's data, as PEM text. ca.crt may hold more than one CA while an old one is phased out. */
export interface CertSecretData {
  'tls.crt': string;
  'tls.key': string;
  'ca.crt': string;
  'ca.key': string;
}

export interface CertPolicy {
  caValidityDays: number;
  certValidityDays: number;
  /** A certificate (or the CA) expiring within this many days is replaced. */
  lookaheadDays: number;
}

export const DEFAULT_CERT_POLICY: CertPolicy = {
  caValidityDays: 3650,
  certValidityDays: 365,
  lookaheadDays: 90,
};

const DAY_MS = 86_400_000;

/** The names the serving certificate carries for a Service: what the API server and the aggregator dial. */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
    `${service}.${namespace}`,
    service,
  ];
}

interface KeyPair {
  certPem: string;
  keyPem: string;
}

function newKey(): { forgeKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; pem: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { forgeKey, publicKey: forge.pki.rsa.setPublicKey(forgeKey.n, forgeKey.e), pem };
}

function baseCertificate(
  publicKey: forge.pki.PublicKey,
  notBefore: Date,
  days: number,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive 128-bit serial (the high bit cleared).
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  cert.serialNumber = serial.toString('hex');
  // An hour back: clocks of the API server and the gateway's node may differ a little.
  cert.validity.notBefore = new Date(notBefore.getTime() - 3_600_000);
  cert.validity.notAfter = new Date(notBefore.getTime() + days * DAY_MS);
  return cert;
}

/** A self-signed CA certificate and its key. */
export function generateCa(now: Date, validityDays: number, commonName = 'nodeload-ca'): KeyPair {
  const key = newKey();
  const cert = baseCertificate(key.publicKey, now, validityDays);
  // node-forge writes names as PrintableString, which has no '@' (Go's x509 refuses such a CA).
  const subject = [{ name: 'commonName', value: `${commonName}-${Math.floor(now.getTime() / 1000)}` }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key.forgeKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.pem };
}

/** A serving certificate for `names` (DNS names and IP addresses), signed by the CA. */
export function issueServingCert(
  ca: KeyPair,
  names: readonly string[],
  now: Date,
  validityDays: number,
): KeyPair {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const key = newKey();
  // Never past the CA: a client would refuse the chain once the CA expires.
  const days = Math.min(validityDays, (caCert.validity.notAfter.getTime() - now.getTime()) / DAY_MS);
  const cert = baseCertificate(key.publicKey, now, days);
  cert.setSubject([{ name: 'commonName', value: names[0] ?? 'nodeload-gateway' }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: names.map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n })),
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: key.pem };
}

/** The PEM certificates of a bundle, in order. */
export function splitPem(bundle: string): string[] {
  return (
    bundle
      .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)
      ?.map((c) => c.trim() + '\n') ?? []
  );
}

function parse(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

const expiresWithin = (cert: X509Certificate, now: Date, days: number) =>
  new Date(cert.validTo).getTime() - now.getTime() < days * DAY_MS;

/** The SANs of a certificate: DNS names and IP addresses, as written in the certificate. */
export function subjectAltNames(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(/,\s*/)
    .filter(Boolean)
    .map((s) => s.replace(/^(DNS|IP Address):/, ''));
}

export type RotationPlan =
  | { action: 'keep' }
  | { action: 'issue'; reason: string }
  | { action: 'new-ca'; reason: string };

/**
 * What the Secret needs: nothing, a new serving certificate from the same CA (the caBundle stays), or a
 * new CA (and so a new caBundle) — decided from its data, the names wanted and the time.
 */
export function planRotation(
  data: Partial<CertSecretData> | undefined,
  names: readonly string[],
  now: Date,
  policy: CertPolicy = DEFAULT_CERT_POLICY,
): RotationPlan {
  const caPem = data?.['ca.crt'] ? splitPem(data['ca.crt'])[0] : undefined;
  const ca = caPem ? parse(caPem) : undefined;
  if (!ca || !data?.['ca.key']) return { action: 'new-ca', reason: 'no CA yet' };
  try {
    if (!ca.checkPrivateKey(createPrivateKey(data['ca.key'])))
      return { action: 'new-ca', reason: 'CA key does not match' };
  } catch {
    return { action: 'new-ca', reason: 'CA key unreadable' };
  }
  if (!ca.ca) return { action: 'new-ca', reason: 'ca.crt is not a CA' };
  // The CA must outlive a certificate issued now, plus the lookahead.
  if (expiresWithin(ca, now, policy.certValidityDays + policy.lookaheadDays)) {
    return { action: 'new-ca', reason: `CA expires ${ca.validTo}` };
  }
  const cert = data['tls.crt'] ? parse(data['tls.crt']) : undefined;
  if (!cert || !data['tls.key']) return { action: 'issue', reason: 'no serving certificate yet' };
  try {
    if (!cert.checkPrivateKey(createPrivateKey(data['tls.key'])))
      return { action: 'issue', reason: 'key does not match' };
  } catch {
    return { action: 'issue', reason: 'key unreadable' };
  }
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey))
    return { action: 'issue', reason: 'not signed by the CA' };
  if (expiresWithin(cert, now, policy.lookaheadDays))
    return { action: 'issue', reason: `expires ${cert.validTo}` };
  if (new Date(cert.validFrom).getTime() > now.getTime()) return { action: 'issue', reason: 'not valid yet' };
  const have = new Set(subjectAltNames(cert));
  const missing = names.filter((n) => !have.has(n));
  if (missing.length) return { action: 'issue', reason: `names missing: ${missing.join(', ')}` };
  return { action: 'keep' };
}

/**
 * The Secret's data after `plan`. A new CA keeps the previous one in ca.crt while it is still valid, so
 * replicas still serving the previous certificate stay trusted until they load the new one.
 */
export function rotate(
  data: Partial<CertSecretData> | undefined,
  plan: RotationPlan,
  names: readonly string[],
  now: Date,
  policy: CertPolicy = DEFAULT_CERT_POLICY,
): CertSecretData | undefined {
  if (plan.action === 'keep') return undefined;
  let ca: KeyPair;
  let bundle: string;
  if (plan.action === 'new-ca') {
    ca = generateCa(now, policy.caValidityDays);
    const previous = splitPem(data?.['ca.crt'] ?? '').filter((pem) => {
      const c = parse(pem);
      return c?.ca && new Date(c.validTo).getTime() > now.getTime();
    });
    bundle = [ca.certPem, ...previous.slice(0, 1)].join('');
  } else {
    ca = { certPem: splitPem(data?.['ca.crt'] ?? '')[0] ?? '', keyPem: data?.['ca.key'] ?? '' };
    bundle = data?.['ca.crt'] ?? ca.certPem;
  }
  const leaf = issueServingCert(ca, names, now, policy.certValidityDays);
  return { 'tls.crt': leaf.certPem, 'tls.key': leaf.keyPem, 'ca.crt': bundle, 'ca.key': ca.keyPem };
}

/**
 * TLS client certificates on the listeners that ask every client for one and let the routes decide
 * (src/server/tls-server.ts): the chain a client presented, and whether it chains to one of a set of CAs
 * for client authentication. On the kube-facing port the aggregated API checks the aggregator's
 * front-proxy certificate this way, the extender kube-scheduler's client certificate; on the user-facing
 * port (--user-client-ca-file) a certificate names its user as kube-apiserver's x509 authenticator reads it.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';

export function splitPemBundle(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** A CA bundle file's certificates; throws naming the flag when the file is missing or holds none. */
export function loadClientCas(file: string, flag: string): X509Certificate[] {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${flag}: cannot read ${file}: ${(err as Error).message}`);
  }
  const blocks = splitPemBundle(pem);
  if (blocks.length === 0) throw new Error(`${flag}: ${file} holds no PEM certificate`);
  try {
    return blocks.map((b) => new X509Certificate(b));
  } catch (err) {
    throw new Error(`${flag}: ${file}: ${(err as Error).message}`);
  }
}

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';

function validAt(cert: X509Certificate, now: Date): boolean {
  return cert.validFromDate <= now && now <= cert.validToDate;
}

function issuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

const values = (v: string | string[] | undefined): string[] => (v === undefined ? [] : [v].flat());

/**
 * The subject's CN and O values, unescaped (`subject` escapes "," and others): the CN is the last one
 * if there are several, as Go's pkix.Name reads it; the O values in their order.
 */
export function subjectNames(cert: X509Certificate): { commonName: string; organizations: string[] } {
  const subject = cert.toLegacyObject().subject as Record<string, string | string[] | undefined>;
  return { commonName: values(subject['CN']).at(-1) ?? '', organizations: values(subject['O']) };
}

/** The subject's CN ("CN=front-proxy-client" → "front-proxy-client"). */
export function commonName(cert: X509Certificate): string {
  return subjectNames(cert).commonName;
}

export type ChainVerdict = { ok: true; commonName: string } | { ok: false; reason: string };

/** Why a chain does not chain to the CAs: the one reason callers word for their CA. */
export const NOT_SIGNED = 'client certificate is not signed by a trusted CA';

/** The presented chain up to a CA: the leaf, the intermediates followed, and the CA that signed the last. */
type VerifiedPath = { ok: true; path: X509Certificate[] } | { ok: false; reason: string };

function verifyPath(
  chain: readonly X509Certificate[],
  cas: readonly X509Certificate[],
  now: Date,
): VerifiedPath {
  const leaf = chain[0];
  if (!leaf) return { ok: false, reason: 'no client certificate' };
  if (!validAt(leaf, now)) return { ok: false, reason: 'client certificate expired or not yet valid' };
  const eku = leaf.keyUsage ?? [];
  if (eku.length > 0 && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) {
    return { ok: false, reason: 'client certificate is not for client authentication' };
  }
  const intermediates = chain.slice(1);
  const path = [leaf];
  let current = leaf;
  for (let depth = 0; depth <= intermediates.length; depth++) {
    const ca = cas.find((c) => validAt(c, now) && issuedBy(current, c));
    if (ca) return { ok: true, path: [...path, ca] };
    const next = intermediates.find((c) => c !== current && c.ca && validAt(c, now) && issuedBy(current, c));
    if (!next) break;
    path.push(next);
    current = next;
  }
  return { ok: false, reason: NOT_SIGNED };
}

/**
 * Verifies a presented chain (leaf first, then any intermediates the client sent) up to one of the
 * CAs, for client authentication, at `now`.
 */
export function verifyClientCertificate(
  chain: readonly X509Certificate[],
  cas: readonly X509Certificate[],
  now: Date,
): ChainVerdict {
  const verdict = verifyPath(chain, cas, now);
  return verdict.ok ? { ok: true, commonName: commonName(verdict.path[0] as X509Certificate) } : verdict;
}

export type CertificateUserVerdict =
  | {
      ok: true;
      /** The subject's CN. */
      name: string;
      /** The subject's O values. */
      groups: string[];
      /** When the first certificate of the verified path expires (ms since the epoch): the verdict holds till then. */
      validUntil: number;
    }
  | { ok: false; reason: string };

/**
 * The user a client certificate authenticates, as kube-apiserver's x509 authenticator reads it
 * (CommonNameUserConversion): the chain verified for client authentication up to one of the CAs, the
 * user is the subject's CN and the groups its O values. A certificate without a CN names no user.
 */
export function certificateUser(
  chain: readonly X509Certificate[],
  cas: readonly X509Certificate[],
  now: Date,
): CertificateUserVerdict {
  const verdict = verifyPath(chain, cas, now);
  if (!verdict.ok) return verdict;
  const { commonName: name, organizations } = subjectNames(verdict.path[0] as X509Certificate);
  if (!name) return { ok: false, reason: 'client certificate has no subject CN (the user name)' };
  const validUntil = Math.min(...verdict.path.map((c) => c.validToDate.getTime()));
  return { ok: true, name, groups: organizations, validUntil };
}

/** The chain the client presented, leaf first (empty without TLS or without a certificate). */
export function peerChain(socket: unknown): X509Certificate[] {
  if (typeof (socket as TLSSocket | undefined)?.getPeerCertificate !== 'function') return [];
  const out: X509Certificate[] = [];
  const seen = new Set<string>();
  let cert = (socket as TLSSocket).getPeerCertificate(true);
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    out.push(new X509Certificate(cert.raw));
    cert = cert.issuerCertificate;
  }
  return out;
}

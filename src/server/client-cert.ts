/**
 * TLS client certificates on the kube-facing listener, which asks every client for one and lets the
 * routes decide (src/server/tls-server.ts): the chain a client presented, and whether it chains to one
 * of a set of CAs for client authentication. The aggregated API checks the aggregator's front-proxy
 * certificate this way, the extender kube-scheduler's client certificate.
 */
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

export function splitPemBundle(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
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

/** The subject's CN ("CN=front-proxy-client" → "front-proxy-client"). */
export function commonName(cert: X509Certificate): string {
  for (const line of cert.subject.split('\n')) {
    if (line.startsWith('CN=')) return line.slice(3);
  }
  return '';
}

export type ChainVerdict = { ok: true; commonName: string } | { ok: false; reason: string };

/** Why a chain does not chain to the CAs: the one reason callers word for their CA. */
export const NOT_SIGNED = 'client certificate is not signed by a trusted CA';

/**
 * Verifies a presented chain (leaf first, then any intermediates the client sent) up to one of the
 * CAs, for client authentication, at `now`.
 */
export function verifyClientCertificate(
  chain: readonly X509Certificate[],
  cas: readonly X509Certificate[],
  now: Date,
): ChainVerdict {
  const leaf = chain[0];
  if (!leaf) return { ok: false, reason: 'no client certificate' };
  if (!validAt(leaf, now)) return { ok: false, reason: 'client certificate expired or not yet valid' };
  const eku = leaf.keyUsage ?? [];
  if (eku.length > 0 && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) {
    return { ok: false, reason: 'client certificate is not for client authentication' };
  }
  const intermediates = chain.slice(1);
  let current = leaf;
  for (let depth = 0; depth <= intermediates.length; depth++) {
    if (cas.some((ca) => validAt(ca, now) && issuedBy(current, ca))) {
      return { ok: true, commonName: commonName(leaf) };
    }
    const next = intermediates.find((c) => c !== current && c.ca && validAt(c, now) && issuedBy(current, c));
    if (!next) break;
    current = next;
  }
  return { ok: false, reason: NOT_SIGNED };
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

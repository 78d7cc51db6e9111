import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type CertSecretData,
  DEFAULT_CERT_POLICY,
  planRotation,
  rotate,
  serviceDnsNames,
  splitPem,
  subjectAltNames,
} from './certs.js';

const NAMES = [...serviceDnsNames('nodeload-gateway', 'nodeload-system'), '127.0.0.1'];
const T0 = new Date('2027-01-01T00:00:00Z');
const days = (n: number) => new Date(T0.getTime() + n * 86_400_000);

// One bootstrap shared by the cases (RSA keys take a moment to make).
const first = rotate(undefined, planRotation(undefined, NAMES, T0), NAMES, T0) as CertSecretData;

// Each rotation generates RSA-2048 keys, whose prime search takes seconds now and then on a loaded 2-core box.
describe('self-signed certificates', { timeout: 30_000 }, () => {
  it('bootstraps a CA and a serving certificate it signed, for the Service names and IPs', () => {
    expect(planRotation(undefined, NAMES, T0)).toEqual({ action: 'new-ca', reason: 'no CA yet' });
    const ca = new X509Certificate(first['ca.crt']);
    const leaf = new X509Certificate(first['tls.crt']);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(subjectAltNames(leaf)).toEqual([...NAMES]);
    expect(leaf.keyUsage).toContain('1.3.6.1.5.5.7.3.1'); // serverAuth
    expect(new Date(leaf.validTo).getTime()).toBeLessThanOrEqual(new Date(ca.validTo).getTime());
    expect(planRotation(first, NAMES, T0)).toEqual({ action: 'keep' });
    // Names are PrintableString (Go's x509, i.e. the API server, refuses other characters there).
    for (const c of [ca, leaf]) expect(c.subject).toMatch(/^CN=[A-Za-z0-9 '()+,\-./:=?]+$/);
  });

  it('reissues the serving certificate from the same CA within the lookahead, keeping the caBundle', () => {
    const due = days(DEFAULT_CERT_POLICY.certValidityDays - DEFAULT_CERT_POLICY.lookaheadDays + 1);
    expect(planRotation(first, NAMES, days(200))).toEqual({ action: 'keep' });
    const plan = planRotation(first, NAMES, due);
    expect(plan.action).toBe('issue');
    const next = rotate(first, plan, NAMES, due) as CertSecretData;
    expect(next['ca.crt']).toBe(first['ca.crt']);
    expect(next['ca.key']).toBe(first['ca.key']);
    expect(next['tls.crt']).not.toBe(first['tls.crt']);
    expect(planRotation(next, NAMES, due)).toEqual({ action: 'keep' });
  });

  it('reissues when a name is missing or the certificate is not the CA’s', () => {
    expect(planRotation(first, [...NAMES, 'extra.example'], T0)).toEqual({
      action: 'issue',
      reason: 'names missing: extra.example',
    });
    const other = rotate(undefined, { action: 'new-ca', reason: 'x' }, NAMES, T0) as CertSecretData;
    expect(
      planRotation({ ...first, 'tls.crt': other['tls.crt'], 'tls.key': other['tls.key'] }, NAMES, T0),
    ).toEqual({
      action: 'issue',
      reason: 'not signed by the CA',
    });
    expect(planRotation({ ...first, 'tls.key': other['tls.key'] }, NAMES, T0)).toEqual({
      action: 'issue',
      reason: 'key does not match',
    });
    expect(planRotation({ ...first, 'ca.key': other['ca.key'] }, NAMES, T0).action).toBe('new-ca');
  });

  it('replaces the CA before it could outlive a new certificate, keeping the old CA in the bundle while valid', () => {
    const late = days(DEFAULT_CERT_POLICY.caValidityDays - DEFAULT_CERT_POLICY.certValidityDays);
    const plan = planRotation(first, NAMES, late);
    expect(plan.action).toBe('new-ca');
    const next = rotate(first, plan, NAMES, late) as CertSecretData;
    const bundle = splitPem(next['ca.crt']);
    expect(bundle).toHaveLength(2);
    expect(bundle[1]).toBe(splitPem(first['ca.crt'])[0]);
    const leaf = new X509Certificate(next['tls.crt']);
    expect(leaf.checkIssued(new X509Certificate(bundle[0] ?? ''))).toBe(true);
    expect(planRotation(next, NAMES, late)).toEqual({ action: 'keep' });
    // A bundle never grows past the current CA and its predecessor.
    const again = rotate(next, { action: 'new-ca', reason: 'test' }, NAMES, late) as CertSecretData;
    expect(splitPem(again['ca.crt'])).toHaveLength(2);
  });

  it('serviceDnsNames: what the API server and the aggregator dial', () => {
    expect(serviceDnsNames('gw', 'ns')).toEqual(['gw.ns.svc', 'gw.ns.svc.cluster.local', 'gw.ns', 'gw']);
  });
});

/**
 * kube-scheduler as the local control plane runs it in extender mode (tests, demo): manifests/scheduler/
 * extender.yaml as shipped, pointed at this cluster and at a gateway on 127.0.0.1 — whose serving
 * certificate names 127.0.0.1, not the Service — with the admin certificate as kube-scheduler's client
 * certificate (the gateway's --extender-client-ca-file is then the cluster CA).
 */
import { readFileSync } from 'node:fs';
import { dump, load } from 'js-yaml';
import { manifestPath } from './manifests.js';
import type { PkiPaths } from './pki.js';

export function localExtenderSchedulerConfig(c: {
  kubeconfig: string;
  pki: PkiPaths;
  port: number;
  /** Replace the manifest's profiles (a bench runs this kube-scheduler beside others). */
  profiles?: string[];
  /** kube-scheduler's API client limits (its defaults: QPS 50, burst 100). */
  qps?: { qps: number; burst: number };
}): string {
  // biome-ignore lint/suspicious/noExplicitAny: the manifest as YAML, a few fields replaced.
  const doc = load(readFileSync(manifestPath('scheduler/extender.yaml'), 'utf8')) as any;
  doc.clientConnection = { ...doc.clientConnection, kubeconfig: c.kubeconfig, ...c.qps };
  if (c.profiles) doc.profiles = c.profiles.map((schedulerName) => ({ schedulerName }));
  doc.leaderElection = { leaderElect: false };
  const [extender] = doc.extenders;
  extender.urlPrefix = `https://127.0.0.1:${c.port}/extender`;
  extender.tlsConfig = { caFile: c.pki.caCert, certFile: c.pki.adminCert, keyFile: c.pki.adminKey };
  return dump(doc);
}

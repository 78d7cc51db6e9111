/**
 * The extender as a gateway component: kube-scheduler's extender verbs on the kube-facing HTTPS port,
 * decided by the scheduler's ExtenderEngine (the same cycle, state and history as the native loop).
 * Served only when --extender-client-ca-file names the CA kube-scheduler's client certificate is
 * signed by: without it no caller could be authenticated.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Scheduler } from '../scheduler/scheduler.js';
import { splitPemBundle } from '../server/client-cert.js';
import type { ComponentContext, GatewayComponent } from '../server/component.js';
import { componentLogger } from '../server/log.js';
import { createExtenderMetrics } from './metrics.js';
import { extenderRouter } from './routes.js';

/** The part of the gateway's context the extender uses. */
export interface ExtenderContext extends ComponentContext {
  config: { extenderClientCaFile?: string | undefined };
  cache: { isReady(): boolean };
}

/** The CA bundle's certificates; throws naming the flag when the file is missing or holds none. */
export function loadClientCas(file: string): X509Certificate[] {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`--extender-client-ca-file: cannot read ${file}: ${(err as Error).message}`);
  }
  const blocks = splitPemBundle(pem);
  if (blocks.length === 0) throw new Error(`--extender-client-ca-file: ${file} holds no PEM certificate`);
  try {
    return blocks.map((b) => new X509Certificate(b));
  } catch (err) {
    throw new Error(`--extender-client-ca-file: ${file}: ${(err as Error).message}`);
  }
}

export function extenderComponent(ctx: ExtenderContext, deps: { scheduler: Scheduler }): GatewayComponent {
  const file = ctx.config.extenderClientCaFile;
  if (!file) return { name: 'extender' };
  const log = componentLogger(ctx.log, 'extender');
  return {
    name: 'extender',
    kubeRoutes: extenderRouter({
      state: { ready: () => ctx.cache.isReady(), engine: deps.scheduler.extender },
      clientCas: loadClientCas(file),
      metrics: createExtenderMetrics(ctx.registry),
      log,
      bodyLimit: '8mb',
    }),
  };
}

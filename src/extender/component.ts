/**
 * The extender as a gateway component: kube-scheduler's extender verbs on the kube-facing HTTPS port,
 * decided by the scheduler's ExtenderEngine (the same cycle, state and history as the native loop).
 * Served only when --extender-client-ca-file names the CA kube-scheduler's client certificate is
 * signed by: without it no caller could be authenticated.
 */
import type { ClusterView } from '../cluster/view.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { loadClientCas } from '../server/client-cert.js';
import type { ComponentContext, GatewayComponent } from '../server/component.js';
import { componentLogger } from '../server/log.js';
import { type BypassCheck, bypassedRules } from './bypass.js';
import { createExtenderMetrics } from './metrics.js';
import { extenderRouter } from './routes.js';

/** The part of the gateway's context the extender uses. */
export interface ExtenderContext extends ComponentContext {
  config: { extenderClientCaFile?: string | undefined; schedulerName: string; nativeScheduler: boolean };
  cache: Pick<ClusterView<NodeLoadRule>, 'isReady' | 'bus' | 'rules'>;
}

export function extenderComponent(ctx: ExtenderContext, deps: { scheduler: Scheduler }): GatewayComponent {
  const file = ctx.config.extenderClientCaFile;
  if (!file) return { name: 'extender' };
  const log = componentLogger(ctx.log, 'extender');
  const metrics = createExtenderMetrics(ctx.registry);
  const engine = deps.scheduler.extender;
  const check: BypassCheck = {
    *rules() {
      for (const entry of ctx.cache.rules.values()) yield entry.rule;
    },
    boundHere: (uid) => engine.boundHere(uid),
    ...(ctx.config.nativeScheduler ? { nativeSchedulerName: ctx.config.schedulerName } : {}),
  };
  let unsubscribe: (() => void) | undefined;
  return {
    name: 'extender',
    kubeRoutes: extenderRouter({
      state: { ready: () => ctx.cache.isReady(), engine },
      clientCas: loadClientCas(file, '--extender-client-ca-file'),
      metrics,
      log,
      bodyLimit: '8mb',
    }),
    start() {
      unsubscribe = ctx.cache.bus.on('pod', (change) => {
        const escaped = bypassedRules(change, check);
        if (escaped.length === 0 || !change.new) return;
        metrics.bypassed();
        log.warn(
          {
            pod: `${change.new.namespace}/${change.new.name}`,
            node: change.new.nodeName,
            rules: escaped.map((r) => r.name),
          },
          'pod bound without the extender: its rules were not checked (kube-scheduler skipped nodeload?)',
        );
      });
    },
    stop() {
      unsubscribe?.();
    },
  };
}

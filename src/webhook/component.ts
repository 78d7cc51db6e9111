/**
 * The admission webhook as a gateway component: POST /mutate and /validate on the kube-facing HTTPS
 * port, deciding from the shared cluster cache.
 */
import type { GatewayComponent, GatewayContext } from '../app.js';
import type { RuleCache } from '../rules/kind.js';
import { componentLogger } from '../log.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { WebhookState } from './admit.js';
import { webhookRouter } from './routes.js';

export function cacheState(cache: RuleCache): WebhookState {
  return {
    ready: () => cache.isReady(),
    *rules(): Iterable<NodeLoadRule> {
      for (const entry of cache.rules.values()) yield entry.rule;
    },
    nodes: () => cache.nodes,
  };
}

export function webhookComponent(ctx: GatewayContext): GatewayComponent {
  const { config } = ctx;
  return {
    name: 'webhook',
    kubeRoutes: webhookRouter({
      state: cacheState(ctx.cache),
      log: componentLogger(ctx.log, 'webhook'),
      registry: ctx.registry,
      bodyLimit: config.webhookBodyLimit,
      schedulerName: config.schedulerName,
      overrideExplicitScheduler: config.overrideExplicitScheduler,
      excludedNamespaces: new Set(['kube-system', config.namespace]),
    }),
  };
}

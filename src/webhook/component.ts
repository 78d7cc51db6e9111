/**
 * The admission webhook as a gateway component: POST /mutate and /validate on the kube-facing HTTPS
 * port, deciding from the shared cluster cache.
 */
import { deviceClassBacking } from '../cluster/device-classes.js';
import type { ClusterView } from '../cluster/view.js';
import type { LeaderElector } from '../leader/lease.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { ComponentContext, GatewayComponent } from '../server/component.js';
import { componentLogger } from '../server/log.js';
import type { WebhookState } from './admit.js';
import { kubeEventWriter, NotSteeredEvents, WEBHOOK_CONTROLLER } from './not-steered.js';
import { PatchMemo } from './patch-memo.js';
import { webhookRoutes } from './routes.js';

/** The webhook's view of the cache; its patch memo is emptied on every rule change until `stop`. */
export function cacheState(cache: ClusterView<NodeLoadRule>): WebhookState & { stop(): void } {
  const patchMemo = new PatchMemo<string[]>();
  const stop = cache.bus.on('rule', () => patchMemo.clear());
  return {
    patchMemo,
    stop,
    ready: () => cache.isReady(),
    *rules(): Iterable<NodeLoadRule> {
      for (const entry of cache.rules.values()) yield entry.rule;
    },
    nodes: () => cache.nodes,
    // The opt-out label on namespaces, as defence in depth behind the namespaceSelector.
    namespaceLabels: (namespace) => cache.namespaces.get(namespace)?.labels,
    deviceClassFor: (resource) => deviceClassBacking(cache.deviceClasses, resource),
  };
}

/** The part of the gateway's context the webhook uses. */
export interface WebhookContext extends ComponentContext {
  config: {
    schedulerName: string;
    /** The gateway's own namespace: never steered, like kube-system. */
    namespace: string;
    webhookBodyLimit: string;
    overrideExplicitScheduler: boolean;
  };
  cache: ClusterView<NodeLoadRule>;
  leader: Pick<LeaderElector, 'identity'>;
}

export function webhookComponent(ctx: WebhookContext): GatewayComponent {
  const { config } = ctx;
  const log = componentLogger(ctx.log, 'webhook');
  const notSteered = new NotSteeredEvents({
    watchPods: (fn) =>
      ctx.cache.bus.on('pod', (change) => {
        if (change.new) fn(change.new);
      }),
    lookupPod: (namespace, name) => ctx.cache.pods.get(`${namespace}/${name}`),
    createEvent: kubeEventWriter(ctx.kubeConfig),
    schedulerName: config.schedulerName,
    instance: `${WEBHOOK_CONTROLLER}-${ctx.leader.identity}`,
    log,
  });
  const state = cacheState(ctx.cache);
  return {
    name: 'webhook',
    start: () => notSteered.start(),
    stop: () => {
      state.stop();
      return notSteered.stop();
    },
    kubeFastRoutes: webhookRoutes({
      state,
      log,
      registry: ctx.registry,
      bodyLimit: config.webhookBodyLimit,
      schedulerName: config.schedulerName,
      overrideExplicitScheduler: config.overrideExplicitScheduler,
      excludedNamespaces: new Set(['kube-system', config.namespace]),
      onNotSteered: (pod) => notSteered.expect(pod),
    }),
  };
}

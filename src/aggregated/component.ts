/**
 * The aggregated API as a gateway component: nodeload.example.com/v1alpha1 on the kube-facing HTTPS
 * port (behind the aggregator: manifests/aggregated; test/cluster/apiservice.ts registers a local
 * gateway) and GET /api/node-load on the user-facing port, both served from one NodeLoadStore that
 * builds objects from the shared cache and load tracker when they are read, and follows their events
 * only while a watch is open.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { Gauge } from 'prom-client';
import { httpStatusOf } from '../cluster/kube-object.js';
import type { ClusterView } from '../cluster/view.js';
import type { LoadView } from '../load/tracker.js';
import type { NodeLoadRule } from '../rules/types.js';
import {
  CachedAccessReviewer,
  kubeSubjectAccessReviewer,
  type SubjectAccessReviewer,
} from '../server/authz.js';
import type { ComponentContext, GatewayComponent } from '../server/component.js';
import { componentLogger } from '../server/log.js';
import { AUTHENTICATION_CONFIGMAP } from './auth.js';
import { kubeRoutes, userRoutes } from './routes.js';
import {
  frontProxyAuthentication,
  RequestHeaderConfigLoader,
  subjectAccessReviewAuthorization,
} from './security.js';
import { NodeLoadStore, type NodeLoadStoreOptions } from './store.js';

export interface AggregatedApiDeps {
  /** The data of kube-system/extension-apiserver-authentication; default: read with the gateway's kubeconfig. */
  readAuthenticationConfig?: () => Promise<Record<string, string> | undefined>;
  /** Default: a SubjectAccessReview with the gateway's kubeconfig (needs system:auth-delegator). */
  review?: SubjectAccessReviewer;
  store?: NodeLoadStoreOptions;
  now?: () => number;
  /** Default watch length when the client sets no timeoutSeconds. */
  watchTimeoutMs?: () => number;
}

/** The part of the gateway's context the aggregated API uses. */
export interface AggregatedApiContext extends ComponentContext {
  cache: ClusterView<NodeLoadRule>;
  loads: LoadView;
}

export function aggregatedApiComponent(
  ctx: AggregatedApiContext,
  deps: AggregatedApiDeps = {},
): GatewayComponent {
  const log = componentLogger(ctx.log, 'aggregated-api');
  const { cache, loads } = ctx;
  const store = new NodeLoadStore(
    {
      node: (name) => cache.nodes.get(name),
      nodeNames: () => cache.nodes.keys(),
      loadOf: (name) => loads.loadOf(name),
      rules: () => [...cache.rules.values()].map((e) => e.rule),
    },
    deps.store,
  );

  const core = ctx.kubeConfig.makeApiClient(CoreV1Api);
  const readAuthenticationConfig =
    deps.readAuthenticationConfig ??
    (async () => {
      try {
        return (await core.readNamespacedConfigMap(AUTHENTICATION_CONFIGMAP)).data;
      } catch (err) {
        if (httpStatusOf(err) === 404) return undefined;
        throw err;
      }
    });
  const review = deps.review ?? kubeSubjectAccessReviewer(ctx.kubeConfig);
  const loader = new RequestHeaderConfigLoader({ read: readAuthenticationConfig, log });

  new Gauge({
    name: 'nodeload_aggregated_api_watches',
    help: 'Open watches on nodeloads.nodeload.example.com.',
    registers: [ctx.registry],
    collect() {
      this.set(store.subscriberCount);
    },
  });

  // Set once the store was rebuilt from a synced cache (until then resource requests get 503).
  let synced = false;
  const kube = kubeRoutes({
    store,
    log,
    ready: () => synced,
    authenticate: frontProxyAuthentication(loader, log),
    authorize: subjectAccessReviewAuthorization(new CachedAccessReviewer(review), log),
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.watchTimeoutMs ? { watchTimeoutMs: deps.watchTimeoutMs } : {}),
  });

  let unsubscribe: (() => void)[] = [];
  let pendingAll: NodeJS.Immediate | undefined;
  // A rule change (or a relist of rules) touches every object: coalesce a burst into one pass. Without
  // watches there is nothing to do: the store builds objects when they are read.
  const allChangedSoon = () => {
    if (store.subscriberCount === 0) return;
    pendingAll ??= setImmediate(() => {
      pendingAll = undefined;
      store.allChanged();
    });
  };

  return {
    name: 'aggregated-api',
    kubeRoutes: kube,
    userRoutes: userRoutes(store),
    async start() {
      unsubscribe = [
        loads.bus.on('load', (c) => store.nodeChanged(c.node)),
        // Labels and capacity show in the object even when the load figure stays the same.
        cache.bus.on('node', (c) => {
          const name = (c.new ?? c.old)?.name;
          if (name) store.nodeChanged(name);
        }),
        cache.bus.on('rule', allChangedSoon),
        cache.bus.on('synced', () => {
          store.allChanged();
          synced = true;
        }),
      ];
      synced = cache.isReady();
      // Serve as soon as the settings are known, but never hold the gateway's start on the API server.
      await Promise.race([loader.start(), new Promise((r) => setTimeout(r, 5000).unref())]);
    },
    stop() {
      for (const off of unsubscribe) off();
      unsubscribe = [];
      if (pendingAll) clearImmediate(pendingAll);
      pendingAll = undefined;
      loader.stop();
    },
  };
}

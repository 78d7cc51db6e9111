/**
 * GraphQL as a gateway component: /graphql on the user-facing app (queries, SSE subscriptions,
 * GraphiQL) and, once the gateway hands over its HTTP server, graphql-ws on the same path.
 */
import type http from 'node:http';
import { Counter } from 'prom-client';
import type { ClusterTopics, ClusterView } from '../cluster/view.js';
import type { LoadView } from '../load/tracker.js';
import type { Operator } from '../operator/operator.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { ComponentContext, GatewayComponent } from '../server/component.js';
import { componentLogger } from '../server/log.js';
import { StreamTokenRevalidator } from '../server/stream-revalidation.js';
import type { UserPortAuth } from '../server/user-auth.js';
import type { UserPortGate } from '../server/user-port-gate.js';
import type { GraphQLSources } from './context.js';
import { DataVersion } from './response-cache.js';
import { createGraphQLServer, type GraphQLServer } from './server.js';
import { clusterSource, loadSource, ruleSource, schedulingSource } from './sources.js';

export interface GraphQLComponentDeps {
  /** Rule verdicts come from its evaluations (what it writes status from); without it they are computed. */
  operator?: Pick<Operator, 'evaluation' | 'onChange'>;
  scheduler: Parameters<typeof schedulingSource>[0];
  /** Serve GraphiQL (default: unless --production). */
  graphiql?: boolean;
}

export type GraphQLComponent = GatewayComponent & {
  server: GraphQLServer;
  sources: GraphQLSources;
  /**
   * Serves graphql-ws on the user-facing HTTP server's upgrade requests for /graphql. The gateway calls
   * it (GatewayComponent.attach) once the server exists; stop() closes every socket.
   */
  attach(server: http.Server): void;
};

/** The flags GraphQL reads (the gateway's config satisfies it). */
export interface GraphQLFlags {
  /** GraphiQL and introspection off. */
  production: boolean;
  corsAllowedOrigins: string[];
  maxSubscriptionsPerConnection: number;
  userBodyLimitBytes: number;
  /** How often open streams' tokens are reviewed again. */
  streamTokenReviewSeconds: number;
}

/** The part of the gateway's context GraphQL uses. */
export interface GraphQLContext extends Pick<ComponentContext, 'log'> {
  /** Metrics (the response cache's lookups, the views' data changes); none in tests that do not read them. */
  registry?: ComponentContext['registry'];
  config: GraphQLFlags;
  cache: ClusterView<NodeLoadRule>;
  loads: LoadView;
  /** The user port's gate: WebSocket connections authenticate through it. */
  userAuth: UserPortAuth;
  /** Takes turns for the user port's work (user-port-gate.ts); WebSocket queries take theirs from it. */
  userGate?: UserPortGate;
}

export function graphqlComponent(ctx: GraphQLContext, deps: GraphQLComponentDeps): GraphQLComponent {
  const sources: GraphQLSources = {
    cluster: clusterSource(ctx.cache),
    loads: loadSource(ctx.loads),
    rules: ruleSource(deps.operator),
    scheduling: schedulingSource(deps.scheduler),
    now: ctx.cache.now,
  };
  const { config } = ctx;
  // Every change a view can show bumps the version query answers are cached under (response-cache.ts).
  const version = new DataVersion();
  const topics: (keyof ClusterTopics)[] = [
    'node',
    'pod',
    'namespace',
    'claim',
    'volume',
    'storageClass',
    'csiNode',
    'disruptionBudget',
    'rule',
    'metrics',
    'metricsServed',
    'synced',
  ];
  // Counted by source: what keeps the cached answers short-lived.
  const changes = ctx.registry
    ? new Counter({
        name: 'nodeload_graphql_data_changes_total',
        help: 'Changes the GraphQL views can show, by source (a cluster-cache topic, load, decision, operator); each starts a new response-cache generation.',
        labelNames: ['source'],
        registers: [ctx.registry],
      })
    : undefined;
  const bumpFrom = (source: string) => {
    const counted = changes?.labels(source);
    return counted
      ? () => {
          counted.inc();
          version.bump();
        }
      : version.bump;
  };
  const unsubscribe = [
    ...topics.map((t) => ctx.cache.bus.on(t, bumpFrom(t))),
    ctx.loads.bus.on('load', bumpFrom('load')),
    deps.scheduler.onDecision(bumpFrom('decision')),
    ...(deps.operator ? [deps.operator.onChange(bumpFrom('operator'))] : []),
  ];
  const log = componentLogger(ctx.log, 'graphql');
  // WebSockets and SSE subscriptions close once their token stops authenticating.
  const streamWatch = new StreamTokenRevalidator({
    authenticate: (authorization) => ctx.userAuth.authenticate(authorization),
    periodMs: config.streamTokenReviewSeconds * 1000,
    log,
  });
  const server = createGraphQLServer({
    sources,
    log,
    graphiql: deps.graphiql ?? !config.production,
    introspection: !config.production,
    responseCache: { version, ...(ctx.registry ? { registry: ctx.registry } : {}) },
    streamWatch,
    ...(ctx.registry ? { registry: ctx.registry } : {}),
  });
  const attach = (httpServer: http.Server) => {
    server.attachWebSocket(httpServer, {
      auth: ctx.userAuth,
      allowedOrigins: config.corsAllowedOrigins,
      maxPayloadBytes: config.userBodyLimitBytes,
      maxSubscriptionsPerConnection: config.maxSubscriptionsPerConnection,
      streamWatch,
      ...(ctx.userGate ? { gate: ctx.userGate } : {}),
    });
  };
  return {
    name: 'graphql',
    server,
    sources,
    userRoutes: server.router,
    attach,
    stop: () => {
      for (const off of unsubscribe) off();
      streamWatch.stop();
      return server.close();
    },
  };
}

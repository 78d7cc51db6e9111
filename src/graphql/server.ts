/**
 * The yoga server: one schema, the gateway's sources and the caller's Access in the context, graphql-armor
 * limits, masked errors, offline GraphiQL, and an express Router mounting it at /graphql behind the user
 * port's gate (src/server/user-auth.ts). WebSocket subscriptions (graphql-ws) attach to the HTTP server
 * separately, authenticate in connection_init, and go through the same envelop plugins.
 */
import type http from 'node:http';
import { EnvelopArmor } from '@escape.tech/graphql-armor';
import type { GraphQLArmorCallbackConfiguration, GraphQLArmorConfig } from '@escape.tech/graphql-armor-types';
import { Router } from 'express';
// The CommonJS copy of graphql, the one the schema is built with (see schema.ts).
import { NoSchemaIntrospectionCustomRule } from 'graphql/validation/rules/custom/NoSchemaIntrospectionCustomRule.js';
import { createGraphQLError, createYoga, type GraphiQLOptions, type Plugin } from 'graphql-yoga';
import { Gauge, Histogram, type Registry } from 'prom-client';
import { NO_TOKEN_MESSAGE } from '../server/authn.js';
import type { Logger } from '../server/log.js';
import { accessOf } from '../server/user-auth.js';
import {
  type CoalescerOptions,
  coalesceResponseWrites,
  createWriteCoalescer,
  type WriteCoalescer,
} from '../server/write-coalescer.js';
import { AnswerReplay } from './answer-replay.js';
import { authorizationExtension, reportingUnavailable } from './authorize.js';
import type { GraphQLContext, GraphQLServerContext, GraphQLSources, GraphQLYoga } from './context.js';
import { DEFAULT_MAX_COST, useCostLimit } from './cost-limit.js';
import { useEventStreamWriter } from './event-stream.js';
import { EXAMPLE_OPERATIONS } from './examples.js';
import { yogaLogger } from './logging.js';
import { gatewayResponseCache, type ResponseCacheOptions } from './response-cache.js';
import { type StreamWatch, useRevokedStreamsEnd } from './revoked-streams.js';
import { graphqlSchema } from './schema.js';
import { useSharedSubscriptions } from './shared-subscriptions.js';
import { attachWebSocket, type WebSocketAttachment, type WebSocketOptions } from './websocket.js';

export const GRAPHQL_ENDPOINT = '/graphql';

/**
 * Armor's validation-time rejections are thrown as bare "Syntax Error: ..." errors without a code;
 * reported through the validation context instead, they become ordinary validation errors with
 * code GRAPHQL_VALIDATION_FAILED (and `limit` naming the protection).
 */
function rejectAsValidationError(limit: string): GraphQLArmorCallbackConfiguration {
  return {
    propagateOnRejection: false,
    onReject: [
      (ctx, err) => {
        ctx?.reportError(
          createGraphQLError(err.message.replace(/^Syntax Error: /, ''), {
            extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit },
          }),
        );
      },
    ],
  };
}

/**
 * Limits sized for this schema: the deepest useful operation (rules → evaluation → eligible → load →
 * requested → cpu) is 6 levels; introspection is exempt from depth, and GraphiQL's introspection query
 * needs under 200 tokens. Armor's cost limit is off: it reads only a literal `first`, so `first: $n`
 * escaped it; cost-limit.ts enforces the cost with the variables' values instead.
 */
export const ARMOR_CONFIG: GraphQLArmorConfig = {
  maxDepth: { n: 8, ignoreIntrospection: true, ...rejectAsValidationError('maxDepth') },
  costLimit: { enabled: false },
  maxAliases: { n: 15, ...rejectAsValidationError('maxAliases') },
  maxDirectives: { n: 50, ...rejectAsValidationError('maxDirectives') },
  // Enforced by the parser: yoga reports it as GRAPHQL_PARSE_FAILED.
  maxTokens: { n: 1000 },
  blockFieldSuggestion: { enabled: true },
};

export interface GraphQLServerOptions {
  sources: GraphQLSources;
  /** The component=graphql logger. */
  log: Logger;
  /** Serve GraphiQL on GET /graphql with Accept: text/html (default true). */
  graphiql?: boolean;
  /** Answer introspection (__schema, __type) (default true; off with --production). */
  introspection?: boolean;
  armor?: GraphQLArmorConfig;
  /** The largest cost an operation may have (cost-limit.ts; default DEFAULT_MAX_COST). */
  maxCost?: number;
  /** Ends SSE subscriptions whose token stops authenticating (revoked-streams.ts); absent: never. */
  streamWatch?: StreamWatch;
  /** Reuse query answers while the data version holds (response-cache.ts); absent: every query executes. */
  responseCache?: ResponseCacheOptions;
  /** Where the subscription write window's metrics go (absent: none). */
  registry?: Registry;
}

export interface GraphQLServer {
  yoga: GraphQLYoga;
  /** Mount on the user-facing app, behind its gate: serves /graphql (POST, GET, SSE, GraphiQL). */
  router: Router;
  /** Serves graphql-ws on the server's upgrade requests for /graphql; returns a handle to close it. */
  attachWebSocket(server: http.Server, opts: WebSocketOptions): WebSocketAttachment;
  /** Closes every WebSocket attached and the yoga instance. */
  close(): Promise<void>;
}

export function graphiqlOptions(): GraphiQLOptions {
  const [first] = EXAMPLE_OPERATIONS;
  return {
    title: 'nodeload GraphQL',
    subscriptionsProtocol: 'SSE',
    ...(first ? { defaultQuery: first.query } : {}),
    defaultTabs: EXAMPLE_OPERATIONS.map((op) => ({
      query: op.query,
      variables: op.variables ? JSON.stringify(op.variables, null, 2) : null,
    })),
  };
}

/**
 * Runs in the GraphiQL page before GraphiQL starts: the token of a `#token=…` fragment (the dashboard's
 * GraphiQL link passes it so) or of this tab's session storage becomes the Authorization header of every
 * tab. The page itself is the same for everyone: no credential is ever rendered into it.
 */
const GRAPHIQL_TOKEN_SCRIPT = `<script>
function nodeloadWithToken(opts) {
  try {
    var key = 'nodeload.token';
    var params = new URLSearchParams(location.hash.slice(1));
    var fromLink = params.get('token');
    if (fromLink) {
      sessionStorage.setItem(key, fromLink);
      params.delete('token');
      var rest = params.toString();
      history.replaceState(null, '', location.pathname + location.search + (rest ? '#' + rest : ''));
    }
    var token = sessionStorage.getItem(key);
    if (!token) return opts;
    var headers = JSON.stringify({ Authorization: 'Bearer ' + token }, null, 2);
    var tabs = (opts.defaultTabs || []).map(function (t) { return Object.assign({}, t, { headers: headers }); });
    return Object.assign({}, opts, { headers: headers, defaultHeaders: headers, defaultTabs: tabs });
  } catch (e) {
    return opts;
  }
}
</script>
</head>`;

/** GraphiQL's page with its options passed through nodeloadWithToken (unchanged if the page's shape differs). */
export function withTokenScript(html: string, opts: GraphiQLOptions): string {
  const json = JSON.stringify(opts);
  const at = html.lastIndexOf(json);
  if (at < 0 || !html.includes('</head>')) return html;
  const page = `${html.slice(0, at)}nodeloadWithToken(${json})${html.slice(at + json.length)}`;
  return page.replace('</head>', GRAPHIQL_TOKEN_SCRIPT);
}

/**
 * The page is ~9 MB with every asset inlined (nothing loads from a CDN); once imported, its module holds
 * ~30 MB of heap for good (the source text and the page as strings). So it is imported on the first
 * GraphiQL request rather than at start, and the page rendered once.
 */
function cachedGraphiQLRenderer(): (opts: GraphiQLOptions) => Promise<string> {
  let html: Promise<string> | undefined;
  return (opts) => {
    html ??= import('@graphql-yoga/render-graphiql').then(
      (m) => withTokenScript(m.renderGraphiQL(opts), opts),
      (err: unknown) => {
        html = undefined;
        throw err;
      },
    );
    return html;
  };
}

/** Adds `extensions.authorization` to a result from which authorization left something out. */
function useAuthorizationExtensions(): Plugin<GraphQLContext> {
  return {
    onExecute: () => ({
      onExecuteDone({ args, result, setResult }) {
        if (Symbol.asyncIterator in result) return;
        const authorization = authorizationExtension(args.contextValue.omitted);
        if (authorization) setResult({ ...result, extensions: { ...result.extensions, authorization } });
      },
    }),
  };
}

function useNoIntrospection(): Plugin {
  return {
    onValidate: ({ addValidationRule }) => {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}

/** `pushWindow`: subscription results pushed over SSE are gathered per write window (event-stream.ts). */
export function createGraphQLYoga(
  opts: GraphQLServerOptions,
  pushWindow?: Pick<WriteCoalescer, 'later'>,
): GraphQLYoga {
  return yogaWithReplay(opts, pushWindow).yoga;
}

/** The yoga server, and with a response cache, the replay of its answers (answer-replay.ts). */
function yogaWithReplay(
  opts: GraphQLServerOptions,
  pushWindow?: Pick<WriteCoalescer, 'later'>,
): { yoga: GraphQLYoga; replay?: AnswerReplay } {
  const cacheOpts = opts.responseCache;
  const cache = cacheOpts && gatewayResponseCache(cacheOpts);
  const replay =
    cacheOpts &&
    cache &&
    new AnswerReplay({
      version: cacheOpts.version,
      cachedUntil: cache.cache.cachedUntil,
      onReplay: cache.countReplay,
      ...(cacheOpts.replayMaxBytes ? { maxBytes: cacheOpts.replayMaxBytes } : {}),
    });
  const yoga = createYoga<GraphQLServerContext, GraphQLContext>({
    schema: graphqlSchema(),
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    // Whoever reached here passed the gate (a request without one is a bug: refuse rather than serve).
    context: ({ req, access: given }): GraphQLContext => {
      const access = given ?? (req ? accessOf(req) : undefined);
      if (!access) {
        throw createGraphQLError(NO_TOKEN_MESSAGE, {
          extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
        });
      }
      return { sources: opts.sources, access: reportingUnavailable(access), omitted: new Map() };
    },
    logging: yogaLogger(opts.log),
    // Never the original error (and its stack) in a response, whatever NODE_ENV says.
    maskedErrors: { isDev: false },
    graphiql: opts.graphiql === false ? false : graphiqlOptions(),
    renderGraphiQL: cachedGraphiQLRenderer(),
    landingPage: false,
    // The user port answers CORS itself (src/server/cors.ts: closed unless allow-listed); no uploads.
    cors: false,
    multipart: false,
    plugins: [
      ...new EnvelopArmor(opts.armor ?? ARMOR_CONFIG).protect().plugins,
      // Before the plugins that replace execution (shared subscriptions, the response cache): a refused
      // operation never reaches them.
      useCostLimit({ maxCost: opts.maxCost ?? DEFAULT_MAX_COST }),
      ...(opts.introspection === false ? [useNoIntrospection()] : []),
      useSharedSubscriptions(),
      useEventStreamWriter(pushWindow),
      useAuthorizationExtensions(),
      ...(opts.streamWatch ? [useRevokedStreamsEnd(opts.streamWatch)] : []),
      ...(cache ? [cache.plugin] : []),
      ...(replay ? [replay.plugin()] : []),
    ],
  });
  return replay ? { yoga, replay } : { yoga };
}

/**
 * The write window's metrics: how long subscribers' messages may wait before they leave (the window
 * widens from 20 to 100 ms while flushing costs more than a quarter of the time) and what flushes cost.
 */
function pushWriteMetrics(
  registry: Registry,
  windowMs: () => number,
): NonNullable<CoalescerOptions['onFlush']> {
  new Gauge({
    name: 'nodeload_graphql_push_write_window_seconds',
    help: 'The current window subscription messages are gathered in before each connection is written to once (adapts between 0.02 and 0.1 s).',
    registers: [registry],
    collect() {
      this.set(windowMs() / 1000);
    },
  });
  const flush = new Histogram({
    name: 'nodeload_graphql_push_flush_duration_seconds',
    help: 'Time to write out every subscription connection that gathered messages in one window.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers: [registry],
  });
  const connections = new Histogram({
    name: 'nodeload_graphql_push_flush_connections',
    help: 'Subscription connections written to per flush.',
    buckets: [1, 10, 50, 100, 250, 500, 1000, 2500],
    registers: [registry],
  });
  return (count, seconds) => {
    flush.observe(seconds);
    connections.observe(count);
  };
}

export function createGraphQLServer(opts: GraphQLServerOptions): GraphQLServer {
  // One window for every subscriber's writes, SSE and graphql-ws alike.
  const onFlush = opts.registry ? pushWriteMetrics(opts.registry, () => coalescer.windowMs) : undefined;
  const coalescer = createWriteCoalescer(onFlush ? { onFlush } : {});
  const { yoga, replay } = yogaWithReplay(opts, coalescer);
  const router = Router();
  // Yoga reads req.originalUrl, so mounting under the endpoint path keeps its URL matching intact.
  // requestListener writes the response and handles its own errors (masked, logged).
  router.use(yoga.graphqlEndpoint, (req, res) => {
    if (replay?.serve(req, res)) return;
    if (req.headers.accept?.includes('text/event-stream')) coalesceResponseWrites(res, coalescer);
    void yoga.requestListener(req, res);
  });
  const attachments: WebSocketAttachment[] = [];
  return {
    yoga,
    router,
    attachWebSocket(server, wsOpts) {
      const attachment = attachWebSocket(yoga, server, opts.log, { writeCoalescer: coalescer, ...wsOpts });
      attachments.push(attachment);
      return attachment;
    },
    async close() {
      await Promise.all(attachments.map((a) => a.close()));
      await yoga.dispose();
      coalescer.flush();
    },
  };
}

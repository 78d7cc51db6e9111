/**
 * The yoga server: one schema, the gateway's sources and the caller's Access in the context, graphql-armor
 * limits, masked errors, offline GraphiQL, and an express Router mounting it at /graphql behind the user
 * port's gate (src/server/user-auth.ts). WebSocket subscriptions (graphql-ws) attach to the HTTP server
 * separately, authenticate in connection_init, and go through the same envelop plugins.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { EnvelopArmor } from '@escape.tech/graphql-armor';
import type { GraphQLArmorCallbackConfiguration, GraphQLArmorConfig } from '@escape.tech/graphql-armor-types';
import { Router } from 'express';
import type { ExecutionArgs, GraphQLError } from 'graphql';
// The CommonJS copy of graphql, the one the schema is built with (see schema.ts).
import { NoSchemaIntrospectionCustomRule } from 'graphql/validation/rules/custom/NoSchemaIntrospectionCustomRule.js';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import {
  createGraphQLError,
  createYoga,
  type GraphiQLOptions,
  type Plugin,
  type YogaServerInstance,
} from 'graphql-yoga';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Access } from '../server/access.js';
import { NO_TOKEN_MESSAGE } from '../server/authn.js';
import { originAllowed } from '../server/cors.js';
import type { Logger } from '../server/log.js';
import { accessOf, type UserPortAuth } from '../server/user-auth.js';
import { GateBusyError, type UserPortGate } from '../server/user-port-gate.js';
import { authorizationExtension, reportingUnavailable } from './authorize.js';
import type { GraphQLContext, GraphQLSources } from './context.js';
import { DEFAULT_MAX_COST, useCostLimit } from './cost-limit.js';
import { EXAMPLE_OPERATIONS } from './examples.js';
import { yogaLogger } from './logging.js';
import { type ResponseCacheOptions, useGatewayResponseCache } from './response-cache.js';
import { type StreamWatch, useRevokedStreamsEnd } from './revoked-streams.js';
import { graphqlSchema } from './schema.js';
import {
  expandSharedPayloads,
  serialisedOf,
  sharedPayloadReplacer,
  useSharedSubscriptions,
} from './shared-subscriptions.js';

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
}

export interface WebSocketOptions {
  /**
   * Authenticates each connection's token (connection_init payload `authorization`, or the upgrade's
   * header), given the upgrade's Host (a tokenless connection is anonymous only for a loopback Host)
   * and its socket (a TLS client certificate, with --user-client-ca-file).
   */
  auth: Pick<UserPortAuth, 'authenticate'>;
  /** Origins other than the page's own allowed to open a socket (--cors-allowed-origins). */
  allowedOrigins?: readonly string[];
  /** Largest message accepted (default 1 MiB); a bigger one closes the socket (1009). */
  maxPayloadBytes?: number;
  /** Operations one connection may have running at once (default 100). */
  maxSubscriptionsPerConnection?: number;
  /** Closes a connection (4401) once its token stops authenticating; absent: never re-checked. */
  streamWatch?: StreamWatch;
  /** The user port's gate (src/server/user-port-gate.ts): queries and mutations take their turn as HTTP ones do. */
  gate?: Pick<UserPortGate, 'acquire'>;
}

/**
 * What the server context carries in: the HTTP request, whose Access the user port's gate set, or (a
 * WebSocket operation) the connection's Access.
 */
export interface GraphQLServerContext {
  req?: http.IncomingMessage;
  access?: Access | undefined;
}

export type GraphQLYoga = YogaServerInstance<GraphQLServerContext, GraphQLContext>;

export interface GraphQLServer {
  yoga: GraphQLYoga;
  /** Mount on the user-facing app, behind its gate: serves /graphql (POST, GET, SSE, GraphiQL). */
  router: Router;
  /** Serves graphql-ws on the server's upgrade requests for /graphql; returns a handle to close it. */
  attachWebSocket(server: http.Server, opts: WebSocketOptions): WebSocketAttachment;
  /** Closes every WebSocket attached and the yoga instance. */
  close(): Promise<void>;
}

export interface WebSocketAttachment {
  wss: WebSocketServer;
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

export function createGraphQLYoga(opts: GraphQLServerOptions): GraphQLYoga {
  return createYoga<GraphQLServerContext, GraphQLContext>({
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
      useAuthorizationExtensions(),
      ...(opts.streamWatch ? [useRevokedStreamsEnd(opts.streamWatch)] : []),
      ...(opts.responseCache ? [useGatewayResponseCache(opts.responseCache)] : []),
    ],
  });
}

/** By name, not instanceof: a test runner may load a second copy of graphql (see schema.ts). */
function isGraphQLError(err: unknown): err is GraphQLError {
  return err instanceof Error && err.name === 'GraphQLError';
}

interface EnvelopedRoot {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

function upgradePath(req: http.IncomingMessage): string {
  try {
    return new URL(req.url ?? '/', 'http://localhost').pathname;
  } catch {
    return '';
  }
}

/** WebSocket close reasons are at most 123 bytes. */
function closeReason(text: string): string {
  return Buffer.byteLength(text) <= 123 ? text : `${Buffer.from(text).subarray(0, 120).toString()}...`;
}

/** The token of a connection: connection_init's `authorization` (browsers cannot set headers), else the upgrade's. */
function connectionAuthorization(
  params: Record<string, unknown> | undefined,
  req: http.IncomingMessage,
): string | undefined {
  const fromInit = params?.['authorization'] ?? params?.['Authorization'];
  return typeof fromInit === 'string' ? fromInit : req.headers.authorization;
}

/**
 * How a connection_init refused by the user port's auth closes: 4401 (graphql-ws clients do not retry),
 * 4403 (an anonymous connection for a Host other than loopback), and 1013 "try again later" when the
 * TokenReview could not be made: clients retry that one (4500 they would take as fatal).
 */
const REFUSAL_CLOSE = {
  401: [CloseCode.Unauthorized, 'Unauthorized'],
  403: [CloseCode.Forbidden, 'Forbidden'],
  503: [1013, 'Unavailable'],
} as const;

export const DEFAULT_WS_MAX_PAYLOAD = 1024 * 1024;
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION = 100;

/**
 * graphql-ws over `ws`, on upgrade requests for the GraphQL path only (other paths are left to other
 * upgrade listeners, or refused when there is none), from pages of allowed origins only. Each connection
 * authenticates in connection_init (4401 when it cannot, 4403 anonymous for a Host other than loopback,
 * 1013 while the TokenReview cannot be made) and, with `streamWatch`, closes with 4401 once its
 * token stops authenticating; every operation is built with yoga.getEnveloped, so parse/validate/execute
 * run the same plugins (armor, cost, masking, logging, authorization) as HTTP requests.
 */
/**
 * A query or mutation over the socket runs when the gate gives it a turn, so a WebSocket flood cannot do
 * what an HTTP one cannot; refused, the operation gets SERVICE_UNAVAILABLE and the socket stays open.
 * Subscriptions are not gated: their start is cheap and their events are pushed, not asked for.
 */
async function gatedExecute(gate: WebSocketOptions['gate'], run: () => unknown): Promise<unknown> {
  if (!gate) return run();
  let release: () => void;
  try {
    release = await gate.acquire();
  } catch (err) {
    if (!(err instanceof GateBusyError)) throw err;
    return {
      errors: [
        createGraphQLError(err.message, { extensions: { code: 'SERVICE_UNAVAILABLE', reason: err.reason } }),
      ],
    };
  }
  try {
    return await run();
  } finally {
    release();
  }
}

export function attachWebSocket(
  yoga: GraphQLYoga,
  server: http.Server,
  log: Logger,
  opts: WebSocketOptions,
): WebSocketAttachment {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: opts.maxPayloadBytes ?? DEFAULT_WS_MAX_PAYLOAD,
  });
  const maxSubscriptions = opts.maxSubscriptionsPerConnection ?? DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION;
  const accesses = new WeakMap<WebSocket, Access>();
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    if (upgradePath(req) !== yoga.graphqlEndpoint) {
      if (server.listenerCount('upgrade') === 1) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      }
      return;
    }
    if (!originAllowed(req.headers.origin, req.headers.host, opts.allowedOrigins ?? [])) {
      log.debug({ origin: req.headers.origin }, 'websocket from a page of another origin refused');
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  };
  server.on('upgrade', onUpgrade);
  // Registered before graphql-ws's own connection handler: shared payloads go out as their cached JSON.
  wss.on('connection', (ws) => {
    const send = ws.send.bind(ws);
    ws.send = ((data: unknown, ...rest: unknown[]) =>
      (send as (...a: unknown[]) => void)(expandSharedPayloads(data), ...rest)) as typeof ws.send;
  });

  const disposable = useServer<Record<string, unknown> | undefined>(
    {
      execute: (args) =>
        gatedExecute(opts.gate, () => (args.rootValue as EnvelopedRoot).execute(args)) as never,
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
      onConnect: async (ctx) => {
        const authorization = connectionAuthorization(ctx.connectionParams, ctx.extra.request);
        const request = ctx.extra.request;
        const result = await opts.auth.authenticate(authorization, request.headers.host, request.socket);
        if (!result.ok) {
          // Returning false afterwards closes nothing twice.
          const [code, what] = REFUSAL_CLOSE[result.status];
          ctx.extra.socket.close(code, closeReason(`${what}: ${result.message}`));
          return false;
        }
        accesses.set(ctx.extra.socket, result.access);
        const socket = ctx.extra.socket;
        // A connection its client certificate authenticated is not ended by the token it may carry too.
        const unwatch =
          result.credential === 'token'
            ? opts.streamWatch?.watch(authorization, (reason) =>
                socket.close(CloseCode.Unauthorized, closeReason(`Unauthorized: ${reason}`)),
              )
            : undefined;
        if (unwatch) socket.once('close', unwatch);
        return true;
      },
      onSubscribe: async (ctx, _id, params) => {
        if (Object.keys(ctx.subscriptions).length > maxSubscriptions) {
          return [
            createGraphQLError(`too many operations on this connection (at most ${maxSubscriptions})`, {
              extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' },
            }),
          ];
        }
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
          access: accesses.get(ctx.extra.socket),
        });
        let document: ReturnType<typeof parse>;
        try {
          document = parse(params.query);
        } catch (err) {
          // Syntax errors and armor's token limit: report them as GraphQL errors instead of closing the socket.
          if (isGraphQLError(err)) return [err];
          throw err;
        }
        const errors = validate(schema, document);
        if (errors.length > 0) return errors;
        return {
          schema,
          document,
          operationName: params.operationName ?? null,
          variableValues: params.variables ?? null,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe } satisfies EnvelopedRoot,
        };
      },
      onError: (_ctx, _id, _payload, errors) => {
        log.debug({ errors: errors.map((e) => e.message) }, 'websocket operation failed');
      },
      // A shared, error-free result goes out as itself (its JSON is cached), not as a per-socket copy.
      onNext: (_ctx, _id, _payload, _args, result) =>
        serialisedOf(result) !== undefined && !result.errors ? (result as never) : undefined,
      jsonMessageReplacer: sharedPayloadReplacer,
    },
    wss,
  );
  log.debug({ path: yoga.graphqlEndpoint }, 'graphql-ws attached');

  let closed: Promise<void> | undefined;
  return {
    wss,
    close() {
      closed ??= (async () => {
        server.off('upgrade', onUpgrade);
        await disposable.dispose();
        for (const client of wss.clients) client.terminate();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
      })();
      return closed;
    },
  };
}

export function createGraphQLServer(opts: GraphQLServerOptions): GraphQLServer {
  const yoga = createGraphQLYoga(opts);
  const router = Router();
  // Yoga reads req.originalUrl, so mounting under the endpoint path keeps its URL matching intact.
  // requestListener writes the response and handles its own errors (masked, logged).
  router.use(yoga.graphqlEndpoint, (req, res) => {
    void yoga.requestListener(req, res);
  });
  const attachments: WebSocketAttachment[] = [];
  return {
    yoga,
    router,
    attachWebSocket(server, wsOpts) {
      const attachment = attachWebSocket(yoga, server, opts.log, wsOpts);
      attachments.push(attachment);
      return attachment;
    },
    async close() {
      await Promise.all(attachments.map((a) => a.close()));
      await yoga.dispose();
    },
  };
}

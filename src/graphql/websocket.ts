/**
 * graphql-ws on the user port: upgrades for the GraphQL path, authenticated in connection_init, every
 * operation built with yoga.getEnveloped so the same plugins run as over HTTP, and shared
 * subscriptions written straight to the socket (ResultQueue.attach).
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ExecutionArgs, ExecutionResult, GraphQLError } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { createGraphQLError } from 'graphql-yoga';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Access } from '../server/access.js';
import { originAllowed } from '../server/cors.js';
import type { Logger } from '../server/log.js';
import type { UserPortAuth } from '../server/user-auth.js';
import { GateBusyError, type UserPortGate } from '../server/user-port-gate.js';
import type { WriteCoalescer } from '../server/write-coalescer.js';
import type { GraphQLYoga } from './context.js';
import type { StreamWatch } from './revoked-streams.js';
import {
  expandSharedPayloads,
  serialisedOf,
  sharedPayloadReplacer,
  takeDirectQueue,
} from './shared-subscriptions.js';

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
  /** Batches each socket's messages into one write per window (absent: every message is its own write). */
  writeCoalescer?: WriteCoalescer;
}

export interface WebSocketAttachment {
  wss: WebSocketServer;
  close(): Promise<void>;
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

/** Bytes a socket may hold unsent before a subscription written straight to it fails as too slow. */
const WS_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** A result's payload as UTF-8, built once however many sockets it goes to. */
const PAYLOAD_BYTES = new WeakMap<ExecutionResult, Buffer>();
const CLOSE_BRACE = 0x7d;

function payloadBytesOf(result: ExecutionResult): Buffer {
  let bytes = PAYLOAD_BYTES.get(result);
  if (!bytes) {
    bytes = Buffer.from(serialisedOf(result) ?? JSON.stringify(result));
    PAYLOAD_BYTES.set(result, bytes);
  }
  return bytes;
}

/** One gathered `next` message: its operation's prefix (`{"id":…,"type":"next","payload":`) and result. */
interface GatheredNext {
  prefix: Buffer;
  result: ExecutionResult;
}

/**
 * `next` messages as unmasked, unfragmented WebSocket text frames (RFC 6455 §5.2: FIN + opcode 1, then
 * a 7-bit, 16-bit or 64-bit length), in one buffer: what ws's Sender would write for each message,
 * without a header buffer, a string encode and two writes per message and socket.
 */
export function textFrames(messages: readonly GatheredNext[]): Buffer {
  let total = 0;
  for (const m of messages) {
    const length = m.prefix.length + payloadBytesOf(m.result).length + 1;
    total += length + (length < 126 ? 2 : length < 65_536 ? 4 : 10);
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (const m of messages) {
    const payload = payloadBytesOf(m.result);
    const length = m.prefix.length + payload.length + 1;
    out[at++] = 0x81;
    if (length < 126) out[at++] = length;
    else if (length < 65_536) {
      out[at++] = 126;
      at = out.writeUInt16BE(length, at);
    } else {
      out[at++] = 127;
      at = out.writeBigUInt64BE(BigInt(length), at);
    }
    at += m.prefix.copy(out, at);
    at += payload.copy(out, at);
    out[at++] = CLOSE_BRACE;
  }
  return out;
}

/**
 * A socket's `next` messages of shared subscriptions, gathered over the write window and written as
 * one chunk of frames when it ends. Anything else sent on the socket (graphql-ws's own messages: a
 * result with errors, `complete`, pings) first writes what was gathered, so the order holds.
 */
interface SocketGather {
  add(prefix: Buffer, result: ExecutionResult): void;
  flush(): void;
}

function socketGather(ws: WebSocket, socket: Socket, coalescer: WriteCoalescer): SocketGather {
  let gathered: GatheredNext[] = [];
  const flush = () => {
    if (gathered.length === 0) return;
    const run = gathered;
    gathered = [];
    if (ws.readyState !== ws.OPEN) return; // closing: graphql-ws ends the operations
    coalescer.hold(socket);
    socket.write(textFrames(run));
  };
  return {
    add(prefix, result) {
      gathered.push({ prefix, result });
      if (gathered.length === 1) coalescer.later(flush);
    },
    flush,
  };
}

/**
 * A shared subscription over graphql-ws: its error-free results are written to the socket as they are
 * published (ResultQueue.attach), as the `next` message graphql-ws would send, built around the
 * result's cached JSON; with `gather`, as frames written once per window. graphql-ws still iterates the
 * stream for the rest (results with errors, the end, `complete`), so its bookkeeping of the operation
 * is unchanged.
 */
function attachDirectWebSocketWriter(
  context: unknown,
  result: unknown,
  gatherOf: (socket: WebSocket) => SocketGather | undefined,
): void {
  const { socket, operationId } = (context ?? {}) as { socket?: WebSocket; operationId?: string };
  if (!socket || operationId === undefined || typeof result !== 'object' || result === null) return;
  if (!(Symbol.asyncIterator in result)) return;
  const queue = takeDirectQueue(socket, operationId);
  if (!queue) return;
  const prefix = `{"id":${JSON.stringify(operationId)},"type":"next","payload":`;
  const gather = gatherOf(socket);
  const prefixBytes = Buffer.from(prefix);
  queue.attach((r) => {
    if (socket.readyState !== socket.OPEN) return true; // closing: graphql-ws ends the operation
    if (socket.bufferedAmount > WS_MAX_BUFFERED_BYTES) return false;
    if (gather) gather.add(prefixBytes, r);
    else socket.send(`${prefix}${serialisedOf(r) ?? JSON.stringify(r)}}`);
    return true;
  });
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
/** Buffered bytes below which a graphql-ws message counts as sent once queued (see attachWebSocket). */
const WS_EARLY_ACK_BYTES = 1024 * 1024;
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
    // No compression (ws's default, said outright): gathered frames are written to the socket beside
    // ws's Sender (socketGather), which only writes in order while it has no deflate in progress.
    perMessageDeflate: false,
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
  // Registered before graphql-ws's own connection handler: shared payloads go out as their cached JSON,
  // and a burst of messages to one socket leaves as one write (write-coalescer.ts).
  const coalescer = opts.writeCoalescer;
  const gathers = new WeakMap<WebSocket, SocketGather>();
  wss.on('connection', (ws, req: http.IncomingMessage) => {
    const send = ws.send.bind(ws) as (...a: unknown[]) => void;
    const socket = req.socket;
    const gather = coalescer ? socketGather(ws, socket, coalescer) : undefined;
    if (gather) gathers.set(ws, gather);
    ws.send = ((data: unknown, ...rest: unknown[]) => {
      const message = expandSharedPayloads(data);
      if (!coalescer) return send(message, ...rest);
      gather?.flush();
      coalescer.hold(socket);
      // graphql-ws waits for each message's write callback before it sends the next: held until the
      // window ends, that would allow one message per window and a subscriber per socket would fall
      // behind any faster stream. So the callback comes once the message is queued, while the socket
      // has little buffered; past WS_EARLY_ACK_BYTES it waits for the write again, which is what
      // slows a slow client's subscriptions (their queues, not the socket's buffer, then fill).
      const done = rest.at(-1);
      if (typeof done !== 'function' || ws.readyState !== ws.OPEN || ws.bufferedAmount >= WS_EARLY_ACK_BYTES)
        return send(message, ...rest);
      send(message, ...rest.slice(0, -1));
      process.nextTick(done as () => void);
    }) as typeof ws.send;
  });

  const disposable = useServer<Record<string, unknown> | undefined>(
    {
      execute: (args) =>
        gatedExecute(opts.gate, () => (args.rootValue as EnvelopedRoot).execute(args)) as never,
      subscribe: async (args) => {
        const result = await (args.rootValue as EnvelopedRoot).subscribe(args);
        attachDirectWebSocketWriter(args.contextValue, result, (ws) => gathers.get(ws));
        return result as never;
      },
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
      onSubscribe: async (ctx, id, params) => {
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
          operationId: id,
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

/**
 * Subscription fan-out that does the work once per event, not once per subscriber: subscribers asking
 * the same operation with the same variables share one execution (a hub), and each result carries its
 * JSON, computed once on first use. Yoga's SSE writer asks the result for it (`result.stringify`);
 * graphql-ws gets a token in place of the payload that the socket's send swaps for the shared JSON
 * (see `sharedPayloadReplacer` and `expandSharedPayloads`).
 *
 * Sharing an execution means sharing its context, and what a subscriber sees depends on who they are
 * (authorize.ts filters events by the namespaces the user may read): so only the same user's identical
 * operations share one (the hub key holds the context's `access.key`).
 *
 * Slow clients. The one execution is never held back by a subscriber: each subscriber has its own
 * queue of `subscriberBuffer` results (default 10,000; result-queue.ts). A subscriber that falls further
 * behind has its own stream failed with an error instead of silently losing events: it knows to
 * resubscribe and refetch. The others go on.
 * Events are dropped only before execution, when the shared execution itself falls behind the bus
 * (stream.ts: the oldest go first).
 */
import type { ExecutionResult } from 'graphql';
import { print } from 'graphql/language/printer.js';
import type { Plugin } from 'graphql-yoga';
import { ResultQueue } from './result-queue.js';

const SERIALISED = Symbol('nodeload.serialised');

type Shared = ExecutionResult & { [SERIALISED]?: () => string };

/** Gives a result a lazily computed, cached JSON form (non-enumerable, so it is not serialised itself). */
export function shareSerialisation<T extends ExecutionResult>(result: T): T {
  let json: string | undefined;
  const serialised = () => {
    json ??= JSON.stringify(result);
    return json;
  };
  Object.defineProperty(result, SERIALISED, { value: serialised, enumerable: false });
  // Yoga's SSE and multipart writers call result.stringify(sanitised) when present; sanitised is the
  // result itself unless it has errors (then a copy without this property is serialised normally).
  Object.defineProperty(result, 'stringify', { value: serialised, enumerable: false });
  return result;
}

export function serialisedOf(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? (value as Shared)[SERIALISED]?.() : undefined;
}

/** Results a subscriber may fall behind by before its stream fails (rather than silently dropping any). */
const SUBSCRIBER_BUFFER = 10_000;

interface Hub {
  subscribe(): ResultQueue;
}

function createHub(source: AsyncIterable<ExecutionResult>, bufferSize: number, onClosed: () => void): Hub {
  const listeners = new Set<ResultQueue>();
  const iterator = source[Symbol.asyncIterator]();
  let running = false;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    onClosed();
    await iterator.return?.();
  };
  const leave = (queue: ResultQueue) => {
    listeners.delete(queue);
    if (listeners.size === 0) void close();
  };
  const pump = async () => {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        const shared = shareSerialisation(next.value);
        // A full queue has failed itself (its subscriber gets the error after what it had queued): it
        // leaves, and the execution every other subscriber shares goes on.
        for (const queue of listeners) if (!queue.push(shared)) leave(queue);
      }
      for (const queue of listeners) queue.end();
    } catch (err) {
      for (const queue of listeners) queue.fail(err);
    } finally {
      await close();
    }
  };
  return {
    subscribe: () => {
      const queue: ResultQueue = new ResultQueue(bufferSize, () => leave(queue));
      if (closed) {
        queue.end();
        return queue;
      }
      listeners.add(queue);
      if (!running) {
        running = true;
        void pump();
      }
      return queue;
    },
  };
}

/**
 * Subscribers' queues by who reads them, for a transport to attach its writer to (ResultQueue.attach):
 * an SSE subscription's by its request (event-stream.ts), a graphql-ws one's by its socket and
 * operation id (server.ts). Taken once; what is never taken goes with its owner.
 */
const directQueues = new WeakMap<object, Map<string, ResultQueue>>();

interface DirectOwner {
  socket?: object;
  request?: object;
  operationId?: string;
}

function offerDirect(context: unknown, queue: ResultQueue): void {
  const { socket, request, operationId = '' } = (context ?? {}) as DirectOwner;
  const owner = socket ?? request;
  if (typeof owner !== 'object' || owner === null) return;
  const byId = directQueues.get(owner) ?? new Map<string, ResultQueue>();
  directQueues.set(owner, byId);
  byId.set(operationId, queue);
}

/** The shared subscription's queue of the operation `id` of `owner` (a socket, or an SSE request), once. */
export function takeDirectQueue(owner: object, id = ''): ResultQueue | undefined {
  const byId = directQueues.get(owner);
  const queue = byId?.get(id);
  if (queue) byId?.delete(id);
  return queue;
}

function isAsyncIterable(v: unknown): v is AsyncIterable<ExecutionResult> {
  return typeof v === 'object' && v !== null && Symbol.asyncIterator in v;
}

/** The envelop plugin: identical subscriptions share one execution and one serialisation per event. */
export function useSharedSubscriptions(opts: { subscriberBuffer?: number } = {}): Plugin {
  const bufferSize = opts.subscriberBuffer ?? SUBSCRIBER_BUFFER;
  const hubs = new Map<string, Promise<Hub | undefined>>();
  return {
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      setSubscribeFn((async (args: Parameters<typeof subscribeFn>[0]) => {
        const user = (args.contextValue as { access?: { key: string } } | undefined)?.access?.key ?? '';
        const key = JSON.stringify([
          user,
          print(args.document),
          args.variableValues ?? {},
          args.operationName ?? null,
        ]);
        let hub = hubs.get(key);
        if (!hub) {
          let direct: Awaited<ReturnType<typeof subscribeFn>> | undefined;
          hub = (async () => {
            const source = await subscribeFn(args);
            if (!isAsyncIterable(source)) {
              direct = source; // an error result: nothing to share
              hubs.delete(key);
              return undefined;
            }
            return createHub(source, bufferSize, () => {
              if (hubs.get(key) === hub) hubs.delete(key);
            });
          })();
          hubs.set(key, hub);
          const created = await hub;
          if (!created) return direct;
          const queue = created.subscribe();
          offerDirect(args.contextValue, queue);
          return queue;
        }
        const existing = await hub;
        if (!existing) return subscribeFn(args);
        const queue = existing.subscribe();
        offerDirect(args.contextValue, queue);
        return queue;
      }) as typeof subscribeFn);
    },
  };
}

/**
 * graphql-ws side. The replacer puts a token where a shared payload goes and remembers its JSON;
 * graphql-ws sends the message in the same tick, where expandSharedPayloads swaps the token back.
 */
const TOKEN = '\u0001nodeload-shared-payload';
const TOKEN_JSON = JSON.stringify(TOKEN);
let pendingPayload: string | undefined;

export function sharedPayloadReplacer(key: string, value: unknown): unknown {
  if (key !== 'payload') return value;
  const json = serialisedOf(value);
  if (json === undefined) return value;
  pendingPayload = json;
  return TOKEN;
}

export function expandSharedPayloads(data: unknown): unknown {
  if (pendingPayload === undefined || typeof data !== 'string') return data;
  const json = pendingPayload;
  pendingPayload = undefined;
  const at = data.indexOf(TOKEN_JSON);
  return at < 0 ? data : data.slice(0, at) + json + data.slice(at + TOKEN_JSON.length);
}

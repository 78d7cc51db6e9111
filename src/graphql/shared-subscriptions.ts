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
 * buffer of `subscriberBuffer` results (default 10,000). A subscriber that falls further behind (plus
 * the 1,024 pending pushes a Repeater queues beyond its buffer) has its own stream failed with an
 * error instead of silently losing events: it knows to resubscribe and refetch. The others go on.
 * Events are dropped only before execution, when the shared execution itself falls behind the bus
 * (stream.ts: the oldest go first).
 */
import type { ExecutionResult } from 'graphql';
import { print } from 'graphql/language/printer.js';
import { FixedBuffer, type Plugin, Repeater } from 'graphql-yoga';

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
  subscribe(): AsyncIterableIterator<ExecutionResult>;
}

function createHub(source: AsyncIterable<ExecutionResult>, bufferSize: number, onClosed: () => void): Hub {
  type Listener = { push: (r: ExecutionResult) => unknown; stop: (err?: unknown) => unknown };
  const listeners = new Set<Listener>();
  const iterator = source[Symbol.asyncIterator]();
  let running = false;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    onClosed();
    await iterator.return?.();
  };
  const pump = async () => {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        const shared = shareSerialisation(next.value);
        for (const l of listeners) {
          try {
            void Promise.resolve(l.push(shared)).catch((err) => l.stop(err));
          } catch (err) {
            // Repeater throws synchronously once this subscriber's buffer and push queue are full:
            // fail this subscriber alone, not the execution every other subscriber shares.
            listeners.delete(l);
            l.stop(err);
          }
        }
      }
      for (const l of listeners) l.stop();
    } catch (err) {
      for (const l of listeners) l.stop(err);
    } finally {
      await close();
    }
  };
  return {
    subscribe: () =>
      new Repeater<ExecutionResult>(async (push, stop) => {
        const listener: Listener = { push, stop };
        listeners.add(listener);
        if (!running) {
          running = true;
          void pump();
        }
        await stop;
        listeners.delete(listener);
        if (listeners.size === 0) await close();
      }, new FixedBuffer(bufferSize)),
  };
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
          return created ? created.subscribe() : direct;
        }
        const existing = await hub;
        return existing ? existing.subscribe() : subscribeFn(args);
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

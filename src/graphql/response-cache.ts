/**
 * Query results reused while nothing they could show has changed. A `nodes` query at 1,000 nodes is a
 * full execution of thousands of fields (several milliseconds of the event loop the webhook and the
 * scheduler share); a dashboard or fifty of them asking again and again between two changes get the
 * same answer from memory instead. The plugin in response-cache-plugin.ts stores and serves the answers
 * (in the in-memory LRU of yoga's response-cache package); this module says when an answer is still good:
 *
 *  - the key holds the data version: a counter every change the gateway's views can show bumps (the
 *    cluster cache's topics, load figures, the scheduler's decisions, the operator's passes), so an
 *    answer is never older than the last change the gateway knew of when it was asked;
 *  - and a short time to live bounds what no event announces (ages, a leader change): 1 s by default;
 *  - per user (the Access key): what one user may read is never served to another;
 *  - subscriptions are never cached (the plugin only caches query operations), nor are results with
 *    errors, nor the scheduler status (it follows the lease, which no view's event carries), nor
 *    anything asked over graphql-ws (it bypasses yoga's request pipeline, where answers are keyed).
 */
import { type Cache, createInMemoryCache, hashSHA256 } from '@graphql-yoga/plugin-response-cache';
import type { Plugin } from 'graphql-yoga';
import { Counter, type Registry } from 'prom-client';
import type { Access } from '../server/access.js';
import { accessOf } from '../server/user-auth.js';
import type { GraphQLServerContext } from './context.js';
import { useVersionedResponseCache } from './response-cache-plugin.js';

/** Changes the views can show: each bumps the version, which invalidates every cached answer. */
export class DataVersion {
  private value = 0;

  get current(): number {
    return this.value;
  }

  readonly bump = (): void => {
    this.value++;
  };
}

export interface ResponseCacheOptions {
  version: DataVersion;
  /** Upper bound on an answer's age, in ms (default 1000). */
  ttlMs?: number;
  /** Cached answers kept at most (default 500; least recently used go first). */
  maxEntries?: number;
  /** Counts lookups by result (hit, miss): how often the views' data changes faster than it is asked. */
  registry?: Registry;
  /** Bytes of answers kept to be written again without yoga (answer-replay.ts; default 32 MiB). */
  replayMaxBytes?: number;
}

/**
 * Who asks. The cache is consulted before the operation's context is built, so this reads what the
 * user port's gate left on the request (HTTP, SSE) or what the WebSocket connection carries.
 */
function askingUser(context: GraphQLServerContext): Access | undefined {
  return context.access ?? (context.req ? accessOf(context.req) : undefined);
}

/**
 * The in-memory cache holding answers of the current data version only. Keys carry the version, so an
 * answer of an older one is never served again; but the LRU keeps it (and lets its time to live run
 * out only when touched) until `max` newer ones push it out. During a scheduling burst every binding
 * bumps the version: with 500 kept `nodes` answers of ~1 MB of objects each at 1,000 nodes, the
 * gateway ran out of its 640 MiB heap under a GraphQL flood. Here a new version starts a new cache.
 */
export function versionScopedCache(
  version: DataVersion,
  make: () => Cache,
  lookups?: Counter<'result'>,
): ScopedCache {
  let at = version.current;
  let inner = make();
  // When each answer of this version runs out (answer-replay.ts replays it no longer); the LRU's own
  // bound keeps this one's size.
  let until = new Map<string, number>();
  const current = (): Cache => {
    if (version.current !== at) {
      at = version.current;
      inner = make();
      until = new Map();
    }
    return inner;
  };
  const count = <A>(answer: A): A => {
    lookups?.inc({ result: answer == null ? 'miss' : 'hit' });
    return answer;
  };
  return {
    get: (key) => {
      const answer = current().get(key);
      return answer instanceof Promise ? answer.then(count) : count(answer);
    },
    set: (id, data, entities, ttl) => {
      const cache = current();
      until.delete(id);
      until.set(id, Date.now() + ttl);
      if (until.size > UNTIL_MAX) until.delete(until.keys().next().value as string);
      return cache.set(id, withMemoizedJson(data), entities, ttl);
    },
    invalidate: (entities) => current().invalidate(entities),
    cachedUntil: (id) => {
      current();
      return until.get(id);
    },
  };
}

/** Expiry times kept at most per data version (the in-memory cache keeps 500 answers by default). */
const UNTIL_MAX = 10_000;

/** The response cache's store, which also tells until when it serves an entry. */
export interface ScopedCache extends Cache {
  /** When the entry stored under this key stops being served (ms since the epoch); undefined: none stored. */
  cachedUntil(id: string): number | undefined;
}

/**
 * A cached answer is served again and again while its version holds, and yoga writes each time with
 * `result.stringify ?? JSON.stringify` (a `nodes` answer at 1,000 nodes is ~110 KB of JSON, most of what a
 * hit costs). The answer's data is never changed once cached, so its JSON is made once and kept beside it.
 * yoga writes a copy (a hit is served as a shallow copy, and the cache's own `extensions.http` headers are
 * taken out before writing), so the memo holds for any result with the cached answer's data and errors and
 * the same extensions (compared as JSON: they are small); anything else is written afresh. A
 * function-valued field is left out of JSON, so `stringify` itself never shows in an answer.
 */
export function withMemoizedJson<R extends object>(result: R): R {
  if (Object.hasOwn(result, 'stringify')) return result;
  const own = result as ResultFields;
  let memo: { extensions: string; json: string } | undefined;
  const stringify = (r: ResultFields): string => {
    if (r.data !== own.data || r.errors !== own.errors || !onlyResultFields(r)) return JSON.stringify(r);
    const extensions = r.extensions === undefined ? '' : JSON.stringify(r.extensions);
    if (memo?.extensions !== extensions) memo = { extensions, json: JSON.stringify(r) };
    return memo.json;
  };
  Object.assign(result, { stringify });
  return result;
}

interface ResultFields {
  data?: unknown;
  errors?: unknown;
  extensions?: unknown;
}

const RESULT_FIELDS = new Set(['data', 'errors', 'extensions', 'stringify']);

function onlyResultFields(r: object): boolean {
  for (const k of Object.keys(r)) if (!RESULT_FIELDS.has(k)) return false;
  return true;
}

/** The gateway's response cache: the store, its lookup counter, and the yoga plugin using them. */
export interface GatewayResponseCache {
  cache: ScopedCache;
  plugin: Plugin;
  /** Counts an answer replayed without the plugin (answer-replay.ts), and the hit it is. */
  countReplay(): void;
}

export function gatewayResponseCache(opts: ResponseCacheOptions): GatewayResponseCache {
  const lookups = opts.registry
    ? new Counter({
        name: 'nodeload_graphql_response_cache_lookups_total',
        help: 'GraphQL query answers looked up in the response cache, by result (hit, miss).',
        labelNames: ['result'],
        registers: [opts.registry],
      })
    : undefined;
  const replays = opts.registry
    ? new Counter({
        name: 'nodeload_graphql_response_cache_replays_total',
        help: "Response-cache hits written from the answer's recorded bytes before yoga's request pipeline (also counted as hits in the lookups).",
        registers: [opts.registry],
      })
    : undefined;
  const cache = versionScopedCache(
    opts.version,
    () => createInMemoryCache({ max: opts.maxEntries ?? 500 }),
    lookups,
  );
  return {
    cache,
    plugin: useGatewayResponseCache(opts, cache),
    countReplay: () => {
      lookups?.inc({ result: 'hit' });
      replays?.inc();
    },
  };
}

/** The response-cache plugin for the gateway's yoga server. */
function useGatewayResponseCache(opts: ResponseCacheOptions, cache: Cache): Plugin {
  return useVersionedResponseCache({
    cache,
    key: ({ documentString, variableValues, operationName, sessionId }) =>
      hashSHA256(
        JSON.stringify([
          opts.version.current,
          sessionId ?? '',
          operationName ?? '',
          variableValues ?? {},
          documentString,
        ]),
      ),
    session: (context) => askingUser(context)?.key ?? null,
    // HTTP and SSE only: graphql-ws runs operations without yoga's request pipeline, where the cache
    // keys its answers (an operation over a WebSocket always executes). No user, no cache either (the
    // operation's context refuses such a request anyway).
    enabled: (request, context) => request !== undefined && askingUser(context) !== undefined,
    ttlMs: opts.ttlMs ?? 1000,
    // The scheduler status follows the lease, which no view's event announces; introspection is not data.
    uncachedRootFields: new Set(['schedulerStatus', '__schema']),
  }) as Plugin;
}

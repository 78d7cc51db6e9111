/**
 * Cached query answers written again as the bytes they were, ahead of yoga. The response cache
 * (response-cache.ts) spares a repeated query its execution, but each hit still went through yoga's
 * request pipeline: a Fetch Request built from the node request, the body parsed, the cache key hashed,
 * the plugins' hooks, a Fetch Response adapted back. At 1,000 nodes the views bench measured 1.0–1.9 ms
 * of gateway CPU per cached `nodes` answer, and with 50 clients asking, p99 0.15–1.2 s.
 *
 * So the answer yoga wrote for a cached result is kept here as bytes, and the same request is answered
 * from them before yoga sees it, for exactly as long as the response cache would have served it:
 *  - "the same request": the same user (Access key), Accept and Content-Type headers and body bytes.
 *    The body holds the query, variables and operation name, so the response cache's key is the same
 *    too; requests with a query string, conditional headers (yoga answers 304 to those), an SSE Accept
 *    or bodies past 8 KiB always go to yoga;
 *  - "as long": only answers the response cache stored (it tells when each of its entries runs out,
 *    by the key it also sends as the ETag), recorded while the data version is still the one the
 *    request was looked up at, and every recorded answer is dropped when the version changes.
 * Nothing else differs: a replay passes the same authentication, body limit and user-port gate before
 * it (the router sits behind them), and it counts as a hit in the response cache's lookups.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { accessOf } from '../server/user-auth.js';
import type { GraphQLServerContext } from './context.js';
import type { DataVersion } from './response-cache.js';

/** Request bodies replayed at most (a GraphQL operation is a few hundred bytes). */
const MAX_REQUEST_BYTES = 8 * 1024;

export interface AnswerReplayOptions {
  version: DataVersion;
  /** When the response cache stops serving its entry with this key (undefined: it stored none). */
  cachedUntil: (cacheKey: string) => number | undefined;
  /** Bytes of recorded answers kept at most (default 32 MiB); the least recently used go first. */
  maxBytes?: number;
  /** Told of each replayed answer. */
  onReplay?: () => void;
}

interface Recorded {
  until: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What a request that went on to yoga was looked up as. */
interface Lookup {
  key: string;
  version: number;
}

export class AnswerReplay {
  private readonly entries = new Map<string, Recorded>();
  private bytes = 0;
  private version: number;
  private readonly lookups = new WeakMap<IncomingMessage, Lookup>();
  private readonly maxBytes: number;

  constructor(private readonly opts: AnswerReplayOptions) {
    this.version = opts.version.current;
    this.maxBytes = opts.maxBytes ?? 32 * 1024 * 1024;
  }

  /** The request's replay key, or undefined when only yoga may answer it. */
  static keyOf(req: IncomingMessage & { body?: unknown }): string | undefined {
    // Mounted at /graphql: the rest of the URL is "/" unless a query string follows.
    if (req.method !== 'POST' || req.url !== '/') return undefined;
    const h = req.headers;
    if (h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) return undefined;
    if (h.accept?.includes('text/event-stream')) return undefined;
    const body = req.body;
    if (!Buffer.isBuffer(body) || body.length === 0 || body.length > MAX_REQUEST_BYTES) return undefined;
    const access = accessOf(req);
    if (!access) return undefined;
    return `${access.key}\n${h.accept ?? ''}\n${h['content-type'] ?? ''}\n${body.toString('latin1')}`;
  }

  /** Answers the request from a recorded answer still good; false: yoga must answer it. */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const key = AnswerReplay.keyOf(req);
    if (key === undefined) return false;
    this.sync();
    const found = this.entries.get(key);
    if (found && found.until > Date.now()) {
      // Most recently used last: the eviction order.
      this.entries.delete(key);
      this.entries.set(key, found);
      res.writeHead(200, found.headers);
      res.end(found.body);
      this.opts.onReplay?.();
      return true;
    }
    if (found) this.drop(key, found);
    this.lookups.set(req, { key, version: this.version });
    return false;
  }

  /** The yoga plugin recording answers of requests serve() passed on. */
  plugin(): Plugin<Record<string, unknown>, GraphQLServerContext> {
    return {
      onResponse: ({ response, serverContext }) => {
        const lookup = serverContext.req && this.lookups.get(serverContext.req);
        if (!lookup || response.status !== 200) return;
        const etag = response.headers.get('etag');
        const until = etag ? this.opts.cachedUntil(etag) : undefined;
        // A body yoga streams would be consumed by reading it here: only one it holds as a string
        // (every non-streamed result) is read, and reading that leaves it as it was.
        if (until === undefined || (response as { bodyType?: unknown }).bodyType !== 'String') return;
        return response.text().then((text) => {
          this.sync();
          if (this.version !== lookup.version) return;
          const headers: Record<string, string> = {};
          response.headers.forEach((value, name) => {
            headers[name] = value;
          });
          const body = Buffer.from(text);
          headers['content-length'] = String(body.length);
          this.store(lookup.key, { until, headers, body });
        });
      },
    };
  }

  get size(): number {
    return this.entries.size;
  }

  private store(key: string, entry: Recorded): void {
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    if (entry.body.length > this.maxBytes) return;
    this.entries.set(key, entry);
    this.bytes += entry.body.length;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k, e);
    }
  }

  private drop(key: string, entry: Recorded): void {
    this.entries.delete(key);
    this.bytes -= entry.body.length;
  }

  /** A new data version: nothing recorded before it may be served. */
  private sync(): void {
    if (this.opts.version.current === this.version) return;
    this.version = this.opts.version.current;
    this.entries.clear();
    this.bytes = 0;
  }
}

/**
 * Exact POST paths answered by plain node:http handlers ahead of express, for the kube-facing routes
 * the API server waits on (admission reviews). Express's router, its request and response wrappers and
 * body-parser cost more server CPU than deciding a review does; everything else keeps express.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** Handlers by path (no query string); each answers every request it is given, errors included. */
export type FastRoutes = ReadonlyMap<string, (req: IncomingMessage, res: ServerResponse) => void>;

/** The components' fast routes as one table; two components claiming one path is a wiring bug. */
export function mergeFastRoutes(tables: readonly FastRoutes[]): FastRoutes {
  const merged = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  for (const table of tables) {
    for (const [path, handler] of table) {
      if (merged.has(path)) throw new Error(`two components serve POST ${path}`);
      merged.set(path, handler);
    }
  }
  return merged;
}

/** The path a request names, without its query string (the API server appends ?timeout=10s). */
export function requestPath(url: string | undefined): string {
  const u = url ?? '';
  const q = u.indexOf('?');
  return q < 0 ? u : u.slice(0, q);
}

/**
 * A listener that hands POSTs to a fast route's path to its handler, calling `onRequest` first, and
 * every other request to `fallback` (the express app).
 */
export function withFastRoutes(
  routes: FastRoutes,
  fallback: RequestListener,
  onRequest: () => void = () => {},
): RequestListener {
  if (routes.size === 0) return fallback;
  return (req, res) => {
    const handler = req.method === 'POST' ? routes.get(requestPath(req.url)) : undefined;
    if (!handler) {
      fallback(req, res);
      return;
    }
    try {
      onRequest();
      handler(req, res);
    } catch {
      // A handler answers its own errors; this only keeps a bug from becoming an uncaught exception.
      if (!res.headersSent) {
        res.statusCode = 500;
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.end('{"error":"InternalError","message":"internal error"}');
      } else res.destroy();
    }
  };
}

/**
 * Cross-origin access to the user-facing port: closed unless an origin is on the allow-list
 * (--cors-allowed-origins). Credentials travel in the Authorization header, never in cookies, so no
 * response allows credentials. The same list (plus the page's own origin) decides which browser pages may
 * open a WebSocket: browsers send no preflight for those, so the server must check their Origin itself.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** "https://a.example, https://b.example" → the origins, without trailing slashes. */
export function parseOrigins(list: string): string[] {
  return list
    .split(',')
    .map((s) => s.trim().replace(/\/+$/, ''))
    .filter((s) => s !== '');
}

/**
 * Whether a browser page from `origin` may talk to this server: no Origin (not a browser page), an
 * allowed origin, or the server's own (the Host it was reached at).
 */
export function originAllowed(
  origin: string | undefined,
  host: string | undefined,
  allowed: readonly string[],
) {
  if (origin === undefined) return true;
  if (allowed.includes(origin)) return true;
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

const ALLOWED_HEADERS = 'authorization, content-type, accept';

/** CORS for the allow-listed origins only; a preflight from any other gets a 403 without CORS headers. */
export function corsMiddleware(allowed: readonly string[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.get('origin');
    const preflight = req.method === 'OPTIONS' && req.get('access-control-request-method') !== undefined;
    if (origin === undefined) return next();
    res.vary('Origin');
    if (!allowed.includes(origin)) {
      if (!preflight) return next(); // same-origin requests carry an Origin too; the browser enforces the rest
      res.status(403).json({
        error: 'Forbidden',
        message: `origin ${origin} is not allowed (--cors-allowed-origins)`,
      });
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (!preflight) return next();
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  };
}

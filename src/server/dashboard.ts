/**
 * Serves the dashboard (web/, built by `npm run build:web` into web/dist) at `/` on the user-facing app.
 * The build is looked up per request, so building while the gateway runs needs no restart; until then
 * `/` answers 503 with a page saying how to build it. Everything the page loads comes from this origin,
 * and the Content-Security-Policy holds it to that.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Response, Router } from 'express';

/** web/dist from both src/server (tsx) and dist/server (compiled). */
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

/** Same-origin only; inline styles are allowed for the style attributes the components set. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

function securityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

function notBuiltPage(dir: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>nodeload: dashboard not built</title>
<style>body{background:#0a0d13;color:#dde3ec;font:15px/1.5 system-ui,sans-serif;max-width:44rem;margin:4rem auto;padding:0 1rem}
code{background:#161c28;padding:.1rem .35rem;border-radius:4px}a{color:#67e8f9}</style></head>
<body><h1>The dashboard is not built</h1>
<p>The gateway is running, but it found no <code>index.html</code> in <code>${dir}</code>.</p>
<p>Build it with <code>npm run build:web</code> and reload this page; no restart is needed.</p>
<p>Meanwhile the API works: <a href="graphql">GraphiQL</a>, <a href="healthz">/healthz</a>, <a href="metrics">/metrics</a>.</p>
</body></html>
`;
}

const PAGE_PATHS = ['/', '/index.html'];
const ASSETS = '/assets';

/** The dashboard's own files: the page and its assets (public on the user port: no cluster data in them). */
export function isDashboardPath(path: string): boolean {
  return PAGE_PATHS.includes(path) || path.startsWith(`${ASSETS}/`);
}

export interface DashboardOptions {
  /** The built dashboard (default: web/dist of this checkout or image). */
  dir?: string;
}

export function dashboardRouter(opts: DashboardOptions = {}): Router {
  const dir = path.resolve(opts.dir ?? DEFAULT_DASHBOARD_DIR);
  const index = path.join(dir, 'index.html');
  const router = Router();

  router.get(PAGE_PATHS, (_req, res) => {
    securityHeaders(res);
    // The page is small and names the hashed assets: always revalidate it, so a new build shows at once.
    res.setHeader('Cache-Control', 'no-cache');
    if (!existsSync(index)) {
      res.status(503).setHeader('Retry-After', '10').type('html').send(notBuiltPage(dir));
      return;
    }
    res.sendFile(index);
  });

  // Vite puts content-hashed files under assets/: they never change under one name.
  router.use(
    ASSETS,
    express.static(path.join(dir, 'assets'), {
      index: false,
      fallthrough: true,
      immutable: true,
      maxAge: '365d',
      setHeaders: (res) => securityHeaders(res),
    }),
  );
  return router;
}

/**
 * The user-facing HTTP app (port 8080): health, readiness, metrics; components mount their routes
 * (GraphQL, dashboard, compatibility routes) before the 404 and error handlers are appended.
 */
import express, { type Express, type Router } from 'express';
import type { Registry } from 'prom-client';
import { PERMISSIONS } from './access.js';
import { corsMiddleware } from './cors.js';
import { errorHandler, notFound } from './errors.js';
import type { Logger } from './log.js';
import { requireUserPermission, type UserPortAuth } from './user-auth.js';
import type { UserPortGate } from './user-port-gate.js';

export interface Readiness {
  ready: boolean;
  /** Why not ready, for /readyz's body. */
  reason?: string;
}

/** Request bodies past this are refused with 413 (GraphQL operations are a few KiB). */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

export interface UserAppOptions {
  registry: Registry;
  readiness: () => Readiness;
  auth: UserPortAuth;
  /** Origins allowed to call from a browser page (CORS); none by default. */
  corsAllowedOrigins?: readonly string[];
  bodyLimitBytes?: number;
  /** Admits user-port requests a few at a time, between turns of the event loop (user-port-gate.ts). */
  gate?: UserPortGate;
}

/**
 * Health answers anyone; everything after it passes `auth` (401 without a token), bodies are read up to
 * the limit, the gate admits requests a few at a time, and /metrics needs the nonResourceURL
 * `get /metrics`, as kube-scheduler's does.
 */
export function createUserApp(opts: UserAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.get('/livez', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req, res) => {
    const r = opts.readiness();
    res
      .status(r.ready ? 200 : 503)
      .type('text/plain')
      .send(r.ready ? 'ok' : `not ready: ${r.reason ?? 'starting'}`);
  });
  app.use(corsMiddleware(opts.corsAllowedOrigins ?? []));
  app.use(opts.auth.middleware());
  // Read (and bounded) here for every route: yoga takes the buffer as the request body.
  app.use(express.raw({ type: () => true, limit: opts.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES }));
  // After the body is in: a slow uploader must not hold a slot the CPU-bound requests are waiting for.
  if (opts.gate) app.use(opts.gate.middleware());
  app.get('/metrics', requireUserPermission(PERMISSIONS.metrics), async (_req, res) => {
    res.type(opts.registry.contentType).send(await opts.registry.metrics());
  });
  return app;
}

/** Appends the routers, then 404 and the error handler. Call once, after every component mounted. */
export function finishApp(app: Express, log: Logger, routers: Router[] = []): void {
  for (const r of routers) app.use(r);
  app.use(notFound);
  app.use(errorHandler(log));
}

/**
 * The user-facing HTTP app (port 8080): health, readiness, metrics; components mount their routes
 * (GraphQL, dashboard, compatibility routes) before the 404 and error handlers are appended.
 */
import express, { type Express, type Router } from 'express';
import type { Registry } from 'prom-client';
import { errorHandler, notFound } from './errors.js';
import type { Logger } from './log.js';

export interface Readiness {
  ready: boolean;
  /** Why not ready, for /readyz's body. */
  reason?: string;
}

export function createUserApp(opts: { registry: Registry; readiness: () => Readiness }): Express {
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
  app.get('/metrics', async (_req, res) => {
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

import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from './log.js';

export const notFound: RequestHandler = (req, res) => {
  res.status(404).json({ error: 'NotFound', message: `no route for ${req.method} ${req.path}` });
};

/**
 * Last handler: client mistakes (body parser errors: any error with a 4xx `status`) become 4xx with their message;
 * anything else is logged with its stack and answered with a generic 500 — never a stack trace.
 */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const status =
      typeof err?.status === 'number'
        ? err.status
        : typeof err?.statusCode === 'number'
          ? err.statusCode
          : 500;
    if (status >= 500) {
      log.error({ err, method: req.method, path: req.path }, 'request failed');
      if (!res.headersSent) res.status(500).json({ error: 'InternalError', message: 'internal error' });
      return;
    }
    log.debug({ status, method: req.method, path: req.path, msg: err?.message }, 'bad request');
    const message =
      err?.type === 'entity.too.large'
        ? `request body larger than ${err.limit} bytes`
        : String(err?.message ?? 'bad request');
    if (!res.headersSent) res.status(status).json({ error: err?.type ?? 'BadRequest', message });
  };
}

/**
 * How a kube-facing route's request ended, for its metrics: the result the handler recorded
 * (setRequestResult), else one read from the status code — 5xx an error, 4xx invalid input, anything
 * else `success` (each route names its own: "allowed" for admission, "success" for the extender).
 * The observer gets it with the request's duration when the response has been sent.
 */
import type { RequestHandler, Response } from 'express';

export function setRequestResult<R extends string>(res: Response, result: R): void {
  res.locals['requestResult'] = result;
}

export function observeRequests<R extends string>(
  success: R,
  observe: (result: R | 'invalid' | 'error', seconds: number) => void,
): RequestHandler {
  return (_req, res, next) => {
    const start = performance.now();
    res.once('finish', () => {
      const recorded = res.locals['requestResult'] as R | 'invalid' | 'error' | undefined;
      const result =
        recorded ?? (res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'invalid' : success);
      observe(result, (performance.now() - start) / 1000);
    });
    next();
  };
}

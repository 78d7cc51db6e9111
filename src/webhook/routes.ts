/**
 * POST /mutate and POST /validate on the kube-facing HTTPS port. Every answer is either a 4xx JSON
 * message (not an AdmissionReview we can answer) or an AdmissionReview echoing the request's uid;
 * a client's mistake is logged at debug, never at error.
 */
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Logger } from '../server/log.js';
import { observeRequests, setRequestResult } from '../server/request-result.js';
import { sendJson } from '../server/send-json.js';
import {
  type AdmissionResult,
  type AdmitOptions,
  admitMutation,
  admitValidation,
  type NotSteered,
  type WebhookState,
} from './admit.js';
import { allow, deny, parseReview } from './review.js';

export type WebhookRoute = 'mutate' | 'validate';
type RequestResult = AdmissionResult | 'invalid' | 'error';

export interface WebhookRouterOptions extends AdmitOptions {
  state: WebhookState;
  log: Logger;
  registry: Registry;
  /** express.json limit, e.g. "8mb": a review carries object and oldObject, well above express's 100 kB. */
  bodyLimit: string;
  /**
   * Told about each pod the capability gate kept from nodeload's scheduler (its Event is written
   * later, once the pod exists). Must be quick and must not throw; the answer never waits on it.
   */
  onNotSteered?: (pod: NotSteered) => void;
}

const ADMIT = { mutate: admitMutation, validate: admitValidation } as const;

function metrics(registry: Registry) {
  return {
    requests: new Counter({
      name: 'nodeload_admission_requests_total',
      help: 'Admission requests by route and result (allowed, patched, denied, invalid = 4xx, error).',
      labelNames: ['route', 'result'] as const,
      registers: [registry],
    }),
    breakGlass: new Counter({
      name: 'nodeload_admission_break_glass_total',
      help: 'Pinned pods the validating webhook allowed despite their NodeLoadRules because of the break-glass label.',
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'nodeload_admission_duration_seconds',
      help: 'Time from request start to response, including body parsing, by route and result.',
      labelNames: ['route', 'result'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}

function setResult(res: Response, result: RequestResult): void {
  setRequestResult(res, result);
}

function badRequest(res: Response, status: number, error: string, message: string): void {
  setResult(res, 'invalid');
  res.status(status).json({ error, message });
}

export function webhookRouter(opts: WebhookRouterOptions): Router {
  const { requests, breakGlass, duration } = metrics(opts.registry);
  const json = express.json({ limit: opts.bodyLimit });
  const router = express.Router();

  const instrument = (route: WebhookRoute): RequestHandler =>
    observeRequests<RequestResult>('allowed', (result, seconds) => {
      requests.inc({ route, result });
      duration.observe({ route, result }, seconds);
    });

  const handle =
    (route: WebhookRoute): RequestHandler =>
    (req: Request, res: Response) => {
      if (!req.is('application/json')) {
        badRequest(res, 415, 'UnsupportedMediaType', 'expected Content-Type: application/json');
        return;
      }
      const parsed = parseReview(req.body);
      if (parsed.kind === 'bad') {
        opts.log.debug({ route, status: parsed.status, reason: parsed.message }, 'bad admission request');
        badRequest(res, parsed.status, 'BadRequest', parsed.message);
        return;
      }
      if (parsed.kind === 'malformed') {
        opts.log.debug({ route, uid: parsed.uid, reason: parsed.message }, 'malformed admission request');
        setResult(res, 'denied');
        sendJson(res, JSON.stringify(deny(parsed.uid, 400, parsed.message)));
        return;
      }
      const uid = parsed.request.uid;
      let body: string;
      try {
        const admission = ADMIT[route](parsed.request, opts.state, opts);
        if (admission.breakGlass) breakGlass.inc();
        if (admission.event) {
          opts.log[admission.event.level ?? 'info'](
            { route, ...admission.event.fields },
            admission.event.msg,
          );
        } else opts.log.debug({ route, uid, result: admission.result }, 'admission request');
        if (admission.notSteered && opts.onNotSteered) {
          try {
            opts.onNotSteered(admission.notSteered);
          } catch (err) {
            opts.log.warn({ err, route, uid }, 'recording a not-steered pod failed');
          }
        }
        setResult(res, admission.result);
        // Serialise here, inside the try: a failure must still answer with this uid.
        body = JSON.stringify(admission.review);
      } catch (err) {
        // Our bug, not the client's: log it, and answer as the failure policy would — the mutating
        // webhook lets the pod through unsteered, the validating one refuses.
        opts.log.error({ err, route, uid }, 'admission request failed');
        setResult(res, 'error');
        body = JSON.stringify(
          route === 'mutate'
            ? allow(uid, ['nodeload: internal error, pod not steered'])
            : deny(uid, 500, 'nodeload: internal error while validating; retry'),
        );
      }
      sendJson(res, body);
    };

  /** Body-parser errors (malformed JSON, too large, bad charset/encoding) are the client's: 4xx with the reason. */
  const bodyErrors: ErrorRequestHandler = (err, req, res, _next) => {
    const status =
      typeof err?.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) {
      opts.log.error({ err, path: req.path }, 'admission request failed');
      setResult(res, 'error');
      if (!res.headersSent) res.status(500).json({ error: 'InternalError', message: 'internal error' });
      return;
    }
    const message =
      err.type === 'entity.too.large'
        ? `request body larger than the ${opts.bodyLimit} limit`
        : err.type === 'entity.parse.failed'
          ? `malformed JSON: ${String(err.message).slice(0, 200)}`
          : String(err.message ?? 'bad request').slice(0, 200);
    opts.log.debug({ path: req.path, status, type: err.type }, 'bad admission request body');
    if (res.headersSent) return;
    badRequest(res, status, typeof err.type === 'string' ? err.type : 'BadRequest', message);
  };

  for (const route of ['mutate', 'validate'] as const) {
    router.post(`/${route}`, instrument(route), json, handle(route), bodyErrors);
  }
  return router;
}

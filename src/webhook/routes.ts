/**
 * POST /mutate and POST /validate on the kube-facing HTTPS port, answered by plain node:http handlers
 * the gateway calls ahead of express (src/server/fast-routes.ts): every API-server write of a pod waits
 * on them. Every answer is either a 4xx JSON message (not an AdmissionReview we can answer) or an
 * AdmissionReview echoing the request's uid; a client's mistake is logged at debug, never at error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import bytes from 'bytes';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { FastRoutes } from '../server/fast-routes.js';
import { readJsonBody } from '../server/json-body.js';
import type { Logger } from '../server/log.js';
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

export interface WebhookRoutesOptions extends AdmitOptions {
  state: WebhookState;
  log: Logger;
  registry: Registry;
  /** Body size limit, e.g. "8mb": a review carries object and oldObject, well above express's 100 kB. */
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

function sendError(res: ServerResponse, status: number, error: string, message: string): void {
  sendJson(res, JSON.stringify({ error, message }), status);
}

/** The admission routes by path, as plain node:http handlers (POST only). */
export function webhookRoutes(opts: WebhookRoutesOptions): FastRoutes {
  const { requests, breakGlass, duration } = metrics(opts.registry);
  // Each (route, result) pair's series, labelled once: labelling per request hashes the label set.
  const series = new Map<
    string,
    { count: ReturnType<typeof requests.labels>; time: ReturnType<typeof duration.labels> }
  >();
  const record = (route: WebhookRoute, result: RequestResult, seconds: number) => {
    const key = `${route} ${result}`;
    let s = series.get(key);
    if (!s) {
      s = { count: requests.labels({ route, result }), time: duration.labels({ route, result }) };
      series.set(key, s);
    }
    s.count.inc();
    s.time.observe(seconds);
  };
  const limit = bytes.parse(opts.bodyLimit);
  if (limit === null || !Number.isFinite(limit))
    throw new Error(`webhook body limit "${opts.bodyLimit}" is not a size`);

  /** The review to send back for a parsed body, and how the request ended. */
  const answer = (route: WebhookRoute, body: unknown, res: ServerResponse): RequestResult => {
    const parsed = parseReview(body);
    if (parsed.kind === 'bad') {
      opts.log.debug({ route, status: parsed.status, reason: parsed.message }, 'bad admission request');
      sendError(res, parsed.status, 'BadRequest', parsed.message);
      return 'invalid';
    }
    if (parsed.kind === 'malformed') {
      opts.log.debug({ route, uid: parsed.uid, reason: parsed.message }, 'malformed admission request');
      sendJson(res, JSON.stringify(deny(parsed.uid, 400, parsed.message)));
      return 'denied';
    }
    const uid = parsed.request.uid;
    let result: RequestResult;
    let text: string;
    try {
      const admission = ADMIT[route](parsed.request, opts.state, opts);
      if (admission.breakGlass) breakGlass.inc();
      if (admission.event) {
        opts.log[admission.event.level ?? 'info']({ route, ...admission.event.fields }, admission.event.msg);
      } else opts.log.debug({ route, uid, result: admission.result }, 'admission request');
      if (admission.notSteered && opts.onNotSteered) {
        try {
          opts.onNotSteered(admission.notSteered);
        } catch (err) {
          opts.log.warn({ err, route, uid }, 'recording a not-steered pod failed');
        }
      }
      result = admission.result;
      // Serialise here, inside the try: a failure must still answer with this uid.
      text = admission.text ?? JSON.stringify(admission.review);
    } catch (err) {
      // Our bug, not the client's: log it, and answer as the failure policy would — the mutating
      // webhook lets the pod through unsteered, the validating one refuses.
      opts.log.error({ err, route, uid }, 'admission request failed');
      result = 'error';
      text = JSON.stringify(
        route === 'mutate'
          ? allow(uid, ['nodeload: internal error, pod not steered'])
          : deny(uid, 500, 'nodeload: internal error while validating; retry'),
      );
    }
    sendJson(res, text);
    return result;
  };

  const handle =
    (route: WebhookRoute) =>
    (req: IncomingMessage, res: ServerResponse): void => {
      const start = performance.now();
      let result: RequestResult = 'error';
      res.once('finish', () => record(route, result, (performance.now() - start) / 1000));
      readJsonBody(req, limit, (body) => {
        try {
          if (!body.ok) {
            opts.log.debug({ route, status: body.status, type: body.type }, 'bad admission request body');
            result = 'invalid';
            // Past the limit the rest of the body is not read: close the connection after the answer.
            if (body.status === 413) res.setHeader('Connection', 'close');
            sendError(res, body.status, body.type, body.message);
            return;
          }
          result = answer(route, body.value, res);
        } catch (err) {
          opts.log.error({ err, route }, 'admission request failed');
          result = 'error';
          if (!res.headersSent) sendError(res, 500, 'InternalError', 'internal error');
          else res.destroy();
        }
      });
    };

  return new Map([
    ['/mutate', handle('mutate')],
    ['/validate', handle('validate')],
  ]);
}

/**
 * POST /extender/filter, /extender/prioritize and /extender/bind on the kube-facing HTTPS port, for
 * kube-scheduler's HTTPExtender (urlPrefix https://…/extender). Only a client presenting a certificate
 * signed by the configured CA is served (401 without one, 403 with another). A client's mistake is a
 * 4xx with its reason in the result's Error field; our own bug a 500 "internal error" — kube-scheduler
 * treats any non-200 as the extender failing, which an `ignorable` extender survives.
 */
import type { X509Certificate } from 'node:crypto';
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import type { ExtenderEngine } from '../scheduler/extender-engine.js';
import { peerChain, verifyClientCertificate } from '../server/client-cert.js';
import type { Logger } from '../server/log.js';
import { observeRequests, setRequestResult } from '../server/request-result.js';
import { sendJson } from '../server/send-json.js';
import { EXTENDER_VERBS, type ExtenderMetrics, type ExtenderVerb, type RequestResult } from './metrics.js';
import {
  BadRequest,
  filterResult,
  flatPriorities,
  parseBindingArgs,
  parseExtenderArgs,
  passThroughFilter,
  priorityList,
} from './wire.js';

/** kube-scheduler's urlPrefix ends here: https://<gateway>:8443/extender. */
export const EXTENDER_PATH = '/extender';

export interface ExtenderState {
  /** The shared cache finished its initial sync: before that, rules may be missing. */
  ready(): boolean;
  engine: Pick<ExtenderEngine, 'filter' | 'prioritize' | 'bind'>;
}

export interface ExtenderRouterOptions {
  state: ExtenderState;
  /** The CAs a client certificate must chain to (--extender-client-ca-file). */
  clientCas: readonly X509Certificate[];
  metrics: ExtenderMetrics;
  log: Logger;
  /** express.json limit: NodeNames of a 5 000-node cluster is ~100 kB, a pod spec rarely more. */
  bodyLimit: string;
  /** A bind waiting this long for the rate limiter gives up (kube-scheduler's httpTimeout is 5 s). */
  bindTimeoutMs?: number;
  now?: () => Date;
}

function setResult(res: Response, result: RequestResult): void {
  setRequestResult(res, result);
}

/** Every refusal carries `Error`, the one field all three result types share. */
function refuse(res: Response, status: number, result: RequestResult, message: string): void {
  setResult(res, result);
  res.status(status).json({ Error: message });
}

interface AuthVerdict {
  status: 200 | 401 | 403;
  reason: string;
  expires: number;
}

/**
 * 401 without a client certificate, 403 with one the CA did not sign (or expired, or not for client
 * authentication). The verdict is kept per connection — kube-scheduler keeps its connections open — and
 * re-checked at least every minute so an expiring certificate is not trusted past its validity.
 */
function clientCertificateRequired(opts: ExtenderRouterOptions): RequestHandler {
  const now = opts.now ?? (() => new Date());
  const verdicts = new WeakMap<object, AuthVerdict>();
  return (req, res, next) => {
    const at = now();
    let verdict = verdicts.get(req.socket);
    if (!verdict || verdict.expires <= at.getTime()) {
      const chain = peerChain(req.socket);
      const result = verifyClientCertificate(chain, opts.clientCas, at);
      verdict = {
        status: result.ok ? 200 : chain.length === 0 ? 401 : 403,
        reason: result.ok ? '' : result.reason,
        expires: Math.min(at.getTime() + 60_000, chain[0]?.validToDate.getTime() ?? 0),
      };
      verdicts.set(req.socket, verdict);
    }
    if (verdict.status !== 200) {
      opts.log.debug(
        { path: req.path, reason: verdict.reason, remote: req.socket.remoteAddress },
        'extender call refused',
      );
      refuse(res, verdict.status, 'unauthorized', `unauthorized: ${verdict.reason}`);
      return;
    }
    next();
  };
}

export function extenderRouter(opts: ExtenderRouterOptions): Router {
  const { state, metrics, log } = opts;
  const json = express.json({ limit: opts.bodyLimit });
  const router = express.Router();

  const instrument = (verb: ExtenderVerb): RequestHandler =>
    observeRequests<RequestResult>('success', (result, seconds) => metrics.observe(verb, result, seconds));

  /** Parses, checks readiness, runs `decide`; a BadRequest is the client's, anything else ours. */
  const handle =
    (
      verb: ExtenderVerb,
      decide: (body: unknown, res: Response) => Promise<unknown> | unknown,
    ): RequestHandler =>
    async (req: Request, res: Response) => {
      if (!req.is('application/json')) {
        refuse(res, 415, 'invalid', 'expected Content-Type: application/json');
        return;
      }
      if (!state.ready()) {
        // Rules not known yet: answering would let covered pods through unchecked.
        refuse(res, 503, 'unavailable', 'nodeload is starting: cluster cache not synced yet');
        return;
      }
      try {
        sendJson(res, JSON.stringify(await decide(req.body, res)));
      } catch (err) {
        if (err instanceof BadRequest) {
          log.debug({ verb, reason: err.message }, 'bad extender request');
          refuse(res, 400, 'invalid', err.message);
          return;
        }
        log.error({ err, verb }, 'extender request failed');
        refuse(res, 500, 'error', 'internal error');
      }
    };

  const filter = handle('filter', async (body, res) => {
    const args = parseExtenderArgs(body);
    const out = await state.engine.filter(args.pod, args.nodeNames);
    if (out.kind === 'pass-through') {
      setResult(res, 'pass-through');
      return passThroughFilter(args);
    }
    const result = filterResult(args, out.verdicts);
    const left = result.NodeNames?.length ?? result.Nodes?.items.length ?? 0;
    setResult(res, left > 0 ? 'success' : 'unschedulable');
    return result;
  });

  const prioritize = handle('prioritize', (body, res) => {
    const args = parseExtenderArgs(body);
    const out = state.engine.prioritize(args.pod, args.nodeNames);
    if (out.kind === 'pass-through') {
      setResult(res, 'pass-through');
      return flatPriorities(args.nodeNames);
    }
    setResult(res, 'success');
    return priorityList(out.scores);
  });

  const bind = handle('bind', async (body, res) => {
    const args = parseBindingArgs(body);
    const error = await state.engine.bind(
      { namespace: args.namespace, name: args.name, uid: args.uid },
      args.node,
      AbortSignal.timeout(opts.bindTimeoutMs ?? 4000),
    );
    setResult(res, error ? 'error' : 'success');
    return { Error: error ?? '' };
  });

  /** Body-parser errors (malformed JSON, too large) are the client's: 4xx with the reason, as `Error`. */
  const bodyErrors: ErrorRequestHandler = (err, req, res, next) => {
    const status = typeof err?.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 0;
    if (!status || res.headersSent) {
      next(err);
      return;
    }
    const message =
      err.type === 'entity.too.large'
        ? `request body larger than the ${opts.bodyLimit} limit`
        : err.type === 'entity.parse.failed'
          ? `malformed JSON: ${String(err.message).slice(0, 200)}`
          : String(err.message ?? 'bad request').slice(0, 200);
    log.debug({ path: req.path, status, type: err.type }, 'bad extender request body');
    refuse(res, status, 'invalid', message);
  };

  const auth = clientCertificateRequired(opts);
  const handlers: Record<ExtenderVerb, RequestHandler> = { filter, prioritize, bind };
  for (const verb of EXTENDER_VERBS) {
    router.post(`${EXTENDER_PATH}/${verb}`, instrument(verb), auth, json, handlers[verb], bodyErrors);
  }
  return router;
}

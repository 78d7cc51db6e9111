/**
 * The I/O half of auth.ts: reading (and refreshing) the requestheader settings the apiserver publishes,
 * taking the client certificate chain off the TLS socket, and the express middleware that authenticate
 * and authorize every aggregated-API request before a handler runs.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { CachedAccessReviewer, UserInfo } from '../server/authz.js';
import { peerChain } from '../server/client-cert.js';
import type { Logger } from '../server/log.js';
import { internalError, unauthorized } from './api.js';
import {
  alwaysAllowed,
  forbidden,
  type HeaderLines,
  parseAuthenticationConfigMap,
  type RequestHeaderConfig,
  requestAttributes,
  userFromHeaders,
  verifyClientChain,
} from './auth.js';

export interface RequestHeaderConfigLoaderOptions {
  /** The ConfigMap's data (undefined when it does not exist). */
  read: () => Promise<Record<string, string> | undefined>;
  log: Logger;
  /** Re-read this often, so a rotated front-proxy CA is picked up (default 60 s). */
  refreshMs?: number;
  /** Until the first good read, retry this often (default 5 s). */
  retryMs?: number;
}

/** Keeps the current requestheader settings; a failed refresh keeps the previous ones. */
export class RequestHeaderConfigLoader {
  private config: RequestHeaderConfig | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastError = '';

  constructor(private readonly opts: RequestHeaderConfigLoaderOptions) {}

  current(): RequestHeaderConfig | undefined {
    return this.config;
  }

  /** Loads once now; keeps refreshing in the background until stop(). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.load();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  async load(): Promise<void> {
    try {
      const next = parseAuthenticationConfigMap(await this.opts.read());
      if (next.caPem !== this.config?.caPem)
        this.opts.log.info({ allowedNames: next.allowedNames }, 'front-proxy CA loaded');
      this.config = next;
      this.lastError = '';
    } catch (err) {
      const message = (err as Error).message;
      if (message !== this.lastError) {
        this.opts.log.warn(
          { err: message },
          'cannot load the front-proxy authentication settings; keeping the previous ones',
        );
      }
      this.lastError = message;
    }
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => void this.load(),
      this.config ? (this.opts.refreshMs ?? 60_000) : (this.opts.retryMs ?? 5_000),
    );
    this.timer.unref();
  }
}

export function currentUser(res: Response): UserInfo | undefined {
  return res.locals['user'] as UserInfo | undefined;
}

function headerLines(req: Request): HeaderLines {
  return req.headersDistinct as HeaderLines;
}

/**
 * 401 unless the connection's client certificate chains to the requestheader CA with an allowed CN
 * and the request names a user; then `res.locals.user` is that user. The verdict is cached per
 * connection (the aggregator keeps its connections open) and per CA bundle.
 */
export function frontProxyAuthentication(
  source: { current(): RequestHeaderConfig | undefined },
  log: Logger,
  now: () => Date = () => new Date(),
): RequestHandler {
  const verdicts = new WeakMap<object, { caPem: string; ok: boolean; reason: string; expires: number }>();
  return (req: Request, res: Response, next: NextFunction) => {
    const config = source.current();
    if (!config) {
      log.warn({ path: req.path }, 'rejecting request: front-proxy authentication settings not loaded yet');
      throw unauthorized();
    }
    const socket = req.socket;
    const at = now();
    let verdict = verdicts.get(socket);
    if (!verdict || verdict.caPem !== config.caPem || verdict.expires <= at.getTime()) {
      const chain = peerChain(socket);
      const result = verifyClientChain(chain, config, at);
      verdict = {
        caPem: config.caPem,
        ok: result.ok,
        reason: result.ok ? '' : result.reason,
        // Re-check at least every minute so an expiring certificate is not trusted past its validity.
        expires: Math.min(at.getTime() + 60_000, chain[0]?.validToDate.getTime() ?? 0),
      };
      verdicts.set(socket, verdict);
    }
    if (!verdict.ok) {
      log.debug(
        { path: req.path, reason: verdict.reason, remote: socket.remoteAddress },
        'unauthenticated request',
      );
      throw unauthorized();
    }
    const user = userFromHeaders(headerLines(req), config);
    if (!user) {
      log.debug({ path: req.path }, 'front-proxy request without a user name');
      throw unauthorized();
    }
    res.locals['user'] = user;
    next();
  };
}

function queryStrings(req: Request): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.query))
    out[k] = Array.isArray(v) ? String(v[0]) : v === undefined ? undefined : String(v);
  return out;
}

/** 403 unless a SubjectAccessReview (cached briefly) allows the request; health paths and system:masters skip it. */
export function subjectAccessReviewAuthorization(
  reviewer: CachedAccessReviewer,
  log: Logger,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const user = currentUser(res);
    const attrs = requestAttributes(req.method, req.path, queryStrings(req));
    if (alwaysAllowed(user, attrs)) return next();
    if (!user) throw unauthorized();
    let decision: Awaited<ReturnType<CachedAccessReviewer['check']>>;
    try {
      decision = await reviewer.check(user, attrs);
    } catch (err) {
      log.error({ err, user: user.name, attrs }, 'SubjectAccessReview failed');
      throw internalError('authorization failed: the SubjectAccessReview could not be made');
    }
    if (!decision.allowed) {
      log.debug({ user: user.name, attrs, reason: decision.reason }, 'forbidden');
      throw forbidden(user, attrs, decision.reason);
    }
    next();
  };
}

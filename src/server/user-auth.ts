/**
 * The user-facing port's gate: every request but the public ones (authn.ts isPublicRequest) is
 * authenticated before any route runs — 401 without a valid bearer token — and carries its Access
 * (access.ts) for the views to filter with. WebSocket connections authenticate through the same
 * `authenticate` with the token of their connection_init payload or upgrade request. With the anonymous
 * flag, a tokenless request is served only when its Host is a loopback name (authn.ts isLoopbackHost):
 * otherwise 403, so a page of a DNS-rebound domain cannot read the cluster through a browser.
 */
import type http from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  type Access,
  describePermission,
  ForbiddenError,
  filterReadable,
  mayRead,
  type Permission,
  requirePermission,
  reviewedAccess,
  UNRESTRICTED_ACCESS,
} from './access.js';
import {
  authenticationStep,
  type CachedTokenAuthenticator,
  isLoopbackHost,
  isPublicRequest,
} from './authn.js';
import type { CachedAccessReviewer } from './authz.js';
import type { Logger } from './log.js';

export type AuthFailure = { ok: false; status: 401 | 403 | 503; message: string };
export type AuthResult = { ok: true; access: Access } | AuthFailure;

export interface UserPortAuthOptions {
  /** Serve requests without a token as an unrestricted user (--anonymous-user-port; loopback only). */
  anonymous: boolean;
  authenticator: CachedTokenAuthenticator;
  reviewer: CachedAccessReviewer;
  log: Logger;
}

const accesses = new WeakMap<http.IncomingMessage, Access>();

/** The request's Access, set by the gate; a request that did not pass it (a public one) has none. */
export function accessOf(req: http.IncomingMessage): Access | undefined {
  return accesses.get(req);
}

/** The JSON every refusal carries: readable by people, and by GraphQL clients (`errors`). */
function errorBody(error: string, code: string, message: string) {
  return { error, message, errors: [{ message, extensions: { code } }] };
}

const FAILURE_BODIES = {
  401: ['Unauthorized', 'UNAUTHENTICATED'],
  403: ['Forbidden', 'FORBIDDEN'],
  503: ['ServiceUnavailable', 'UNAVAILABLE'],
} as const;

function sendAuthFailure(res: Response, { status, message }: AuthFailure): void {
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="nodeload"');
  const [error, code] = FAILURE_BODIES[status];
  res.status(status).json(errorBody(error, code, message));
}

/** Why a tokenless request to the anonymous port was refused. */
function anonymousHostMessage(host: string | undefined): string {
  const named = host
    ? `the Host ${JSON.stringify(host.length > 60 ? `${host.slice(0, 60)}…` : host)}`
    : 'no Host';
  return (
    `no token, and ${named} is not a loopback name: the anonymous user port serves only requests for ` +
    'localhost, 127.0.0.1 or [::1] (a guard against DNS rebinding); open it by one of those names, or send ' +
    '"Authorization: Bearer <token>"'
  );
}

export function sendForbidden(res: Response, err: ForbiddenError): void {
  res.status(403).json({ ...errorBody('Forbidden', 'FORBIDDEN', err.message), permission: err.permission });
}

export class UserPortAuth {
  constructor(private readonly opts: UserPortAuthOptions) {}

  get anonymous(): boolean {
    return this.opts.anonymous;
  }

  /**
   * `authorization` as an Authorization header reads: "Bearer <token>" (or nothing); `host` is the
   * request's Host header, which decides whether a tokenless request may be served anonymously (absent:
   * it may not).
   */
  async authenticate(authorization: string | undefined, host?: string): Promise<AuthResult> {
    const step = authenticationStep({ authorization, anonymous: this.opts.anonymous });
    switch (step.kind) {
      case 'public':
        return { ok: true, access: UNRESTRICTED_ACCESS };
      case 'anonymous':
        if (!isLoopbackHost(host)) {
          this.opts.log.debug({ host }, 'tokenless request for a host other than loopback refused');
          return { ok: false, status: 403, message: anonymousHostMessage(host) };
        }
        return { ok: true, access: UNRESTRICTED_ACCESS };
      case 'reject':
        return { ok: false, status: 401, message: step.message };
      case 'token':
        break;
    }
    let verdict: Awaited<ReturnType<CachedTokenAuthenticator['authenticate']>>;
    try {
      verdict = await this.opts.authenticator.authenticate(step.token);
    } catch (err) {
      this.opts.log.error({ err }, 'TokenReview failed');
      return {
        ok: false,
        status: 503,
        message: 'authentication unavailable: the TokenReview could not be made; try again',
      };
    }
    if (!verdict.authenticated) {
      this.opts.log.debug({ reason: verdict.reason }, 'token refused');
      return { ok: false, status: 401, message: `invalid bearer token: ${verdict.reason}` };
    }
    return { ok: true, access: reviewedAccess(verdict.user, this.opts.reviewer) };
  }

  /** The gate: public requests pass; any other needs a valid token (or the anonymous flag and a loopback Host). */
  middleware(): RequestHandler {
    return async (req: Request, res: Response, next: NextFunction) => {
      if (isPublicRequest({ method: req.method, path: req.path, accept: req.get('accept') })) return next();
      const result = await this.authenticate(req.get('authorization'), req.get('host'));
      if (!result.ok) {
        sendAuthFailure(res, result);
        return;
      }
      accesses.set(req, result.access);
      next();
    };
  }
}

function requestAccess(req: Request): Access {
  const access = accessOf(req);
  if (!access) throw new Error(`${req.method} ${req.path}: no Access (the route is not behind the gate)`);
  return access;
}

/** 403 unless the user holds a cluster-wide permission (node data, /metrics, the scheduler's status). */
export function requireUserPermission(p: Permission): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      await requirePermission(requestAccess(req), p);
    } catch (err) {
      if (err instanceof ForbiddenError) return sendForbidden(res, err);
      throw err;
    }
    next();
  };
}

/** The header saying how many namespaces' items a list left out. */
export const OMITTED_NAMESPACES_HEADER = 'X-Nodeload-Omitted-Namespaces';

/**
 * Answers a JSON list of namespaced items: with `namespace` asked for, 403 unless the user may read it
 * there; otherwise only the namespaces they may read, the count of the others in a header.
 */
export async function sendReadable<T, B>(
  req: Request,
  res: Response,
  p: Permission,
  items: Iterable<T>,
  namespaceOf: (item: T) => string,
  opts: { namespace?: string | undefined; body?: (items: T[]) => B } = {},
): Promise<void> {
  const access = requestAccess(req);
  if (opts.namespace !== undefined && !(await mayRead(access, p, opts.namespace))) {
    return sendForbidden(res, new ForbiddenError(access.userName, describePermission(p, opts.namespace)));
  }
  const readable = await filterReadable(access, p, items, namespaceOf);
  res.setHeader(OMITTED_NAMESPACES_HEADER, String(readable.omitted.length));
  res.json(opts.body ? opts.body(readable.items) : readable.items);
}

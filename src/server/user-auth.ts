/**
 * The user-facing port's gate: every request but the public ones (authn.ts isPublicRequest) is
 * authenticated before any route runs — 401 without a valid bearer token — and carries its Access
 * (access.ts) for the views to filter with. WebSocket connections authenticate through the same
 * `authenticate` with the token of their connection_init payload or upgrade request. With the anonymous
 * flag, a tokenless request is served only when its Host is a loopback name (authn.ts isLoopbackHost):
 * otherwise 403, so a page of a DNS-rebound domain cannot read the cluster through a browser.
 *
 * With --user-client-ca-file (8080 over TLS), a client certificate that CA signed authenticates too, as
 * kube-apiserver's x509 authenticator does: tried before the token (a valid certificate is the user, its
 * CN the name and its O values the groups, whatever token comes with it); one that does not verify is
 * refused with 401 unless a token authenticates instead — never served as anonymous.
 */
import type { X509Certificate } from 'node:crypto';
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
  NO_TOKEN_MESSAGE,
} from './authn.js';
import type { CachedAccessReviewer } from './authz.js';
import { type CertificateUserVerdict, certificateUser, NOT_SIGNED, peerChain } from './client-cert.js';
import type { Logger } from './log.js';

export type AuthFailure = { ok: false; status: 401 | 403 | 503; message: string };
/** `credential`: what authenticated the user — a bearer token, a client certificate, or nothing (anonymous, public). */
export type AuthResult =
  | { ok: true; access: Access; credential: 'token' | 'certificate' | 'none' }
  | AuthFailure;

export interface UserPortAuthOptions {
  /** Serve requests without a token as an unrestricted user (--anonymous-user-port; loopback only). */
  anonymous: boolean;
  authenticator: CachedTokenAuthenticator;
  reviewer: CachedAccessReviewer;
  /** CAs whose client certificates authenticate (--user-client-ca-file); absent: certificates are ignored. */
  clientCas?: readonly X509Certificate[] | undefined;
  log: Logger;
}

const accesses = new WeakMap<http.IncomingMessage, Access>();
const byCertificate = new WeakSet<http.IncomingMessage>();

/** The request's Access, set by the gate; a request that did not pass it (a public one) has none. */
export function accessOf(req: http.IncomingMessage): Access | undefined {
  return accesses.get(req);
}

/**
 * Whether the gate authenticated the request by its client certificate: its Authorization header, if
 * any, was not what let it in, so an open stream is not ended when that token stops authenticating.
 */
export function authenticatedByCertificate(req: http.IncomingMessage): boolean {
  return byCertificate.has(req);
}

const AUTHENTICATED_GROUP = 'system:authenticated';

/** A certificate that does not authenticate, for a 401. */
function certificateMessage(reason: string): string {
  const why =
    reason === NOT_SIGNED ? 'client certificate is not signed by the --user-client-ca-file CA' : reason;
  return `${why}: present a client certificate that CA signed, or none and "Authorization: Bearer <token>"`;
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
  /**
   * The verdict on each TLS connection's client certificate (undefined: none presented), kept while it
   * holds and the CAs stay: verifying the chain costs far more than a request, and a connection's
   * certificate stays.
   */
  private certificates = new WeakMap<object, { verdict?: CertificateUserVerdict; until: number }>();
  private clientCas: readonly X509Certificate[] | undefined;

  constructor(private readonly opts: UserPortAuthOptions) {
    this.clientCas = opts.clientCas;
  }

  /**
   * Trusts these CAs for client certificates from now on (the --user-client-ca-file bundle re-read):
   * every connection's certificate is verified again on its next request, so one the new bundle no
   * longer trusts stops authenticating (streams it opened stay, as they do past a certificate's expiry).
   */
  useClientCas(cas: readonly X509Certificate[]): void {
    this.clientCas = cas;
    this.certificates = new WeakMap();
  }

  get anonymous(): boolean {
    return this.opts.anonymous;
  }

  /**
   * `authorization` as an Authorization header reads: "Bearer <token>" (or nothing); `host` is the
   * request's Host header, which decides whether a tokenless request may be served anonymously (absent:
   * it may not); `socket` the request's connection, whose TLS client certificate authenticates with
   * --user-client-ca-file (tried first, as kube-apiserver does).
   */
  async authenticate(
    authorization: string | undefined,
    host?: string,
    socket?: unknown,
  ): Promise<AuthResult> {
    const certificate = this.certificateOf(socket);
    if (certificate?.ok) {
      // As kube-apiserver's AuthenticatedGroupAdder: system:authenticated once.
      const groups = certificate.groups.filter((g) => g !== AUTHENTICATED_GROUP);
      const user = { name: certificate.name, groups: [...groups, AUTHENTICATED_GROUP], extra: {} };
      return { ok: true, access: reviewedAccess(user, this.opts.reviewer), credential: 'certificate' };
    }
    if (certificate && !authorization?.trim()) {
      this.opts.log.debug({ reason: certificate.reason }, 'client certificate refused');
      return { ok: false, status: 401, message: certificateMessage(certificate.reason) };
    }
    const result = await this.authenticateToken(authorization, host);
    // Neither: the 401 says why of both.
    if (certificate && !result.ok && result.status === 401) {
      return { ...result, message: `${result.message}; ${certificateMessage(certificate.reason)}` };
    }
    return result;
  }

  /** The verdict on the connection's client certificate; undefined without --user-client-ca-file or a certificate. */
  private certificateOf(socket: unknown): CertificateUserVerdict | undefined {
    const cas = this.clientCas;
    if (!cas || typeof socket !== 'object' || socket === null) return undefined;
    const now = Date.now();
    const known = this.certificates.get(socket);
    if (known && now <= known.until) return known.verdict;
    const chain = peerChain(socket);
    const verdict = chain.length > 0 ? certificateUser(chain, cas, new Date(now)) : undefined;
    // A refusal and the absence of a certificate hold for the connection; a user until a certificate of
    // its path expires.
    this.certificates.set(socket, { verdict, until: verdict?.ok ? verdict.validUntil : Infinity });
    return verdict;
  }

  private async authenticateToken(authorization: string | undefined, host?: string): Promise<AuthResult> {
    const step = authenticationStep({ authorization, anonymous: this.opts.anonymous });
    switch (step.kind) {
      case 'public':
        return { ok: true, access: UNRESTRICTED_ACCESS, credential: 'none' };
      case 'anonymous':
        if (!isLoopbackHost(host)) {
          this.opts.log.debug({ host }, 'tokenless request for a host other than loopback refused');
          return { ok: false, status: 403, message: anonymousHostMessage(host) };
        }
        return { ok: true, access: UNRESTRICTED_ACCESS, credential: 'none' };
      case 'reject':
        return {
          ok: false,
          status: 401,
          message:
            this.clientCas && step.message === NO_TOKEN_MESSAGE
              ? `${NO_TOKEN_MESSAGE}, or present a client certificate signed by the --user-client-ca-file CA`
              : step.message,
        };
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
    return { ok: true, access: reviewedAccess(verdict.user, this.opts.reviewer), credential: 'token' };
  }

  /**
   * The gate: public requests pass; any other needs a valid token or client certificate (or the
   * anonymous flag and a loopback Host).
   */
  middleware(): RequestHandler {
    return async (req: Request, res: Response, next: NextFunction) => {
      if (isPublicRequest({ method: req.method, path: req.path, accept: req.get('accept') })) return next();
      const result = await this.authenticate(req.get('authorization'), req.get('host'), req.socket);
      if (!result.ok) {
        sendAuthFailure(res, result);
        return;
      }
      accesses.set(req, result.access);
      if (result.credential === 'certificate') byCertificate.add(req);
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

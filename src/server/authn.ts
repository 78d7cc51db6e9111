/**
 * Authentication on the user-facing port, as any Kubernetes client is authenticated: a bearer token,
 * reviewed by the API server (TokenReview, authentication.k8s.io/v1). The decisions are pure — which
 * requests are public, what the Authorization header says, what a TokenReview status means, how long
 * a verdict is trusted — and the API call is the thin edge at the bottom (kubeTokenReviewer).
 */
import { createHash } from 'node:crypto';
import { AuthenticationV1Api, type KubeConfig, type V1TokenReviewStatus } from '@kubernetes/client-node';
import { CachedLookup, type UserInfo } from './authz.js';
import { isDashboardPath } from './dashboard.js';

/** Answered to anyone, as kube-scheduler's --authorization-always-allow-paths default does. */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/livez']);

/** GraphiQL's page is static HTML (yoga renders it, never runs an operation, for GET + Accept: text/html). */
const GRAPHIQL_PATH = '/graphql';

export interface RequestLine {
  method: string;
  path: string;
  /** The Accept header. */
  accept?: string | undefined;
}

/** Health, the dashboard's files and GraphiQL's page need no token: none of them carries cluster data. */
export function isPublicRequest(r: RequestLine): boolean {
  if (HEALTH_PATHS.has(r.path)) return true;
  if (r.method !== 'GET' && r.method !== 'HEAD') return false;
  if (isDashboardPath(r.path)) return true;
  return r.path === GRAPHIQL_PATH && (r.accept ?? '').includes('text/html');
}

export type AuthenticationStep =
  /** Serve it as it is. */
  | { kind: 'public' }
  /** No token, and the port serves tokenless requests (--anonymous-user-port, loopback only). */
  | { kind: 'anonymous' }
  | { kind: 'token'; token: string }
  | { kind: 'reject'; message: string };

export const NO_TOKEN_MESSAGE =
  'authentication required: send "Authorization: Bearer <token>" with a Kubernetes token ' +
  '(for example one from `kubectl create token <serviceaccount>`)';

/**
 * What to do with a request before any handler: `authorization` is the Authorization header (or, on a
 * WebSocket, the connection_init payload's `authorization`).
 */
export function authenticationStep(opts: {
  authorization: string | undefined;
  anonymous: boolean;
  isPublic?: boolean;
}): AuthenticationStep {
  if (opts.isPublic) return { kind: 'public' };
  const header = opts.authorization?.trim();
  if (!header) return opts.anonymous ? { kind: 'anonymous' } : { kind: 'reject', message: NO_TOKEN_MESSAGE };
  const match = /^bearer\s+(\S+)$/i.exec(header);
  if (!match) {
    return {
      kind: 'reject',
      message: 'malformed Authorization header: expected "Bearer <token>" (one token, no other scheme)',
    };
  }
  return { kind: 'token', token: match[1] as string };
}

export type TokenVerdict = { authenticated: true; user: UserInfo } | { authenticated: false; reason: string };

/** A TokenReview's status as a verdict (the API server puts system:authenticated in the groups itself). */
export function verdictFromTokenReview(status: V1TokenReviewStatus | undefined): TokenVerdict {
  const name = status?.user?.username;
  if (status?.authenticated !== true || !name) {
    return { authenticated: false, reason: status?.error || 'the API server did not accept the token' };
  }
  return {
    authenticated: true,
    user: {
      name,
      ...(status.user?.uid ? { uid: status.user.uid } : {}),
      groups: status.user?.groups ?? [],
      extra: status.user?.extra ?? {},
    },
  };
}

export type TokenReviewer = (token: string) => Promise<TokenVerdict>;

/** Tokens are never kept, only their SHA-256 (a heap dump or a log line shows no credential). */
export function tokenCacheKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface CachedTokenAuthenticatorOptions {
  /** How long an accepted token is trusted without asking again (k8s.io/apiserver's delegated authn: 10 s). */
  successTtlMs?: number;
  /** How long a refusal is remembered: shorter, so a token just created works at once. */
  failureTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/** TokenReviews cached by the token's hash, concurrent reviews of one token shared (CachedLookup). */
export class CachedTokenAuthenticator {
  private readonly verdicts: CachedLookup<TokenVerdict>;

  constructor(
    private readonly review: TokenReviewer,
    opts: CachedTokenAuthenticatorOptions = {},
  ) {
    const successTtl = opts.successTtlMs ?? 10_000;
    const failureTtl = opts.failureTtlMs ?? 2_000;
    this.verdicts = new CachedLookup(
      (v) => (v.authenticated ? successTtl : failureTtl),
      opts.now,
      opts.maxEntries ?? 10_000,
    );
  }

  /** Rejects when the review could not be made (the API server is unreachable): that is not a verdict. */
  authenticate(token: string): Promise<TokenVerdict> {
    return this.verdicts.get(tokenCacheKey(token), () => this.review(token));
  }
}

/** The API call: a TokenReview with the gateway's credentials (needs `create tokenreviews`). */
export function kubeTokenReviewer(kubeConfig: KubeConfig): TokenReviewer {
  const api = kubeConfig.makeApiClient(AuthenticationV1Api);
  return async (token) => {
    const review = await api.createTokenReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    return verdictFromTokenReview(review.status);
  };
}

/** Whether a bind address only accepts connections from this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackAddress(address: string): boolean {
  const a = address
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (a === 'localhost' || a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice('::ffff:'.length) : a;
  return /^127(\.\d{1,3}){3}$/.test(v4);
}

/**
 * Whether a Host header names this machine by a loopback name: localhost or a name under `.localhost`
 * (RFC 6761: resolved to loopback, never by DNS), an address of 127.0.0.0/8 or [::1], with any port.
 * The anonymous user port serves tokenless requests only so addressed: a page whose domain an attacker
 * resolves to 127.0.0.1 (DNS rebinding) reaches the port with that domain as its Host.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::\d+)?$/.exec(host?.trim().toLowerCase() ?? '');
  const name = m?.[1]?.replace(/\.$/, '');
  if (!name) return false;
  return name === 'localhost' || name.endsWith('.localhost') || isLoopbackAddress(name);
}

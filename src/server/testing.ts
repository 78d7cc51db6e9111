/**
 * Test kit for the user port's gate: a UserPortAuth whose TokenReview and SubjectAccessReview are
 * answered from a table of fake users and their RBAC, written the way a message names a permission:
 *
 *   fakeUserPortAuth({ users: { 'tok-alice': { name: 'alice', can: ['list pods in shop', 'list nodes'] } } })
 *
 * A rule without `in <namespace>` holds cluster-wide (in every namespace); `get /metrics` is a
 * nonResourceURL. Also: a recording SubjectAccessReviewer, and a loopback server per test.
 */
import type { X509Certificate } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { type Access, reviewedAccess } from './access.js';
import { CachedTokenAuthenticator } from './authn.js';
import {
  type AuthorizationDecision,
  CachedAccessReviewer,
  type RequestAttributes,
  type SubjectAccessReviewBody,
  type SubjectAccessReviewer,
} from './authz.js';
import { UserPortAuth } from './user-auth.js';

export interface FakeUser {
  name: string;
  groups?: string[];
  /** RBAC as "verb resource[.group] [in namespace]" or "verb /path". */
  can: string[];
}

/** Whether RBAC written as `can` allows the attributes. */
export function allows(can: readonly string[], attrs: RequestAttributes): boolean {
  return can.some((rule) => {
    const m = /^(\S+) (\S+)(?: in (\S+))?$/.exec(rule);
    if (!m) throw new Error(`fake RBAC rule "${rule}": expected "verb resource [in namespace]"`);
    const [, verb, what, namespace] = m as unknown as [string, string, string, string | undefined];
    if (verb !== attrs.verb) return false;
    if (attrs.kind === 'nonResource') return what === attrs.path;
    const [resource, ...group] = what.split('.');
    if (resource !== attrs.resource || group.join('.') !== attrs.group) return false;
    return namespace === undefined || namespace === attrs.namespace;
  });
}

export interface FakeUserPortAuth {
  auth: UserPortAuth;
  /** Every TokenReview asked (the tokens). */
  tokenReviews: string[];
  /** Every SubjectAccessReview asked. */
  accessReviews: SubjectAccessReviewBody[];
  /** The Access a token's user gets, without going through the gate. */
  accessOf(token: string): Access;
}

export function fakeUserPortAuth(
  opts: {
    anonymous?: boolean;
    users?: Record<string, FakeUser>;
    now?: () => number;
    /** Every TokenReview fails, as while the API server is unreachable. */
    tokenReviewDown?: boolean;
    /** CAs of client certificates (--user-client-ca-file); a certificate's CN is looked up in `users` by name. */
    clientCas?: readonly X509Certificate[];
  } = {},
): FakeUserPortAuth {
  const users = opts.users ?? {};
  const tokenReviews: string[] = [];
  const accessReviews: SubjectAccessReviewBody[] = [];
  const byName = new Map(Object.values(users).map((u) => [u.name, u]));
  const authenticator = new CachedTokenAuthenticator(
    async (token) => {
      tokenReviews.push(token);
      if (opts.tokenReviewDown) throw new Error('connect ECONNREFUSED');
      const u = users[token];
      return u
        ? {
            authenticated: true,
            user: { name: u.name, groups: [...(u.groups ?? []), 'system:authenticated'], extra: {} },
          }
        : { authenticated: false, reason: 'token not known' };
    },
    opts.now ? { now: opts.now } : {},
  );
  const reviewer = new CachedAccessReviewer(
    async (body) => {
      accessReviews.push(body);
      const u = byName.get(body.spec.user);
      const spec = body.spec;
      const attrs: RequestAttributes = spec.nonResourceAttributes
        ? { kind: 'nonResource', ...spec.nonResourceAttributes }
        : { kind: 'resource', ...(spec.resourceAttributes as NonNullable<typeof spec.resourceAttributes>) };
      return { allowed: u !== undefined && allows(u.can, attrs), reason: '' };
    },
    opts.now ? { now: opts.now } : {},
  );
  const auth = new UserPortAuth({
    anonymous: opts.anonymous ?? false,
    authenticator,
    reviewer,
    clientCas: opts.clientCas,
    log: pino({ level: 'silent' }),
  });
  return {
    auth,
    tokenReviews,
    accessReviews,
    accessOf(token) {
      const u = users[token];
      if (!u) throw new Error(`no fake user with token ${token}`);
      return reviewedAccess({ name: u.name, groups: u.groups ?? [], extra: {} }, reviewer);
    },
  };
}

/** A SubjectAccessReviewer answering with `decide` (an Error is thrown), recording every review asked. */
export function recordingReviewer(decide: (b: SubjectAccessReviewBody) => AuthorizationDecision | Error): {
  calls: SubjectAccessReviewBody[];
  review: SubjectAccessReviewer;
} {
  const calls: SubjectAccessReviewBody[] = [];
  const review = async (body: SubjectAccessReviewBody) => {
    calls.push(body);
    const d = decide(body);
    if (d instanceof Error) throw d;
    return d;
  };
  return { calls, review };
}

const served: http.Server[] = [];

/** Serves the handler on a loopback port; returns its base URL. Close with closeServed() after each test. */
export async function serveOnLoopback(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  served.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function closeServed(): Promise<void> {
  for (const s of served.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
}

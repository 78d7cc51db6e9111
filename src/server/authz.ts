/**
 * Delegated authorization, shared by both ports: who the user is (UserInfo), what a request does
 * (RequestAttributes), the SubjectAccessReview asking the API server about it, and a bounded cache of
 * the answers (k8s.io/apiserver keeps them 10 s). The aggregated API (src/aggregated/security.ts) asks per
 * request; the user-facing port (access.ts) asks per namespace and data kind. The API call itself is the
 * thin edge at the bottom (kubeSubjectAccessReviewer).
 */
import { AuthorizationV1Api, type KubeConfig, type V1SubjectAccessReview } from '@kubernetes/client-node';

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** SubjectAccessReview's resourceAttributes. */
interface ResourceAttributes {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export type RequestAttributes =
  | ({ kind: 'resource' } & ResourceAttributes)
  | { kind: 'nonResource'; verb: string; path: string };

export interface SubjectAccessReviewBody {
  apiVersion: 'authorization.k8s.io/v1';
  kind: 'SubjectAccessReview';
  spec: {
    user: string;
    uid?: string;
    groups: string[];
    extra?: Record<string, string[]>;
    resourceAttributes?: ResourceAttributes;
    nonResourceAttributes?: { verb: string; path: string };
  };
}

export function subjectAccessReview(user: UserInfo, attrs: RequestAttributes): SubjectAccessReviewBody {
  const { kind, ...rest } = attrs;
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: user.name,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      ...(Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
      ...(kind === 'resource'
        ? { resourceAttributes: rest as never }
        : { nonResourceAttributes: rest as never }),
    },
  };
}

/** The user as a cache key: group and extra order does not matter. */
export function userKey(user: UserInfo): string {
  const extra = Object.entries(user.extra)
    .map(([k, v]) => [k, [...v].sort()] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
  return JSON.stringify([user.name, user.uid ?? '', [...user.groups].sort(), extra]);
}

/** One cache key per (user, attributes). */
export function decisionKey(user: UserInfo, attrs: RequestAttributes): string {
  return `${userKey(user)}\u0000${JSON.stringify(attrs)}`;
}

export interface AuthorizationDecision {
  allowed: boolean;
  reason: string;
}

export type SubjectAccessReviewer = (body: SubjectAccessReviewBody) => Promise<AuthorizationDecision>;

/** Values for a while each, bounded in size: past maxEntries the oldest entries go first. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(private readonly maxEntries = 10_000) {}

  get(key: string, now: number): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number, now: number): void {
    this.entries.delete(key);
    if (ttlMs <= 0) return;
    this.entries.set(key, { value, expires: now + ttlMs });
    // Maps iterate in insertion order: the first entries are the oldest.
    for (const k of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(k);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Answers looked up by key, each cached for a TTL chosen by the answer (say shorter for a denial), with
 * concurrent lookups of one key sharing one call. A failed lookup is not cached: the next one asks again.
 */
export class CachedLookup<V> {
  private readonly cache: TtlCache<V>;
  private readonly inFlight = new Map<string, Promise<V>>();

  constructor(
    private readonly ttlOf: (value: V) => number,
    private readonly now: () => number = Date.now,
    maxEntries = 10_000,
  ) {
    this.cache = new TtlCache(maxEntries);
  }

  peek(key: string): V | undefined {
    return this.cache.get(key, this.now());
  }

  get(key: string, load: () => Promise<V>): Promise<V> {
    const cached = this.cache.get(key, this.now());
    if (cached !== undefined) return Promise.resolve(cached);
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = load().then(
        (value) => {
          this.inFlight.delete(key);
          this.cache.set(key, value, this.ttlOf(value), this.now());
          return value;
        },
        (err: unknown) => {
          this.inFlight.delete(key);
          throw err;
        },
      );
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  get size(): number {
    return this.cache.size;
  }
}

export interface CachedAccessReviewerOptions {
  /** How long an answer is kept (k8s.io/apiserver's delegated authorizer: 10 s allowed, 10 s denied). */
  allowedTtlMs?: number;
  deniedTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/** SubjectAccessReviews with their answers cached per (user, attributes) (CachedLookup). */
export class CachedAccessReviewer {
  private readonly answers: CachedLookup<AuthorizationDecision>;

  constructor(
    private readonly review: SubjectAccessReviewer,
    opts: CachedAccessReviewerOptions = {},
  ) {
    const allowedTtl = opts.allowedTtlMs ?? 10_000;
    const deniedTtl = opts.deniedTtlMs ?? 10_000;
    this.answers = new CachedLookup((d) => (d.allowed ? allowedTtl : deniedTtl), opts.now, opts.maxEntries);
  }

  /** The cached answer; undefined when answering needs a review. */
  peek(user: UserInfo, attrs: RequestAttributes): AuthorizationDecision | undefined {
    return this.answers.peek(decisionKey(user, attrs));
  }

  check(user: UserInfo, attrs: RequestAttributes): Promise<AuthorizationDecision> {
    return this.answers.get(decisionKey(user, attrs), () => this.review(subjectAccessReview(user, attrs)));
  }
}

/** The API call: a SubjectAccessReview with the gateway's credentials (needs `create subjectaccessreviews`). */
export function kubeSubjectAccessReviewer(kubeConfig: KubeConfig): SubjectAccessReviewer {
  const api = kubeConfig.makeApiClient(AuthorizationV1Api);
  return async (body) => {
    const result = await api.createSubjectAccessReview({ body: body as V1SubjectAccessReview });
    return {
      allowed: result.status?.allowed === true && result.status?.denied !== true,
      reason: result.status?.reason ?? '',
    };
  };
}

/**
 * What a user of the user-facing port may read, mirroring RBAC: each kind of data needs one permission,
 * asked of the API server with a SubjectAccessReview (cached, authz.ts) per namespace. Every view (GraphQL,
 * the original routes) filters through here, so a kind of data is checked in one place:
 *
 * | data                                                        | permission                                   |
 * |-------------------------------------------------------------|----------------------------------------------|
 * | pods, pending pods, scheduling decisions                    | `list pods` in their namespace               |
 * | NodeLoadRules, their status, evaluation, suggestions, hints | `list nodeloadrules.example.com` in it       |
 * | simulateRule                                                | `get nodeloadrules.example.com` in it        |
 * | nodes and their load                                        | `list nodes`                                 |
 * | /metrics, the scheduler's status                            | nonResourceURL `get /metrics`, `get /scheduler/status` |
 *
 * A list across namespaces holds only the namespaces the user may read; the caller says how many were
 * left out (GraphQL response extensions, a response header), never silently.
 */
import type { CachedAccessReviewer, RequestAttributes, UserInfo } from './authz.js';
import { userKey } from './authz.js';

export type Permission =
  | { kind: 'resource'; verb: string; group: string; version: string; resource: string; namespaced: boolean }
  | { kind: 'nonResource'; verb: string; path: string };

/** The NodeLoadRule API group (src/rules/types.ts RULE_GROUP; src/server sits below src/rules). */
const RULE_GROUP = 'example.com';

export const PERMISSIONS = {
  /** Pods, pending pods and scheduling decisions. */
  listPods: { kind: 'resource', verb: 'list', group: '', version: 'v1', resource: 'pods', namespaced: true },
  /** Rules and everything derived from one (status, evaluation, suggestions, rebalancing hints). */
  listRules: {
    kind: 'resource',
    verb: 'list',
    group: RULE_GROUP,
    version: 'v1',
    resource: 'nodeloadrules',
    namespaced: true,
  },
  /** simulateRule: a what-if of one rule. */
  getRules: {
    kind: 'resource',
    verb: 'get',
    group: RULE_GROUP,
    version: 'v1',
    resource: 'nodeloadrules',
    namespaced: true,
  },
  listNodes: {
    kind: 'resource',
    verb: 'list',
    group: '',
    version: 'v1',
    resource: 'nodes',
    namespaced: false,
  },
  metrics: { kind: 'nonResource', verb: 'get', path: '/metrics' },
  schedulerStatus: { kind: 'nonResource', verb: 'get', path: '/scheduler/status' },
} as const satisfies Record<string, Permission>;

/** The permission without a scope: "pods list", "nodeloadrules.example.com get", "get /metrics". */
export function permissionName(p: Permission): string {
  if (p.kind === 'nonResource') return `${p.verb} ${p.path}`;
  return `${p.group ? `${p.resource}.${p.group}` : p.resource} ${p.verb}`;
}

/** As a message names it: "pods list in shop", "pods list in all namespaces", "nodes list", "get /metrics". */
export function describePermission(p: Permission, namespace?: string): string {
  if (p.kind === 'nonResource' || !p.namespaced) return permissionName(p);
  return `${permissionName(p)} ${namespace ? `in ${namespace}` : 'in all namespaces'}`;
}

/** The SubjectAccessReview attributes; a namespaced permission without a namespace means all of them. */
export function permissionAttributes(p: Permission, namespace?: string): RequestAttributes {
  if (p.kind === 'nonResource') return { kind: 'nonResource', verb: p.verb, path: p.path };
  return {
    kind: 'resource',
    verb: p.verb,
    group: p.group,
    version: p.version,
    resource: p.resource,
    ...(p.namespaced && namespace ? { namespace } : {}),
  };
}

/** One request's (or one WebSocket connection's) user and what they may read. */
export interface Access {
  /** For messages and logs. */
  readonly userName: string;
  /** The same for every request of the same user: what shared subscription executions are keyed on. */
  readonly key: string;
  allowed(p: Permission, namespace?: string): Promise<boolean>;
  /** The cached answer; undefined when it needs a review. */
  peek(p: Permission, namespace?: string): boolean | undefined;
}

/** The tokenless user of --anonymous-user-port (loopback only): reads everything. */
export const UNRESTRICTED_ACCESS: Access = {
  userName: 'anonymous (loopback)',
  key: 'anonymous',
  allowed: async () => true,
  peek: () => true,
};

export function reviewedAccess(user: UserInfo, reviewer: CachedAccessReviewer): Access {
  return {
    userName: user.name,
    key: userKey(user),
    allowed: async (p, namespace) => (await reviewer.check(user, permissionAttributes(p, namespace))).allowed,
    peek: (p, namespace) => reviewer.peek(user, permissionAttributes(p, namespace))?.allowed,
  };
}

export class ForbiddenError extends Error {
  constructor(
    readonly user: string,
    /** As describePermission words it. */
    readonly permission: string,
  ) {
    super(`forbidden: user "${user}" lacks ${permission}`);
    this.name = 'ForbiddenError';
  }
}

/** Throws ForbiddenError unless the user holds the permission (in the namespace, for a namespaced one). */
export async function requirePermission(access: Access, p: Permission, namespace?: string): Promise<void> {
  if (!(await access.allowed(p, namespace))) {
    throw new ForbiddenError(access.userName, describePermission(p, namespace));
  }
}

/** Whether the user may read the namespace's data of this kind: everywhere (cluster-wide), or there. */
export async function mayRead(access: Access, p: Permission, namespace: string): Promise<boolean> {
  return (await access.allowed(p)) || (await access.allowed(p, namespace));
}

/** mayRead from cached answers only; undefined when one of them needs a review. */
export function mayReadNow(access: Access, p: Permission, namespace: string): boolean | undefined {
  const everywhere = access.peek(p);
  if (everywhere !== false) return everywhere;
  return access.peek(p, namespace);
}

export interface Readable<T> {
  items: T[];
  /** The namespaces whose items were left out, sorted. */
  omitted: string[];
}

/**
 * The items the user may read: all of them with the permission cluster-wide, else those of the namespaces
 * where a review allows it (one review per distinct namespace, in parallel, cached).
 */
export async function filterReadable<T>(
  access: Access,
  p: Permission,
  items: Iterable<T>,
  namespaceOf: (item: T) => string,
): Promise<Readable<T>> {
  const all = [...items];
  if (await access.allowed(p)) return { items: all, omitted: [] };
  const namespaces = [...new Set(all.map(namespaceOf))];
  const verdicts = await Promise.all(namespaces.map((ns) => access.allowed(p, ns)));
  const allowed = new Set(namespaces.filter((_ns, i) => verdicts[i]));
  return {
    items: all.filter((item) => allowed.has(namespaceOf(item))),
    omitted: namespaces.filter((ns) => !allowed.has(ns)).sort(),
  };
}

/**
 * Authorization of what resolvers return, one place per kind of data (the table in
 * src/server/access.ts): pod data (pods, pending pods, decisions), rules (and all derived from them),
 * nodes and their load, the scheduler's status. Asking for one namespace without the permission there is
 * a FORBIDDEN error naming it ("pods list in shop"); a list across namespaces holds only the namespaces
 * the user may read, and the response's `extensions.authorization` counts the ones left out.
 */
import type { NodeLoad } from '../load/types.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { Decision } from '../scheduler/explain.js';
import type { HistoryPage, HistoryQuery } from '../scheduler/history.js';
import {
  type Access,
  describePermission,
  filterReadable,
  mayRead,
  mayReadNow,
  PERMISSIONS,
  type Permission,
  permissionName,
} from '../server/access.js';
import type { GraphQLContext } from './context.js';
import { graphQLError } from './errors.js';

/**
 * The operation's Access, with a failed review (the API server unreachable) reported as UNAVAILABLE
 * rather than masked as an unexpected error: the client knows to retry.
 */
export function reportingUnavailable(access: Access): Access {
  const unavailable = () => {
    throw graphQLError('UNAVAILABLE', 'authorization unavailable: the SubjectAccessReview could not be made');
  };
  return { ...access, allowed: (p, namespace) => access.allowed(p, namespace).catch(unavailable) };
}

function forbidden(access: Access, p: Permission, namespace?: string) {
  const permission = describePermission(p, namespace);
  return graphQLError('FORBIDDEN', `forbidden: user "${access.userName}" lacks ${permission}`, {
    permission,
  });
}

/** Records what was left out, for the response extensions: namespaces, or cluster-scoped data (none). */
function noteOmitted(ctx: GraphQLContext, p: Permission, namespaces: string[]): void {
  const namespaced = p.kind === 'resource' && p.namespaced;
  if (namespaced && namespaces.length === 0) return;
  const key = permissionName(p);
  const set = ctx.omitted.get(key) ?? new Set<string>();
  for (const ns of namespaces) set.add(ns);
  ctx.omitted.set(key, set);
}

async function requireIn(ctx: GraphQLContext, p: Permission, namespace: string): Promise<void> {
  if (!(await mayRead(ctx.access, p, namespace))) throw forbidden(ctx.access, p, namespace);
}

async function readable<T>(
  ctx: GraphQLContext,
  p: Permission,
  items: Iterable<T>,
  namespaceOf: (item: T) => string,
): Promise<T[]> {
  const r = await filterReadable(ctx.access, p, items, namespaceOf);
  noteOmitted(ctx, p, r.omitted);
  return r.items;
}

/** Pod data of one namespace: FORBIDDEN without `list pods` there. */
export function requirePodsIn(ctx: GraphQLContext, namespace: string): Promise<void> {
  return requireIn(ctx, PERMISSIONS.listPods, namespace);
}

/** Pods, pending pods or decisions: only those of namespaces with `list pods`. */
export function readablePodData<T>(
  ctx: GraphQLContext,
  items: Iterable<T>,
  namespaceOf: (item: T) => string,
): Promise<T[]> {
  return readable(ctx, PERMISSIONS.listPods, items, namespaceOf);
}

/**
 * For a stream: whether an event of the namespace may go out, from cached answers when they are fresh
 * (a boolean), else after a review (a promise). Checked per event, so a revoked permission stops the
 * events within the cache's TTL.
 */
export function podDataFilter(ctx: GraphQLContext): (namespace: string) => boolean | Promise<boolean> {
  return (namespace) =>
    mayReadNow(ctx.access, PERMISSIONS.listPods, namespace) ??
    mayRead(ctx.access, PERMISSIONS.listPods, namespace);
}

/**
 * A page of the decision history holding only readable namespaces, filled to `limit` with them (not
 * filtered after paging). Namespaces met for the first time are reviewed and the page taken again.
 */
export async function readableHistory(
  ctx: GraphQLContext,
  query: (q: HistoryQuery) => HistoryPage,
  q: HistoryQuery,
): Promise<HistoryPage> {
  const p = PERMISSIONS.listPods;
  if (await ctx.access.allowed(p)) return query(q);
  const known = new Map<string, boolean>();
  for (;;) {
    const unknown = new Set<string>();
    const page = query({
      ...q,
      acceptNamespace: (ns) => {
        let ok = known.get(ns);
        if (ok === undefined) {
          ok = mayReadNow(ctx.access, p, ns);
          if (ok === undefined) {
            unknown.add(ns);
            return false;
          }
          known.set(ns, ok);
        }
        return ok;
      },
    });
    if (unknown.size === 0) {
      noteOmitted(
        ctx,
        p,
        [...known].filter(([, ok]) => !ok).map(([ns]) => ns),
      );
      return page;
    }
    // Each pass reviews every namespace it met, so the next pass meets none it does not know.
    await Promise.all(
      [...unknown].map(async (ns) => {
        known.set(ns, await mayRead(ctx.access, p, ns));
      }),
    );
  }
}

/** One decision: FORBIDDEN unless its pod's namespace is readable. */
export async function requireDecision(ctx: GraphQLContext, d: Decision): Promise<Decision> {
  await requirePodsIn(ctx, d.namespace);
  return d;
}

/** Rules (status, evaluation, suggestions, hints) of one namespace: FORBIDDEN without `list nodeloadrules`. */
export function requireRulesIn(ctx: GraphQLContext, namespace: string): Promise<void> {
  return requireIn(ctx, PERMISSIONS.listRules, namespace);
}

/** Rules of the namespaces with `list nodeloadrules.example.com`; with `namespace`, FORBIDDEN unless there. */
export async function readableRules(
  ctx: GraphQLContext,
  rules: NodeLoadRule[],
  namespace?: string | null,
): Promise<NodeLoadRule[]> {
  if (namespace) await requireRulesIn(ctx, namespace);
  return readable(ctx, PERMISSIONS.listRules, rules, (r) => r.namespace);
}

/** simulateRule: `get nodeloadrules.example.com` in the rule's namespace. */
export function requireSimulate(ctx: GraphQLContext, namespace: string): Promise<void> {
  return requireIn(ctx, PERMISSIONS.getRules, namespace);
}

/** Nodes and their load: `list nodes` (cluster-scoped). */
export async function requireNodes(ctx: GraphQLContext): Promise<void> {
  if (!(await ctx.access.allowed(PERMISSIONS.listNodes))) throw forbidden(ctx.access, PERMISSIONS.listNodes);
}

/** A node's load where it hangs off other data (a rule's verdict): null without `list nodes`, and said so. */
export async function readableLoad(
  ctx: GraphQLContext,
  load: () => NodeLoad | undefined,
): Promise<NodeLoad | null> {
  if (await ctx.access.allowed(PERMISSIONS.listNodes)) return load() ?? null;
  noteOmitted(ctx, PERMISSIONS.listNodes, []);
  return null;
}

/** For a stream of node data: checked per event, as podDataFilter. */
export function nodeDataFilter(ctx: GraphQLContext): () => boolean | Promise<boolean> {
  return () => ctx.access.peek(PERMISSIONS.listNodes) ?? ctx.access.allowed(PERMISSIONS.listNodes);
}

/** The scheduler's counters: the nonResourceURL `get /scheduler/status`, as the route of that name. */
export async function requireSchedulerStatus(ctx: GraphQLContext): Promise<void> {
  if (!(await ctx.access.allowed(PERMISSIONS.schedulerStatus))) {
    throw forbidden(ctx.access, PERMISSIONS.schedulerStatus);
  }
}

/** What `extensions.authorization` says when something was left out; undefined when nothing was. */
export function authorizationExtension(
  omitted: ReadonlyMap<string, ReadonlySet<string>>,
): { omittedNamespaces: number; omitted: { permission: string; namespaces?: number }[] } | undefined {
  if (omitted.size === 0) return undefined;
  const namespaces = new Set<string>();
  const list: { permission: string; namespaces?: number }[] = [];
  for (const [permission, set] of omitted) {
    for (const ns of set) namespaces.add(ns);
    list.push(set.size > 0 ? { permission, namespaces: set.size } : { permission });
  }
  return {
    omittedNamespaces: namespaces.size,
    omitted: list.sort((a, b) => (a.permission < b.permission ? -1 : 1)),
  };
}

/** Scheduling queries: the decision history (paged), one decision, pending pods, the scheduler's state. */
import type { Decision } from '../scheduler/explain.js';
import { DEFAULT_PAGE, type HistoryPage, InvalidCursorError, MAX_PAGE } from '../scheduler/history.js';
import type { PendingPod } from '../scheduler/queue.js';
import type { SchedulerStatus } from '../scheduler/scheduler.js';
import {
  readableHistory,
  readablePodData,
  requireDecision,
  requirePodsIn,
  requireSchedulerStatus,
} from './authorize.js';
import { builder } from './builder.js';
import { COUNTED_BY_PARENT, sizedList } from './complexity.js';
import { DecisionRef, DecisionResultRef } from './decisions.js';
import { badUserInput, notFound } from './errors.js';
import { PodRef } from './pods.js';

const HistoryPageRef = builder.objectRef<HistoryPage>('SchedulingHistoryPage').implement({
  description: 'One page of decisions, newest first. Pass nextCursor as `after` for the next (older) page.',
  fields: (t) => ({
    items: t.field({ type: [DecisionRef], complexity: COUNTED_BY_PARENT, resolve: (p) => p.items }),
    nextCursor: t.string({
      nullable: true,
      description: 'Null on the last page.',
      resolve: (p) => p.nextCursor ?? null,
    }),
    hasNextPage: t.boolean({ resolve: (p) => p.nextCursor !== undefined }),
  }),
});

export const QueueNameRef = builder.enumType('SchedulingQueue', {
  values: {
    ACTIVE: { value: 'active', description: 'Waiting for its turn.' },
    BACKOFF: { value: 'backoff', description: 'Failed recently; waiting out its backoff.' },
    UNSCHEDULABLE: {
      value: 'unschedulable',
      description: 'Waiting for a cluster change that could help it.',
    },
    IN_FLIGHT: { value: 'inFlight', description: 'Being scheduled right now.' },
  } as const,
});

const PendingPodRef = builder.objectRef<PendingPod>('PendingPod').implement({
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    name: t.string({ resolve: (p) => p.pod }),
    queue: t.field({ type: QueueNameRef, resolve: (p) => p.queue }),
    reason: t.string({
      nullable: true,
      description: "The last failure's message; null before the first attempt.",
      resolve: (p) => p.reason || null,
    }),
    since: t.field({
      type: 'DateTime',
      description: 'When the scheduler first saw the pod.',
      resolve: (p) => p.since,
    }),
    attempts: t.exposeInt('attempts'),
    lastDecision: t.field({
      type: DecisionRef,
      nullable: true,
      description: "The latest recorded decision for the pod, with every node's verdict.",
      resolve: (p, _a, ctx) =>
        ctx.sources.scheduling.history({ namespace: p.namespace, pod: p.pod, limit: 1 }).items[0] ?? null,
    }),
    pod: t.field({
      type: PodRef,
      nullable: true,
      resolve: (p, _a, ctx) => ctx.sources.cluster.pod(p.namespace, p.pod) ?? null,
    }),
  }),
});

const QueueCountsRef = builder.objectRef<SchedulerStatus['queues']>('QueueCounts').implement({
  fields: (t) => ({
    active: t.exposeInt('active'),
    backoff: t.exposeInt('backoff'),
    unschedulable: t.exposeInt('unschedulable'),
    inFlight: t.exposeInt('inFlight'),
  }),
});

const SchedulerStatusRef = builder.objectRef<SchedulerStatus>('SchedulerStatus').implement({
  fields: (t) => ({
    schedulerName: t.exposeString('schedulerName'),
    identity: t.exposeString('identity'),
    running: t.exposeBoolean('running'),
    leader: t.exposeBoolean('leader', { description: 'This instance holds the lease and schedules.' }),
    cacheSynced: t.exposeBoolean('cacheSynced', {
      description: 'Scheduling waits for the initial cache sync.',
    }),
    queues: t.field({ type: QueueCountsRef, resolve: (s) => s.queues }),
    bindsInFlight: t.exposeInt('bindsInFlight'),
    bound: t.exposeInt('bound', { description: 'Pods this instance bound since it started.' }),
    failed: t.exposeInt('failed', {
      description: 'Attempts that ended in an error (a failed bind) since start.',
    }),
    unschedulable: t.exposeInt('unschedulable', { description: 'Attempts that found no node since start.' }),
    conflicts: t.exposeInt('conflicts', {
      description: 'Binds refused because another instance had bound the pod.',
    }),
    historySize: t.exposeInt('historySize', { description: 'Decisions held in the bounded history.' }),
    startedAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.startedAt ?? null }),
  }),
});

function byKey(a: PendingPod, b: PendingPod): number {
  const ka = `${a.namespace}/${a.pod}`;
  const kb = `${b.namespace}/${b.pod}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

builder.queryFields((t) => ({
  schedulingHistory: t.field({
    type: HistoryPageRef,
    description: `Recorded decisions, newest first, filtered; at most ${MAX_PAGE} per page.`,
    args: {
      namespace: t.arg.string({ required: false }),
      pod: t.arg.string({ required: false }),
      node: t.arg.string({
        required: false,
        description: 'Decisions that chose (or tried to bind to) this node.',
      }),
      result: t.arg({ type: DecisionResultRef, required: false }),
      since: t.arg({ type: 'DateTime', required: false, description: 'Decisions at or after this time.' }),
      first: t.arg.int({ required: false, defaultValue: DEFAULT_PAGE }),
      after: t.arg.string({ required: false, description: 'nextCursor of the previous page.' }),
    },
    // The page's items count `first` times (its `items` counts once per page).
    complexity: (args) => sizedList(args.first, DEFAULT_PAGE, MAX_PAGE),
    resolve: async (_r, args, ctx) => {
      const first = args.first ?? DEFAULT_PAGE;
      if (first < 1 || first > MAX_PAGE)
        throw badUserInput(`first must be between 1 and ${MAX_PAGE}, got ${first}`, 'first');
      if (args.namespace) await requirePodsIn(ctx, args.namespace);
      try {
        return await readableHistory(ctx, (q) => ctx.sources.scheduling.history(q), {
          ...(args.namespace ? { namespace: args.namespace } : {}),
          ...(args.pod ? { pod: args.pod } : {}),
          ...(args.node ? { node: args.node } : {}),
          ...(args.result ? { result: args.result } : {}),
          ...(args.since ? { since: args.since } : {}),
          ...(args.after ? { after: args.after } : {}),
          limit: first,
        });
      } catch (err) {
        if (err instanceof InvalidCursorError) throw badUserInput(err.message, 'after');
        throw err;
      }
    },
  }),
  decision: t.field({
    type: DecisionRef,
    description:
      "One decision with every candidate node; NOT_FOUND once it left the bounded history, FORBIDDEN without `list pods` in its pod's namespace.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx): Promise<Decision> => {
      const d = ctx.sources.scheduling.decision(String(id));
      if (!d) throw notFound('decision', String(id));
      return requireDecision(ctx, d);
    },
  }),
  pendingPods: t.field({
    type: [PendingPodRef],
    description: 'Pods waiting for this scheduler, by namespace/name, with why they wait.',
    args: { namespace: t.arg.string({ required: false }) },
    resolve: async (_r, args, ctx) => {
      if (args.namespace) await requirePodsIn(ctx, args.namespace);
      const pending = ctx.sources.scheduling
        .pendingPods()
        .filter((p) => !args.namespace || p.namespace === args.namespace);
      return (await readablePodData(ctx, pending, (p) => p.namespace)).sort(byKey);
    },
  }),
  schedulerStatus: t.field({
    type: SchedulerStatusRef,
    description: 'Needs the nonResourceURL `get /scheduler/status`, as GET /scheduler/status does.',
    resolve: async (_r, _a, ctx) => {
      await requireSchedulerStatus(ctx);
      return ctx.sources.scheduling.status();
    },
  }),
}));

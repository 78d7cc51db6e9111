/**
 * Live streams, over SSE and WebSocket alike (both run through yoga's envelop, so armor and logging
 * apply to them as to queries).
 *
 * schedulingEvents: the scheduler builds each Decision once; every subscriber's listener receives that
 * same object and only runs the namespace/node predicate. Field resolution is plain property reads on
 * the shared object, and the one derived view (candidate verdicts) is memoized per decision
 * (decisions.ts), so a burst costs O(subscribers) predicate calls plus each transport's own write.
 */
import type { LoadChange } from '../load/tracker.js';
import type { NodeLoad } from '../load/types.js';
import type { Decision } from '../scheduler/explain.js';
import { nodeDataFilter, podDataFilter, requireNodes, requirePodsIn } from './authorize.js';
import { builder } from './builder.js';
import { DecisionRef } from './decisions.js';
import { NodeLoadRef } from './nodes.js';
import { eventStream } from './stream.js';

export function decisionMatches(
  d: Decision,
  filter: { namespace?: string | null; node?: string | null },
): boolean {
  if (filter.namespace && d.namespace !== filter.namespace) return false;
  if (filter.node && d.node !== filter.node) return false;
  return true;
}

const NodeLoadUpdateRef = builder.objectRef<LoadChange>('NodeLoadUpdate').implement({
  fields: (t) => ({
    node: t.exposeString('node'),
    removed: t.boolean({
      description: 'The node went away; load is null.',
      resolve: (c) => c.load === undefined,
    }),
    load: t.field({ type: NodeLoadRef, nullable: true, resolve: (c): NodeLoad | null => c.load ?? null }),
  }),
});

builder.subscriptionFields((t) => ({
  schedulingEvents: t.field({
    type: DecisionRef,
    description:
      'Every decision as it is made, optionally only for one namespace and/or chosen node; only those of namespaces where you may list pods.',
    args: {
      namespace: t.arg.string({ required: false }),
      node: t.arg.string({ required: false }),
    },
    // subscribe before resolve: Pothos infers the argument types from the first function it sees.
    subscribe: async (_r, args, ctx) => {
      if (args.namespace) await requirePodsIn(ctx, args.namespace);
      const readable = podDataFilter(ctx);
      return eventStream<Decision>(
        (listener) => ctx.sources.scheduling.onDecision(listener),
        (d) => decisionMatches(d, args) && readable(d.namespace),
      );
    },
    resolve: (d) => d,
  }),
  nodeLoadUpdates: t.field({
    type: NodeLoadUpdateRef,
    description:
      'Load changes as the tracker computes them; `names` narrows to some nodes. Needs `list nodes`.',
    args: { names: t.arg.stringList({ required: false }) },
    subscribe: async (_r, args, ctx) => {
      await requireNodes(ctx);
      const names = args.names && args.names.length > 0 ? new Set(args.names) : undefined;
      const readable = nodeDataFilter(ctx);
      return eventStream<LoadChange>(
        (listener) => ctx.sources.loads.onChange(listener),
        (c) => (!names || names.has(c.node)) && readable(),
      );
    },
    resolve: (c) => c,
  }),
}));

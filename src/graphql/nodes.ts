/**
 * Nodes and their load, and which rules each node satisfies. Verdicts come from the operator's latest
 * evaluation (so they agree with the rule status it writes); before its first pass they are computed
 * on the spot with the same pure function.
 */
import type { NodeInfo } from '../cluster/model.js';
import type { NodeLoad } from '../load/types.js';
import { missingLoadVerdict } from '../rules/evaluate.js';
import { evaluateNodeForRule } from '../rules/rule.js';
import type { NodeLoadRule, NodeVerdict, RuleEvaluation } from '../rules/types.js';
import { readablePodData, readableRules, requireNodes } from './authorize.js';
import { builder } from './builder.js';
import { KeyValueRef, keyValues, NodeResourcesRef, ResourcesRef, TaintRef } from './common.js';
import type { GraphQLSources } from './context.js';
import { notFound } from './errors.js';
import { PodRef } from './pods.js';
import { ReasonRef } from './reasons.js';

export const LoadSourceRef = builder.enumType('LoadSource', {
  description: 'Where the load figure comes from.',
  values: {
    REQUESTS: {
      value: 'requests',
      description: 'Sum of pod requests (metrics not served, stale under fail-open).',
    },
    METRICS: { value: 'metrics', description: 'A fresh NodeMetrics sample.' },
    METRICS_PLUS_ESTIMATE: {
      value: 'metrics+estimate',
      description: 'A fresh sample plus the estimated usage of pods bound after it.',
    },
  } as const,
});

type Usage = NonNullable<NodeLoad['usage']>;

const UsageRef = builder.objectRef<Usage>('Usage').implement({
  description: 'A NodeMetrics sample.',
  fields: (t) => ({
    cpuMilli: t.exposeInt('cpuMilli'),
    memoryBytes: t.field({ type: 'SafeInt', resolve: (u) => u.memoryBytes }),
    timestamp: t.field({ type: 'DateTime', resolve: (u) => u.timestamp }),
    windowSeconds: t.exposeFloat('windowSeconds'),
  }),
});

export const NodeLoadRef = builder.objectRef<NodeLoad>('NodeLoad').implement({
  description:
    "A node's load as every decision sees it (load/model.ts): the same figures the operator and scheduler use.",
  fields: (t) => ({
    node: t.exposeString('node'),
    cpuPercent: t.exposeFloat('cpuPercent', { description: 'effective CPU / allocatable, in percent.' }),
    memoryPercent: t.exposeFloat('memoryPercent'),
    source: t.field({ type: LoadSourceRef, resolve: (l) => l.source }),
    timestamp: t.field({
      type: 'DateTime',
      description: 'Sample time, or computation time for requests.',
      resolve: (l) => l.timestamp,
    }),
    stale: t.boolean({
      description: 'The metrics sample is stale or missing.',
      resolve: (l) => l.metricsStale,
    }),
    unavailable: t.exposeBoolean('unavailable', {
      description: 'fail-closed and no fresh metrics: the load is unknown.',
    }),
    allocatable: t.field({ type: NodeResourcesRef, resolve: (l) => l.allocatable }),
    requested: t.field({ type: ResourcesRef, resolve: (l) => l.requested }),
    usage: t.field({ type: UsageRef, nullable: true, resolve: (l) => l.usage ?? null }),
    estimated: t.field({
      type: ResourcesRef,
      description: 'Estimated usage of pods bound after the sample.',
      resolve: (l) => l.estimated,
    }),
    estimatedPods: t.exposeInt('estimatedPods'),
    effective: t.field({
      type: ResourcesRef,
      description: 'The figure every decision uses.',
      resolve: (l) => l.effective,
    }),
    podCount: t.exposeInt('podCount'),
  }),
});

export interface NodeRuleVerdict {
  rule: NodeLoadRule;
  verdict: NodeVerdict;
}

const verdictIndexes = new WeakMap<RuleEvaluation, Map<string, NodeVerdict>>();

function verdictIndex(evaluation: RuleEvaluation): Map<string, NodeVerdict> {
  let index = verdictIndexes.get(evaluation);
  if (!index) {
    index = new Map([...evaluation.eligible, ...evaluation.ineligible].map((v) => [v.node, v]));
    verdictIndexes.set(evaluation, index);
  }
  return index;
}

/** The node's verdict for one rule: the operator's, or computed now when it has none for this node yet. */
export function verdictFor(sources: GraphQLSources, rule: NodeLoadRule, node: NodeInfo): NodeVerdict {
  const evaluation = sources.rules.evaluation(rule.namespace, rule.name);
  const known = evaluation && verdictIndex(evaluation).get(node.name);
  if (known) return known;
  const load = sources.loads.loadOf(node.name);
  return load ? evaluateNodeForRule(rule, node, load) : missingLoadVerdict(rule, node);
}

export function isAllowed(verdict: NodeVerdict): boolean {
  return !verdict.reasons.some((r) => r.code === 'NotAllowed' || r.code === 'NodeSelectorMismatch');
}

const NodeRuleVerdictRef = builder.objectRef<NodeRuleVerdict>('NodeRuleVerdict').implement({
  description: "One rule's verdict on one node.",
  fields: (t) => ({
    namespace: t.string({ resolve: (v) => v.rule.namespace }),
    rule: t.string({ description: 'The rule name.', resolve: (v) => v.rule.name }),
    allowed: t.boolean({
      description: "The node is in the rule's node set (allowedNodes ∩ nodeSelector), whatever its load.",
      resolve: (v) => isAllowed(v.verdict),
    }),
    eligible: t.boolean({
      description: 'Allowed and within the thresholds.',
      resolve: (v) => v.verdict.eligible,
    }),
    headroom: t.float({
      description: 'Percentage points left before the tighter threshold.',
      resolve: (v) => v.verdict.headroom,
    }),
    reasons: t.field({ type: [ReasonRef], resolve: (v) => v.verdict.reasons }),
  }),
});

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function sortedRules(sources: GraphQLSources, namespace?: string | null): NodeLoadRule[] {
  const out: NodeLoadRule[] = [];
  for (const r of sources.cluster.rules()) if (!namespace || r.namespace === namespace) out.push(r);
  return out.sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : byName(a, b)));
}

export const NodeRef = builder.objectRef<NodeInfo>('Node').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    uid: t.exposeString('uid'),
    ready: t.exposeBoolean('ready', { description: 'The Ready condition is True.' }),
    schedulable: t.boolean({
      description: 'Not cordoned (spec.unschedulable is false).',
      resolve: (n) => !n.unschedulable,
    }),
    labels: t.field({ type: [KeyValueRef], resolve: (n) => keyValues(n.labels) }),
    taints: t.field({ type: [TaintRef], resolve: (n) => n.taints }),
    capacity: t.field({ type: NodeResourcesRef, resolve: (n) => n.capacity }),
    allocatable: t.field({ type: NodeResourcesRef, resolve: (n) => n.allocatable }),
    creationTimestamp: t.field({ type: 'DateTime', resolve: (n) => n.creationTimestamp }),
    load: t.field({
      type: NodeLoadRef,
      nullable: true,
      description: 'Null until the load tracker has a figure for the node.',
      resolve: (n, _a, ctx) => ctx.sources.loads.loadOf(n.name) ?? null,
    }),
    podCount: t.int({
      description: 'Non-terminal pods bound to the node.',
      resolve: (n, _a, ctx) => {
        const load = ctx.sources.loads.loadOf(n.name);
        if (load) return load.podCount;
        let count = 0;
        for (const p of ctx.sources.cluster.podsOnNode(n.name)) if (!p.terminal) count++;
        return count;
      },
    }),
    pods: t.field({
      type: [PodRef],
      description:
        'Non-terminal pods bound to the node, by namespace/name: those of the namespaces where you may list pods.',
      resolve: async (n, _a, ctx) =>
        (
          await readablePodData(
            ctx,
            [...ctx.sources.cluster.podsOnNode(n.name)].filter((p) => !p.terminal),
            (p) => p.namespace,
          )
        ).sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : byName(a, b))),
    }),
    rules: t.field({
      type: [NodeRuleVerdictRef],
      description:
        "Every rule's verdict on this node; `eligible` filters to the rules it is (or is not) eligible for.",
      args: {
        namespace: t.arg.string({ required: false }),
        eligible: t.arg.boolean({ required: false }),
      },
      resolve: async (n, args, ctx) =>
        (await readableRules(ctx, sortedRules(ctx.sources, args.namespace), args.namespace))
          .map((rule) => ({ rule, verdict: verdictFor(ctx.sources, rule, n) }))
          .filter(
            (v) =>
              args.eligible === undefined || args.eligible === null || v.verdict.eligible === args.eligible,
          ),
    }),
  }),
});

builder.queryFields((t) => ({
  nodes: t.field({
    type: [NodeRef],
    description: 'Every node, by name (needs `list nodes`).',
    resolve: async (_r, _a, ctx) => {
      await requireNodes(ctx);
      return [...ctx.sources.cluster.nodes()].sort(byName);
    },
  }),
  node: t.field({
    type: NodeRef,
    description: 'One node; NOT_FOUND when the cache does not know it.',
    args: { name: t.arg.string({ required: true }) },
    resolve: async (_r, { name }, ctx) => {
      await requireNodes(ctx);
      const node = ctx.sources.cluster.node(name);
      if (!node) throw notFound('node', name);
      return node;
    },
  }),
}));

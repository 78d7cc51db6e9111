/**
 * NodeLoadRules: spec, the status the operator wrote, and the live evaluation behind it (eligible and
 * ineligible nodes with reasons and figures), suggestions and rebalancing hints.
 */
import type { PodInfo } from '../cluster/model.js';
import { type Suggestion, suggestionsFrom } from '../operator/plan.js';
import { evaluateRule, MAX_SUGGESTIONS, rebalanceHints } from '../rules/evaluate.js';
import type {
  BurstGuard,
  IneligibleNodeStatus,
  NodeLoadRule,
  NodeSuggestion,
  NodeVerdict,
  RebalanceHint,
  RuleEvaluation,
  RuleSpec,
  RuleStatus,
} from '../rules/types.js';
import { readableLoad, readableRules, requireRulesIn } from './authorize.js';
import { builder } from './builder.js';
import { ConditionRef, LabelSelectorRef } from './common.js';
import { sizedList } from './complexity.js';
import type { GraphQLSources } from './context.js';
import { notFound } from './errors.js';
import { isAllowed, NodeLoadRef, sortedRules } from './nodes.js';
import { ReasonRef } from './reasons.js';

/** The operator's evaluation (what status was written from); computed now if it has none yet (rare: a copy is fine). */
export function evaluationOf(sources: GraphQLSources, rule: NodeLoadRule): RuleEvaluation {
  return (
    sources.rules.evaluation(rule.namespace, rule.name) ??
    evaluateRule(rule, sources.cluster.nodes(), new Map(sources.loads.loads()), sources.now())
  );
}

/** The eligible nodes with the most headroom, in whole points — the same figures status.suggestions holds. */
export function suggestionsOf(evaluation: RuleEvaluation, limit = MAX_SUGGESTIONS): NodeSuggestion[] {
  return evaluation.eligible
    .map((v) => ({ node: v.node, headroom: Math.max(0, Math.floor(v.headroom)) }))
    .sort((a, b) => b.headroom - a.headroom || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0))
    .slice(0, Math.max(0, limit));
}

export type RuleRebalanceHint = RebalanceHint & { rule: string };

/** As Operator.rebalanceHints, for one rule. */
export function rebalanceHintsOf(
  sources: GraphQLSources,
  rule: NodeLoadRule,
  evaluation: RuleEvaluation,
): RuleRebalanceHint[] {
  const podsByNode = new Map<string, PodInfo[]>();
  for (const v of evaluation.ineligible) podsByNode.set(v.node, [...sources.cluster.podsOnNode(v.node)]);
  return rebalanceHints(rule, evaluation, podsByNode).map((h) => ({ ...h, rule: rule.name }));
}

export function requireRule(sources: GraphQLSources, namespace: string, name: string): NodeLoadRule {
  const rule = sources.cluster.rule(namespace, name);
  if (!rule) throw notFound('NodeLoadRule', `${namespace}/${name}`);
  return rule;
}

export const BurstGuardRef = builder.objectRef<BurstGuard>('BurstGuard').implement({
  description: "At most maxPlacements of the rule's pods on one node per sliding window.",
  fields: (t) => ({
    maxPlacements: t.exposeInt('maxPlacements'),
    windowSeconds: t.exposeInt('windowSeconds'),
  }),
});

export const RuleSpecRef = builder.objectRef<RuleSpec>('RuleSpec').implement({
  description: 'NodeLoadRule spec with defaults applied.',
  fields: (t) => ({
    maxCPU: t.exposeFloat('maxCPU', { description: 'Percent of allocatable CPU.' }),
    maxMemory: t.exposeFloat('maxMemory', { description: 'Percent of allocatable memory.' }),
    allowedNodes: t.exposeStringList('allowedNodes', { description: 'Empty means every node.' }),
    podSelector: t.field({ type: LabelSelectorRef, nullable: true, resolve: (s) => s.podSelector ?? null }),
    nodeSelector: t.field({ type: LabelSelectorRef, nullable: true, resolve: (s) => s.nodeSelector ?? null }),
    burst: t.field({ type: BurstGuardRef, nullable: true, resolve: (s) => s.burst ?? null }),
  }),
});

const IneligibleNodeStatusRef = builder.objectRef<IneligibleNodeStatus>('IneligibleNodeStatus').implement({
  fields: (t) => ({ node: t.exposeString('node'), reasons: t.exposeStringList('reasons') }),
});

export const NodeSuggestionRef = builder.objectRef<NodeSuggestion>('NodeSuggestion').implement({
  fields: (t) => ({
    node: t.exposeString('node'),
    headroom: t.exposeInt('headroom', {
      description: 'Whole percentage points left before the tighter threshold.',
    }),
  }),
});

const RuleStatusRef = builder.objectRef<RuleStatus>('RuleStatus').implement({
  description: 'The status subresource as the operator last wrote it.',
  fields: (t) => ({
    observedGeneration: t.exposeInt('observedGeneration'),
    eligibleNodes: t.exposeStringList('eligibleNodes'),
    eligibleCount: t.exposeInt('eligibleCount'),
    ineligibleNodes: t.field({ type: [IneligibleNodeStatusRef], resolve: (s) => s.ineligibleNodes }),
    ineligibleCount: t.exposeInt('ineligibleCount'),
    conditions: t.field({ type: [ConditionRef], resolve: (s) => s.conditions }),
    lastEvaluationTime: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (s) => s.lastEvaluationTime || null,
    }),
    suggestions: t.field({ type: [NodeSuggestionRef], resolve: (s) => s.suggestions }),
  }),
});

export const NodeVerdictRef = builder.objectRef<NodeVerdict>('NodeVerdict').implement({
  description: "A rule's verdict on one node, with the figures behind it.",
  fields: (t) => ({
    node: t.exposeString('node'),
    eligible: t.exposeBoolean('eligible'),
    allowed: t.boolean({
      description: "In the rule's node set, whatever its load.",
      resolve: (v) => isAllowed(v),
    }),
    headroom: t.exposeFloat('headroom', {
      description: 'Percentage points left before the tighter threshold (negative when over).',
    }),
    reasons: t.field({ type: [ReasonRef], resolve: (v) => v.reasons }),
    load: t.field({
      type: NodeLoadRef,
      nullable: true,
      description: "The node's current load (may be newer than the evaluation); null without `list nodes`.",
      resolve: (v, _a, ctx) => readableLoad(ctx, () => ctx.sources.loads.loadOf(v.node)),
    }),
  }),
});

const RuleEvaluationRef = builder.objectRef<RuleEvaluation>('RuleEvaluation').implement({
  description: "The rule against every node: what the operator's status is written from.",
  fields: (t) => ({
    evaluatedAt: t.field({ type: 'DateTime', nullable: true, resolve: (e) => e.evaluatedAt ?? null }),
    eligibleCount: t.int({ resolve: (e) => e.eligible.length }),
    ineligibleCount: t.int({ resolve: (e) => e.ineligible.length }),
    eligible: t.field({
      type: [NodeVerdictRef],
      description: 'Most headroom first.',
      resolve: (e) => e.eligible,
    }),
    ineligible: t.field({
      type: [NodeVerdictRef],
      description: 'By node name.',
      resolve: (e) => e.ineligible,
    }),
  }),
});

export const RebalanceHintRef = builder.objectRef<RuleRebalanceHint>('RebalanceHint').implement({
  description:
    'A covered running pod on a node over the thresholds, and where it could go. Nothing is evicted.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    rule: t.exposeString('rule', { description: "The rule (in the pod's namespace) it breaches." }),
    pod: t.exposeString('pod'),
    from: t.exposeString('from'),
    to: t.string({
      nullable: true,
      description: 'Null when no node is eligible.',
      resolve: (h) => h.to ?? null,
    }),
    reason: t.exposeString('reason'),
  }),
});

export const RuleRef = builder.objectRef<NodeLoadRule>('Rule').implement({
  description: 'A NodeLoadRule (example.com/v1).',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    name: t.exposeString('name'),
    uid: t.exposeString('uid'),
    generation: t.exposeInt('generation'),
    resourceVersion: t.exposeString('resourceVersion'),
    creationTimestamp: t.field({ type: 'DateTime', resolve: (r) => r.creationTimestamp }),
    spec: t.field({ type: RuleSpecRef, resolve: (r) => r.spec }),
    status: t.field({
      type: RuleStatusRef,
      nullable: true,
      description: 'Null until the operator has written one.',
      resolve: (r) => r.status ?? null,
    }),
    evaluation: t.field({ type: RuleEvaluationRef, resolve: (r, _a, ctx) => evaluationOf(ctx.sources, r) }),
    suggestions: t.field({
      type: [NodeSuggestionRef],
      args: { limit: t.arg.int({ required: false, defaultValue: MAX_SUGGESTIONS }) },
      complexity: (args) => sizedList(args.limit, MAX_SUGGESTIONS),
      resolve: (r, args, ctx) => suggestionsOf(evaluationOf(ctx.sources, r), args.limit ?? MAX_SUGGESTIONS),
    }),
    rebalanceHints: t.field({
      type: [RebalanceHintRef],
      resolve: (r, _a, ctx) => rebalanceHintsOf(ctx.sources, r, evaluationOf(ctx.sources, r)),
    }),
  }),
});

const SuggestionRef = builder.objectRef<Suggestion>('Suggestion').implement({
  description:
    "A node eligible for a rule, with its figures (the operator's GET /operator/suggestions list).",
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    rule: t.exposeString('rule'),
    node: t.exposeString('node'),
    headroom: t.exposeFloat('headroom', {
      description: 'Percentage points below the tighter limit (1 decimal).',
    }),
    cpuPercent: t.exposeFloat('cpuPercent'),
    memoryPercent: t.exposeFloat('memoryPercent'),
  }),
});

builder.queryFields((t) => ({
  rules: t.field({
    type: [RuleRef],
    description: 'Every NodeLoadRule you may list, or those of one namespace, by namespace/name.',
    args: { namespace: t.arg.string({ required: false }) },
    resolve: (_r, args, ctx) => readableRules(ctx, sortedRules(ctx.sources, args.namespace), args.namespace),
  }),
  rule: t.field({
    type: RuleRef,
    description: 'One rule; NOT_FOUND when it does not exist.',
    args: { namespace: t.arg.string({ required: true }), name: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => {
      await requireRulesIn(ctx, args.namespace);
      return requireRule(ctx.sources, args.namespace, args.name);
    },
  }),
  suggestions: t.field({
    type: [SuggestionRef],
    description:
      'Every (rule, eligible node) pair with its headroom, by namespace, rule, then most headroom.',
    args: { namespace: t.arg.string({ required: false }), rule: t.arg.string({ required: false }) },
    resolve: async (_r, args, ctx) =>
      suggestionsFrom(
        (await readableRules(ctx, sortedRules(ctx.sources, args.namespace), args.namespace))
          .filter((r) => !args.rule || r.name === args.rule)
          .map((r) => evaluationOf(ctx.sources, r)),
        ctx.sources.loads.loads(),
      ),
  }),
  rebalanceHints: t.field({
    type: [RebalanceHintRef],
    description:
      "Covered running pods on nodes over their rule's thresholds, with where they could go. Hints only.",
    args: { namespace: t.arg.string({ required: false }) },
    resolve: async (_r, args, ctx) =>
      (await readableRules(ctx, sortedRules(ctx.sources, args.namespace), args.namespace)).flatMap((r) =>
        rebalanceHintsOf(ctx.sources, r, evaluationOf(ctx.sources, r)),
      ),
  }),
}));

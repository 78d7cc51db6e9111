/**
 * simulateRule: a what-if for a new or changed NodeLoadRule, computed on the live cache by the
 * scheduler's own filter (scheduler/simulate.ts). A Query field, since nothing is written.
 */
import { evaluateRule } from '../rules/evaluate.js';
import type { NodeLoadRule, RuleSpec } from '../rules/types.js';
import type { BreachingPod, NodeChange, PendingPodChange, SimulationResult } from '../scheduler/simulate.js';
import { requireSimulate } from './authorize.js';
import { builder } from './builder.js';
import type { GraphQLSources } from './context.js';
import { badUserInput } from './errors.js';
import { RuleSpecInput, ruleSpecFromInput } from './rule-input.js';
import { RuleSpecRef } from './rules.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

interface RuleSimulation extends SimulationResult {
  rule: NodeLoadRule;
  exists: boolean;
  eligibleBefore: number | null;
  eligibleAfter: number;
}

const NodeChangeRef = builder.objectRef<NodeChange>('NodeEligibilityChange').implement({
  fields: (t) => ({
    node: t.exposeString('node'),
    reasons: t.exposeStringList('reasons', {
      description: 'Why it becomes ineligible, e.g. "cpu 91% > maxCPU 70%".',
    }),
  }),
});

const PendingPodChangeRef = builder.objectRef<PendingPodChange>('PendingPodChange').implement({
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    pod: t.exposeString('pod'),
    node: t.string({
      nullable: true,
      description: 'Becoming schedulable: where it would go now.',
      resolve: (c) => c.node ?? null,
    }),
    message: t.string({
      nullable: true,
      description: 'Becoming unschedulable: the FailedScheduling message it would get.',
      resolve: (c) => c.message ?? null,
    }),
  }),
});

const BreachingPodRef = builder.objectRef<BreachingPod>('BreachingPod').implement({
  description: 'A running pod the rule covers, on a node over its thresholds.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    pod: t.exposeString('pod'),
    node: t.exposeString('node'),
    reasons: t.exposeStringList('reasons'),
  }),
});

const RuleSimulationRef = builder.objectRef<RuleSimulation>('RuleSimulation').implement({
  description:
    'What would change if the rule had this spec. Burst limits are not simulated (they depend on the moment).',
  fields: (t) => ({
    namespace: t.string({ resolve: (s) => s.rule.namespace }),
    name: t.string({ resolve: (s) => s.rule.name }),
    exists: t.exposeBoolean('exists', { description: 'The rule exists now (false: simulating a new rule).' }),
    spec: t.field({
      type: RuleSpecRef,
      description: 'The simulated spec, defaults applied.',
      resolve: (s) => s.rule.spec,
    }),
    eligibleBefore: t.int({
      nullable: true,
      description: 'Eligible nodes under the current rule; null for a new rule.',
      resolve: (s) => s.eligibleBefore,
    }),
    eligibleAfter: t.exposeInt('eligibleAfter'),
    nodesBecomingEligible: t.exposeStringList('nodesBecomingEligible'),
    nodesBecomingIneligible: t.field({ type: [NodeChangeRef], resolve: (s) => s.nodesBecomingIneligible }),
    pendingPodsBecomingSchedulable: t.field({
      type: [PendingPodChangeRef],
      resolve: (s) => s.pendingPodsBecomingSchedulable,
    }),
    pendingPodsBecomingUnschedulable: t.field({
      type: [PendingPodChangeRef],
      resolve: (s) => s.pendingPodsBecomingUnschedulable,
    }),
    runningPodsBreaching: t.field({ type: [BreachingPodRef], resolve: (s) => s.runningPodsBreaching }),
  }),
});

function simulatedRule(
  current: NodeLoadRule | undefined,
  namespace: string,
  name: string,
  spec: RuleSpec,
): NodeLoadRule {
  return {
    namespace,
    name,
    uid: current?.uid ?? '',
    generation: (current?.generation ?? 0) + 1,
    resourceVersion: '',
    creationTimestamp: current?.creationTimestamp ?? '',
    spec,
  };
}

export function simulate(
  sources: GraphQLSources,
  namespace: string,
  name: string,
  spec: RuleSpec,
): RuleSimulation {
  if (!DNS_LABEL.test(namespace) || namespace.length > 63) {
    throw badUserInput(`namespace "${namespace}" is not a valid namespace name`, 'namespace');
  }
  if (!DNS_SUBDOMAIN.test(name) || name.length > 253) {
    throw badUserInput(`name "${name}" is not a valid object name`, 'name');
  }
  const current = sources.cluster.rule(namespace, name);
  const rule = simulatedRule(current, namespace, name, spec);
  // Before and after from the same live snapshot the node changes come from: the operator's last
  // evaluation lags behind by its debounce, and mixing the two would contradict the listed changes.
  const nodes = [...sources.cluster.nodes()];
  const loads = new Map(sources.loads.loads());
  return {
    ...sources.scheduling.simulate(rule),
    rule,
    exists: current !== undefined,
    eligibleBefore: current ? evaluateRule(current, nodes, loads).eligible.length : null,
    eligibleAfter: evaluateRule(rule, nodes, loads).eligible.length,
  };
}

builder.queryField('simulateRule', (t) =>
  t.field({
    type: RuleSimulationRef,
    description:
      'What-if for a new or changed rule on the live state: nodes entering/leaving its eligible set, pending pods ' +
      'becoming (un)schedulable, running pods that would breach it. Changes nothing.',
    args: {
      namespace: t.arg.string({ required: true }),
      name: t.arg.string({ required: true }),
      spec: t.arg({ type: RuleSpecInput, required: true }),
    },
    resolve: async (_r, args, ctx) => {
      await requireSimulate(ctx, args.namespace);
      return simulate(ctx.sources, args.namespace, args.name, ruleSpecFromInput(args.spec));
    },
  }),
);

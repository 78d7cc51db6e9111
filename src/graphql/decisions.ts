/**
 * The scheduling decision types, backed directly by the scheduler's Decision objects (scheduler/explain.ts).
 *
 * A decision is built once by the scheduler and the very same object is handed to every query and every
 * subscriber. Fields are plain property reads; the few derived ones (a candidate's verdict) come from
 * `candidateViews`, memoized per decision object, so N subscribers cost one derivation, not N.
 */
import {
  type Candidate,
  candidateScores,
  type Decision,
  type DecisionPreemption,
  type DecisionRule,
  type PreemptionVictim,
} from '../scheduler/explain.js';
import type { FilterReason } from '../scheduler/framework/types.js';
import type {
  BurstCheck,
  CandidateLoad,
  RuleCheck,
  ScoreContribution,
} from '../scheduler/framework/verdict.js';
import { builder } from './builder.js';
import { LoadSourceRef } from './nodes.js';
import { BurstGuardRef } from './rules.js';

export const DecisionResultRef = builder.enumType('DecisionResult', {
  values: {
    SCHEDULED: { value: 'scheduled', description: 'Bound to `node`.' },
    UNSCHEDULABLE: { value: 'unschedulable', description: 'No feasible node; the pod stays pending.' },
    ERROR: { value: 'error', description: 'The bind (to `node`) or the attempt failed.' },
  } as const,
});

export const SchedulingEngineRef = builder.enumType('SchedulingEngine', {
  description: 'Which front door of nodeload decided.',
  values: {
    NATIVE: { value: 'native', description: "nodeload's own scheduler placed the pod." },
    EXTENDER: {
      value: 'extender',
      description:
        'kube-scheduler placed the pod, calling nodeload as its extender: its own plugins filtered first, the candidates are the nodes it named.',
    },
  } as const,
});

export const CandidateVerdictRef = builder.enumType('CandidateVerdict', {
  values: {
    CHOSEN: { description: 'The node the pod was bound to (or the failed bind targeted).' },
    FEASIBLE: { description: 'Passed every filter but scored lower.' },
    INFEASIBLE: { description: 'Failed at least one filter; see reasons.' },
  } as const,
});

type CandidateVerdict = 'CHOSEN' | 'FEASIBLE' | 'INFEASIBLE';

export interface CandidateView {
  candidate: Candidate;
  verdict: CandidateVerdict;
}

const views = new WeakMap<Decision, CandidateView[]>();

/** Candidates with their verdict, derived once per decision object and shared by every reader. */
export function candidateViews(decision: Decision): CandidateView[] {
  let list = views.get(decision);
  if (!list) {
    list = decision.candidates.map((candidate) => ({
      candidate,
      verdict: !candidate.feasible
        ? 'INFEASIBLE'
        : decision.node === candidate.node && decision.result !== 'unschedulable'
          ? 'CHOSEN'
          : 'FEASIBLE',
    }));
    views.set(decision, list);
  }
  return list;
}

const FilterReasonRef = builder.objectRef<FilterReason>('FilterReason').implement({
  fields: (t) => ({
    plugin: t.exposeString('plugin', {
      description:
        "The scheduler plugin that failed the node, named as kube-scheduler names it (NodeResourcesFit, InterPodAffinity, …) or nodeload's own (NodeLoadRules, BurstGuard).",
    }),
    code: t.exposeString('code', {
      description:
        'Machine-readable reason: InsufficientCPU, TaintNotTolerated, AntiAffinityRulesNotMatch, RuleCPUExceeded, …',
    }),
    unresolvable: t.boolean({
      description: 'UnschedulableAndUnresolvable: evicting pods from this node would not help.',
      resolve: (r) => r.unresolvable === true,
    }),
    reason: t.exposeString('reason', { description: 'Aggregatable text, e.g. "Insufficient cpu".' }),
    detail: t.exposeString('detail', {
      description: 'This node\'s numbers, e.g. "cpu 91% > maxCPU 80% with this pod".',
    }),
    rule: t.string({
      nullable: true,
      description: 'The rule name, for rule reasons.',
      resolve: (r) => r.rule ?? null,
    }),
  }),
});

const CandidateLoadRef = builder.objectRef<CandidateLoad>('CandidateLoad').implement({
  description: 'The figures a verdict rests on; percentages of allocatable, "after" = with the pod placed.',
  fields: (t) => ({
    source: t.field({ type: LoadSourceRef, resolve: (l) => l.source }),
    cpuPercent: t.exposeFloat('cpuPercent'),
    memoryPercent: t.exposeFloat('memoryPercent'),
    cpuPercentAfter: t.exposeFloat('cpuPercentAfter'),
    memoryPercentAfter: t.exposeFloat('memoryPercentAfter'),
    estimatedCpuMilli: t.exposeInt('estimatedCpuMilli', {
      description: 'In-flight estimate: pods bound after the metrics sample.',
    }),
    estimatedMemoryBytes: t.field({ type: 'SafeInt', resolve: (l) => l.estimatedMemoryBytes }),
    estimatedPods: t.exposeInt('estimatedPods'),
    requestedCpuMilli: t.exposeInt('requestedCpuMilli'),
    requestedMemoryBytes: t.field({ type: 'SafeInt', resolve: (l) => l.requestedMemoryBytes }),
    allocatableCpuMilli: t.exposeInt('allocatableCpuMilli'),
    allocatableMemoryBytes: t.field({ type: 'SafeInt', resolve: (l) => l.allocatableMemoryBytes }),
    podCount: t.exposeInt('podCount'),
    allocatablePods: t.exposeInt('allocatablePods'),
    stale: t.boolean({ resolve: (l) => l.metricsStale }),
    unavailable: t.exposeBoolean('unavailable'),
  }),
});

const BurstCheckRef = builder.objectRef<BurstCheck>('BurstCheck').implement({
  fields: (t) => ({
    placements: t.exposeInt('placements', { description: 'Placements on the node within the window.' }),
    maxPlacements: t.exposeInt('maxPlacements'),
    windowSeconds: t.exposeInt('windowSeconds'),
  }),
});

const RuleCheckRef = builder.objectRef<RuleCheck>('RuleCheck').implement({
  description: 'One covering rule against one candidate node.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    rule: t.exposeString('rule'),
    allowed: t.exposeBoolean('allowed', { description: "In the rule's node set." }),
    bypassed: t.exposeBoolean('bypassed', {
      description: 'DaemonSet pods skip load thresholds and burst limits.',
    }),
    maxCPU: t.exposeFloat('maxCPU'),
    maxMemory: t.exposeFloat('maxMemory'),
    cpuMargin: t.exposeFloat('cpuMargin', {
      description: 'maxCPU minus CPU% after placement (negative = over).',
    }),
    memoryMargin: t.exposeFloat('memoryMargin'),
    burst: t.field({ type: BurstCheckRef, nullable: true, resolve: (c) => c.burst ?? null }),
  }),
});

const ScoreContributionRef = builder.objectRef<ScoreContribution>('ScoreContribution').implement({
  description: "One Score plugin's part in a node's total score.",
  fields: (t) => ({
    plugin: t.exposeString('plugin'),
    weight: t.exposeInt('weight'),
    score: t.exposeFloat('score', { description: 'Normalized 0–100, before the weight.' }),
  }),
});

const CandidateRef = builder.objectRef<CandidateView>('Candidate').implement({
  description: 'One node as the decision saw it.',
  fields: (t) => ({
    node: t.string({ resolve: (v) => v.candidate.node }),
    verdict: t.field({ type: CandidateVerdictRef, resolve: (v) => v.verdict }),
    feasible: t.boolean({ resolve: (v) => v.candidate.feasible }),
    reasons: t.field({
      type: [FilterReasonRef],
      description: 'Every failed check, in plugin order.',
      resolve: (v) => v.candidate.reasons,
    }),
    score: t.float({
      nullable: true,
      description: 'Σ weight × score over the Score plugins; feasible nodes only.',
      resolve: (v) => v.candidate.score ?? null,
    }),
    scores: t.field({
      type: [ScoreContributionRef],
      description: "Each Score plugin's contribution (empty for infeasible nodes).",
      resolve: (v) => candidateScores(v.candidate) ?? [],
    }),
    rank: t.int({
      nullable: true,
      description: '1 = chosen; feasible nodes only.',
      resolve: (v) => v.candidate.rank ?? null,
    }),
    load: t.field({ type: CandidateLoadRef, nullable: true, resolve: (v) => v.candidate.load ?? null }),
    rules: t.field({ type: [RuleCheckRef], resolve: (v) => v.candidate.rules }),
    burst: t.field({ type: BurstCheckRef, nullable: true, resolve: (v) => v.candidate.burst ?? null }),
  }),
});

const DecisionRuleRef = builder.objectRef<DecisionRule>('DecisionRule').implement({
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    name: t.exposeString('name'),
    maxCPU: t.exposeFloat('maxCPU'),
    maxMemory: t.exposeFloat('maxMemory'),
    burst: t.field({ type: BurstGuardRef, nullable: true, resolve: (r) => r.burst ?? null }),
  }),
});

const PreemptionVictimRef = builder.objectRef<PreemptionVictim>('PreemptionVictim').implement({
  description: 'A pod evicted to make room for the preemptor.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    name: t.exposeString('name'),
    priority: t.exposeInt('priority'),
  }),
});

const PreemptionRef = builder.objectRef<DecisionPreemption>('Preemption').implement({
  description: 'What DefaultPreemption (PostFilter) did when no node fit the pod.',
  fields: (t) => ({
    node: t.string({
      nullable: true,
      description:
        'The node the pod was nominated to (status.nominatedNodeName); null when preemption found none.',
      resolve: (p) => p.node ?? null,
    }),
    victims: t.field({
      type: [PreemptionVictimRef],
      description: 'The pods evicted from `node`, most important first.',
      resolve: (p) => p.victims,
    }),
    message: t.exposeString('message', {
      description:
        'What preemption did, or why it could not help ("preemption: 0/3 nodes are available: …").',
    }),
  }),
});

export const DecisionRef = builder.objectRef<Decision>('SchedulingDecision').implement({
  description: 'One scheduling attempt, explained.',
  fields: (t) => ({
    id: t.exposeID('id'),
    namespace: t.exposeString('namespace'),
    pod: t.exposeString('pod'),
    podUid: t.exposeString('podUid'),
    result: t.field({ type: DecisionResultRef, resolve: (d) => d.result }),
    engine: t.field({ type: SchedulingEngineRef, resolve: (d) => d.engine ?? 'native' }),
    node: t.string({ nullable: true, resolve: (d) => d.node ?? null }),
    time: t.field({ type: 'DateTime', resolve: (d) => d.time }),
    message: t.exposeString('message', {
      description: 'The Event text, e.g. "0/3 nodes are available: ...".',
    }),
    algorithmMs: t.exposeFloat('algorithmMs'),
    latencyMs: t.exposeFloat('latencyMs'),
    e2eLatencyMs: t.exposeFloat('e2eLatencyMs'),
    attempts: t.exposeInt('attempts'),
    totalNodes: t.exposeInt('totalNodes'),
    examinedNodes: t.int({
      description:
        'Nodes filtered for this decision: fewer than totalNodes when percentageOfNodesToScore stopped the ' +
        'search once enough nodes were feasible (as kube-scheduler does).',
      resolve: (d) => d.examinedNodes ?? d.totalNodes,
    }),
    feasibleNodes: t.exposeInt('feasibleNodes'),
    rules: t.field({
      type: [DecisionRuleRef],
      description: 'The rules covering the pod.',
      resolve: (d) => d.rules,
    }),
    candidates: t.field({
      type: [CandidateRef],
      description: 'Feasible nodes best first, then the others by name.',
      args: { verdict: t.arg({ type: CandidateVerdictRef, required: false }) },
      resolve: (d, args) => {
        const all = candidateViews(d);
        return args.verdict ? all.filter((v) => v.verdict === args.verdict) : all;
      },
    }),
    reportingInstance: t.exposeString('reportingInstance'),
    rebuilt: t.boolean({
      description: 'Rebuilt from an Event after a restart: candidates may be partial.',
      resolve: (d) => d.rebuilt ?? false,
    }),
    candidatesOmitted: t.int({ resolve: (d) => d.candidatesOmitted ?? 0 }),
    preemption: t.field({
      type: PreemptionRef,
      nullable: true,
      description: 'Set when no node fit and preemption ran (not kept across a restart).',
      resolve: (d) => d.preemption ?? null,
    }),
  }),
});

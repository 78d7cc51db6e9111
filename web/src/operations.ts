/**
 * Every GraphQL operation the dashboard sends. The result and variable types are generated from
 * schema/schema.graphql by `npm run codegen` (web/src/gql/, committed): a schema change that breaks
 * an operation or the code reading its result fails `tsc -p web/tsconfig.json`. Live lists are fetched
 * in summary form; the heavy parts (a decision's candidates) only when a row is expanded.
 */
import { graphql } from './gql/gql.js';
import type * as G from './gql/graphql.js';

/** @public Registered with codegen; operations spread it by name. */
export const LOAD_FIELDS = graphql(`
  fragment LoadFields on NodeLoad {
    cpuPercent
    memoryPercent
    source
    timestamp
    stale
    unavailable
    estimatedPods
    podCount
    effective { cpuMilli memoryBytes }
    requested { cpuMilli memoryBytes }
  }
`);

export const NODES = graphql(`
  query DashboardNodes {
    nodes {
      name ready schedulable podCount
      allocatable { cpuMilli memoryBytes pods }
      load { ...LoadFields }
    }
  }
`);

export const LOAD_UPDATES = graphql(`
  subscription DashboardLoadUpdates {
    nodeLoadUpdates { node removed load { ...LoadFields } }
  }
`);

/** @public Registered with codegen; operations spread it by name. */
export const SELECTOR_FIELDS = graphql(`
  fragment SelectorFields on LabelSelector {
    matchLabels { key value }
    matchExpressions { key operator values }
  }
`);

export const RULES = graphql(`
  query DashboardRules {
    rules {
      namespace name generation
      spec {
        maxCPU maxMemory allowedNodes
        nodeSelector { ...SelectorFields }
        podSelector { ...SelectorFields }
        burst { maxPlacements windowSeconds }
      }
      status { eligibleCount ineligibleCount lastEvaluationTime conditions { type status reason message } }
      evaluation {
        evaluatedAt
        eligible { node headroom }
        ineligible { node allowed reasons { code message value threshold } }
      }
    }
  }
`);

export const PENDING = graphql(`
  query DashboardPending {
    pendingPods { namespace name queue reason since attempts }
  }
`);

/**
 * Its own operation: `schedulerStatus` is non-null and needs the nonResourceURL `get /scheduler/status`,
 * so for a user without it an operation selecting it has no data at all (the error nulls the whole
 * answer); asked apart, that refusal leaves the pending pods alone.
 */
export const SCHEDULER_STATUS = graphql(`
  query DashboardSchedulerStatus {
    schedulerStatus {
      schedulerName identity leader running cacheSynced startedAt
      bound unschedulable failed conflicts bindsInFlight historySize
      queues { active backoff unschedulable inFlight }
    }
  }
`);

/** @public Registered with codegen; operations spread it by name. */
export const DECISION_SUMMARY = graphql(`
  fragment DecisionSummary on SchedulingDecision {
    id time namespace pod result engine node message attempts totalNodes feasibleNodes
    algorithmMs latencyMs e2eLatencyMs rebuilt
  }
`);

export const HISTORY = graphql(`
  query DashboardHistory($first: Int!) {
    schedulingHistory(first: $first) { items { ...DecisionSummary } }
  }
`);

export const DECISIONS = graphql(`
  subscription DashboardDecisions {
    schedulingEvents { ...DecisionSummary }
  }
`);

export const DECISION = graphql(`
  query DashboardDecision($id: ID!) {
    decision(id: $id) {
      ...DecisionSummary
      reportingInstance candidatesOmitted
      rules { namespace name maxCPU maxMemory burst { maxPlacements windowSeconds } }
      candidates {
        node verdict feasible score rank
        scores { plugin weight score }
        reasons { plugin code reason detail rule unresolvable }
        load {
          source cpuPercent memoryPercent cpuPercentAfter memoryPercentAfter
          estimatedCpuMilli estimatedMemoryBytes estimatedPods
          requestedCpuMilli requestedMemoryBytes allocatableCpuMilli allocatableMemoryBytes
          podCount allocatablePods stale unavailable
        }
        rules {
          namespace rule allowed bypassed maxCPU maxMemory cpuMargin memoryMargin
          burst { placements maxPlacements windowSeconds }
        }
        burst { placements maxPlacements windowSeconds }
      }
    }
  }
`);

export const SIMULATE = graphql(`
  query DashboardSimulate($namespace: String!, $name: String!, $spec: RuleSpecInput!) {
    simulateRule(namespace: $namespace, name: $name, spec: $spec) {
      exists eligibleBefore eligibleAfter
      nodesBecomingEligible
      nodesBecomingIneligible { node reasons }
      pendingPodsBecomingSchedulable { namespace pod node message }
      pendingPodsBecomingUnschedulable { namespace pod node message }
      runningPodsBreaching { namespace pod node reasons }
    }
  }
`);

// The shapes the panels work with, named after what they hold; all of them are generated types.
export type {
  DecisionResult,
  LabelSelectorInput as SelectorInput,
  LabelSelectorOperator,
  SchedulingQueue as QueueName,
} from './gql/graphql.js';

export type Load = G.LoadFieldsFragment;
export type Selector = G.SelectorFieldsFragment;
export type DecisionSummary = G.DecisionSummaryFragment;

export type NodesResult = G.DashboardNodesQuery;
export type NodeView = NodesResult['nodes'][number];

export type RulesResult = G.DashboardRulesQuery;
export type RuleView = RulesResult['rules'][number];
export type RuleSpec = RuleView['spec'];
export type Reason = RuleView['evaluation']['ineligible'][number]['reasons'][number];

export type PendingResult = G.DashboardPendingQuery;
export type PendingPodView = PendingResult['pendingPods'][number];
export type SchedulerStatus = G.DashboardSchedulerStatusQuery['schedulerStatus'];

export type DecisionResultData = G.DashboardDecisionQuery;
export type DecisionDetail = DecisionResultData['decision'];
export type Candidate = DecisionDetail['candidates'][number];
export type RuleCheck = Candidate['rules'][number];
export type FilterReason = Candidate['reasons'][number];

export type SimulateResult = G.DashboardSimulateQuery;
export type Simulation = SimulateResult['simulateRule'];

/**
 * The what-if draft: RuleSpecInput with the fields the panel edits always present (omitted fields
 * would take the CRD defaults, so a what-if carries every field of the spec).
 */
export type SpecInput = Omit<G.RuleSpecInput, 'maxCPU' | 'maxMemory' | 'allowedNodes'> & {
  maxCPU: number;
  maxMemory: number;
  allowedNodes: string[];
};

/* eslint-disable */
import * as types from './graphql.js';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment LoadFields on NodeLoad {\n    cpuPercent\n    memoryPercent\n    source\n    timestamp\n    stale\n    unavailable\n    estimatedPods\n    podCount\n    effective { cpuMilli memoryBytes }\n    requested { cpuMilli memoryBytes }\n  }\n": typeof types.LoadFieldsFragmentDoc,
    "\n  query DashboardNodes {\n    nodes {\n      name ready schedulable podCount\n      allocatable { cpuMilli memoryBytes pods }\n      load { ...LoadFields }\n    }\n  }\n": typeof types.DashboardNodesDocument,
    "\n  subscription DashboardLoadUpdates {\n    nodeLoadUpdates { node removed load { ...LoadFields } }\n  }\n": typeof types.DashboardLoadUpdatesDocument,
    "\n  fragment SelectorFields on LabelSelector {\n    matchLabels { key value }\n    matchExpressions { key operator values }\n  }\n": typeof types.SelectorFieldsFragmentDoc,
    "\n  query DashboardRules {\n    rules {\n      namespace name generation\n      spec {\n        maxCPU maxMemory allowedNodes\n        nodeSelector { ...SelectorFields }\n        podSelector { ...SelectorFields }\n        burst { maxPlacements windowSeconds }\n      }\n      status { eligibleCount ineligibleCount lastEvaluationTime conditions { type status reason message } }\n      evaluation {\n        evaluatedAt\n        eligible { node headroom }\n        ineligible { node allowed reasons { code message value threshold } }\n      }\n    }\n  }\n": typeof types.DashboardRulesDocument,
    "\n  query DashboardPending {\n    pendingPods { namespace name queue reason since attempts }\n  }\n": typeof types.DashboardPendingDocument,
    "\n  query DashboardSchedulerStatus {\n    schedulerStatus {\n      schedulerName identity leader running cacheSynced startedAt\n      bound unschedulable failed conflicts bindsInFlight historySize\n      queues { active backoff unschedulable inFlight }\n    }\n  }\n": typeof types.DashboardSchedulerStatusDocument,
    "\n  fragment DecisionSummary on SchedulingDecision {\n    id time namespace pod result engine node message attempts totalNodes feasibleNodes\n    algorithmMs latencyMs e2eLatencyMs rebuilt\n  }\n": typeof types.DecisionSummaryFragmentDoc,
    "\n  query DashboardHistory($first: Int!) {\n    schedulingHistory(first: $first) { items { ...DecisionSummary } }\n  }\n": typeof types.DashboardHistoryDocument,
    "\n  subscription DashboardDecisions {\n    schedulingEvents { ...DecisionSummary }\n  }\n": typeof types.DashboardDecisionsDocument,
    "\n  query DashboardDecision($id: ID!) {\n    decision(id: $id) {\n      ...DecisionSummary\n      reportingInstance candidatesOmitted\n      rules { namespace name maxCPU maxMemory burst { maxPlacements windowSeconds } }\n      candidates {\n        node verdict feasible score rank\n        scores { plugin weight score }\n        reasons { plugin code reason detail rule unresolvable }\n        load {\n          source cpuPercent memoryPercent cpuPercentAfter memoryPercentAfter\n          estimatedCpuMilli estimatedMemoryBytes estimatedPods\n          requestedCpuMilli requestedMemoryBytes allocatableCpuMilli allocatableMemoryBytes\n          podCount allocatablePods stale unavailable\n        }\n        rules {\n          namespace rule allowed bypassed maxCPU maxMemory cpuMargin memoryMargin\n          burst { placements maxPlacements windowSeconds }\n        }\n        burst { placements maxPlacements windowSeconds }\n      }\n    }\n  }\n": typeof types.DashboardDecisionDocument,
    "\n  query DashboardSimulate($namespace: String!, $name: String!, $spec: RuleSpecInput!) {\n    simulateRule(namespace: $namespace, name: $name, spec: $spec) {\n      exists eligibleBefore eligibleAfter\n      nodesBecomingEligible\n      nodesBecomingIneligible { node reasons }\n      pendingPodsBecomingSchedulable { namespace pod node message }\n      pendingPodsBecomingUnschedulable { namespace pod node message }\n      runningPodsBreaching { namespace pod node reasons }\n    }\n  }\n": typeof types.DashboardSimulateDocument,
};
const documents: Documents = {
    "\n  fragment LoadFields on NodeLoad {\n    cpuPercent\n    memoryPercent\n    source\n    timestamp\n    stale\n    unavailable\n    estimatedPods\n    podCount\n    effective { cpuMilli memoryBytes }\n    requested { cpuMilli memoryBytes }\n  }\n": types.LoadFieldsFragmentDoc,
    "\n  query DashboardNodes {\n    nodes {\n      name ready schedulable podCount\n      allocatable { cpuMilli memoryBytes pods }\n      load { ...LoadFields }\n    }\n  }\n": types.DashboardNodesDocument,
    "\n  subscription DashboardLoadUpdates {\n    nodeLoadUpdates { node removed load { ...LoadFields } }\n  }\n": types.DashboardLoadUpdatesDocument,
    "\n  fragment SelectorFields on LabelSelector {\n    matchLabels { key value }\n    matchExpressions { key operator values }\n  }\n": types.SelectorFieldsFragmentDoc,
    "\n  query DashboardRules {\n    rules {\n      namespace name generation\n      spec {\n        maxCPU maxMemory allowedNodes\n        nodeSelector { ...SelectorFields }\n        podSelector { ...SelectorFields }\n        burst { maxPlacements windowSeconds }\n      }\n      status { eligibleCount ineligibleCount lastEvaluationTime conditions { type status reason message } }\n      evaluation {\n        evaluatedAt\n        eligible { node headroom }\n        ineligible { node allowed reasons { code message value threshold } }\n      }\n    }\n  }\n": types.DashboardRulesDocument,
    "\n  query DashboardPending {\n    pendingPods { namespace name queue reason since attempts }\n  }\n": types.DashboardPendingDocument,
    "\n  query DashboardSchedulerStatus {\n    schedulerStatus {\n      schedulerName identity leader running cacheSynced startedAt\n      bound unschedulable failed conflicts bindsInFlight historySize\n      queues { active backoff unschedulable inFlight }\n    }\n  }\n": types.DashboardSchedulerStatusDocument,
    "\n  fragment DecisionSummary on SchedulingDecision {\n    id time namespace pod result engine node message attempts totalNodes feasibleNodes\n    algorithmMs latencyMs e2eLatencyMs rebuilt\n  }\n": types.DecisionSummaryFragmentDoc,
    "\n  query DashboardHistory($first: Int!) {\n    schedulingHistory(first: $first) { items { ...DecisionSummary } }\n  }\n": types.DashboardHistoryDocument,
    "\n  subscription DashboardDecisions {\n    schedulingEvents { ...DecisionSummary }\n  }\n": types.DashboardDecisionsDocument,
    "\n  query DashboardDecision($id: ID!) {\n    decision(id: $id) {\n      ...DecisionSummary\n      reportingInstance candidatesOmitted\n      rules { namespace name maxCPU maxMemory burst { maxPlacements windowSeconds } }\n      candidates {\n        node verdict feasible score rank\n        scores { plugin weight score }\n        reasons { plugin code reason detail rule unresolvable }\n        load {\n          source cpuPercent memoryPercent cpuPercentAfter memoryPercentAfter\n          estimatedCpuMilli estimatedMemoryBytes estimatedPods\n          requestedCpuMilli requestedMemoryBytes allocatableCpuMilli allocatableMemoryBytes\n          podCount allocatablePods stale unavailable\n        }\n        rules {\n          namespace rule allowed bypassed maxCPU maxMemory cpuMargin memoryMargin\n          burst { placements maxPlacements windowSeconds }\n        }\n        burst { placements maxPlacements windowSeconds }\n      }\n    }\n  }\n": types.DashboardDecisionDocument,
    "\n  query DashboardSimulate($namespace: String!, $name: String!, $spec: RuleSpecInput!) {\n    simulateRule(namespace: $namespace, name: $name, spec: $spec) {\n      exists eligibleBefore eligibleAfter\n      nodesBecomingEligible\n      nodesBecomingIneligible { node reasons }\n      pendingPodsBecomingSchedulable { namespace pod node message }\n      pendingPodsBecomingUnschedulable { namespace pod node message }\n      runningPodsBreaching { namespace pod node reasons }\n    }\n  }\n": types.DashboardSimulateDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment LoadFields on NodeLoad {\n    cpuPercent\n    memoryPercent\n    source\n    timestamp\n    stale\n    unavailable\n    estimatedPods\n    podCount\n    effective { cpuMilli memoryBytes }\n    requested { cpuMilli memoryBytes }\n  }\n"): typeof import('./graphql.js').LoadFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardNodes {\n    nodes {\n      name ready schedulable podCount\n      allocatable { cpuMilli memoryBytes pods }\n      load { ...LoadFields }\n    }\n  }\n"): typeof import('./graphql.js').DashboardNodesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription DashboardLoadUpdates {\n    nodeLoadUpdates { node removed load { ...LoadFields } }\n  }\n"): typeof import('./graphql.js').DashboardLoadUpdatesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment SelectorFields on LabelSelector {\n    matchLabels { key value }\n    matchExpressions { key operator values }\n  }\n"): typeof import('./graphql.js').SelectorFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardRules {\n    rules {\n      namespace name generation\n      spec {\n        maxCPU maxMemory allowedNodes\n        nodeSelector { ...SelectorFields }\n        podSelector { ...SelectorFields }\n        burst { maxPlacements windowSeconds }\n      }\n      status { eligibleCount ineligibleCount lastEvaluationTime conditions { type status reason message } }\n      evaluation {\n        evaluatedAt\n        eligible { node headroom }\n        ineligible { node allowed reasons { code message value threshold } }\n      }\n    }\n  }\n"): typeof import('./graphql.js').DashboardRulesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardPending {\n    pendingPods { namespace name queue reason since attempts }\n  }\n"): typeof import('./graphql.js').DashboardPendingDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardSchedulerStatus {\n    schedulerStatus {\n      schedulerName identity leader running cacheSynced startedAt\n      bound unschedulable failed conflicts bindsInFlight historySize\n      queues { active backoff unschedulable inFlight }\n    }\n  }\n"): typeof import('./graphql.js').DashboardSchedulerStatusDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment DecisionSummary on SchedulingDecision {\n    id time namespace pod result engine node message attempts totalNodes feasibleNodes\n    algorithmMs latencyMs e2eLatencyMs rebuilt\n  }\n"): typeof import('./graphql.js').DecisionSummaryFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardHistory($first: Int!) {\n    schedulingHistory(first: $first) { items { ...DecisionSummary } }\n  }\n"): typeof import('./graphql.js').DashboardHistoryDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription DashboardDecisions {\n    schedulingEvents { ...DecisionSummary }\n  }\n"): typeof import('./graphql.js').DashboardDecisionsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardDecision($id: ID!) {\n    decision(id: $id) {\n      ...DecisionSummary\n      reportingInstance candidatesOmitted\n      rules { namespace name maxCPU maxMemory burst { maxPlacements windowSeconds } }\n      candidates {\n        node verdict feasible score rank\n        scores { plugin weight score }\n        reasons { plugin code reason detail rule unresolvable }\n        load {\n          source cpuPercent memoryPercent cpuPercentAfter memoryPercentAfter\n          estimatedCpuMilli estimatedMemoryBytes estimatedPods\n          requestedCpuMilli requestedMemoryBytes allocatableCpuMilli allocatableMemoryBytes\n          podCount allocatablePods stale unavailable\n        }\n        rules {\n          namespace rule allowed bypassed maxCPU maxMemory cpuMargin memoryMargin\n          burst { placements maxPlacements windowSeconds }\n        }\n        burst { placements maxPlacements windowSeconds }\n      }\n    }\n  }\n"): typeof import('./graphql.js').DashboardDecisionDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DashboardSimulate($namespace: String!, $name: String!, $spec: RuleSpecInput!) {\n    simulateRule(namespace: $namespace, name: $name, spec: $spec) {\n      exists eligibleBefore eligibleAfter\n      nodesBecomingEligible\n      nodesBecomingIneligible { node reasons }\n      pendingPodsBecomingSchedulable { namespace pod node message }\n      pendingPodsBecomingUnschedulable { namespace pod node message }\n      runningPodsBreaching { namespace pod node reasons }\n    }\n  }\n"): typeof import('./graphql.js').DashboardSimulateDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

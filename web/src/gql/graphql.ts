/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export type BurstGuardInput = {
  /** 1–10000. */
  maxPlacements: number;
  /** 1–3600. */
  windowSeconds: number;
};

export type CandidateVerdict =
  /** The node the pod was bound to (or the failed bind targeted). */
  | 'CHOSEN'
  /** Passed every filter but scored lower. */
  | 'FEASIBLE'
  /** Failed at least one filter; see reasons. */
  | 'INFEASIBLE';

export type ConditionStatus =
  | 'False'
  | 'True'
  | 'Unknown';

export type DecisionResult =
  /** The bind (to `node`) or the attempt failed. */
  | 'ERROR'
  /** Bound to `node`. */
  | 'SCHEDULED'
  /** No feasible node; the pod stays pending. */
  | 'UNSCHEDULABLE';

export type LabelInput = {
  key: string;
  value: string;
};

export type LabelSelectorInput = {
  matchExpressions?: Array<LabelSelectorRequirementInput> | null | undefined;
  matchLabels?: Array<LabelInput> | null | undefined;
};

export type LabelSelectorOperator =
  | 'DoesNotExist'
  | 'Exists'
  | 'In'
  | 'NotIn';

export type LabelSelectorRequirementInput = {
  key: string;
  operator: LabelSelectorOperator;
  values?: Array<string> | null | undefined;
};

/** Where the load figure comes from. */
export type LoadSource =
  /** A fresh NodeMetrics sample. */
  | 'METRICS'
  /** A fresh sample plus the estimated usage of pods bound after it. */
  | 'METRICS_PLUS_ESTIMATE'
  /** Sum of pod requests (metrics not served, stale under fail-open). */
  | 'REQUESTS';

export type ReasonCode =
  | 'CPUThresholdExceeded'
  /** Metrics stale or missing under fail-closed, or no load figure yet. */
  | 'LoadUnavailable'
  | 'MemoryThresholdExceeded'
  /** Node labels do not match the rule's nodeSelector. */
  | 'NodeSelectorMismatch'
  /** Not in the rule's allowedNodes. */
  | 'NotAllowed';

/** A NodeLoadRule spec; omitted fields take the CRD defaults. */
export type RuleSpecInput = {
  /** Node names; empty means every node. */
  allowedNodes?: Array<string> | null | undefined;
  burst?: BurstGuardInput | null | undefined;
  /** 0–100 percent of allocatable CPU (default 80). */
  maxCPU?: number | null | undefined;
  /** 0–100 percent of allocatable memory (default 80). */
  maxMemory?: number | null | undefined;
  nodeSelector?: LabelSelectorInput | null | undefined;
  podSelector?: LabelSelectorInput | null | undefined;
};

/** Which front door of nodeload decided. */
export type SchedulingEngine =
  /** kube-scheduler placed the pod, calling nodeload as its extender: its own plugins filtered first, the candidates are the nodes it named. */
  | 'EXTENDER'
  /** nodeload's own scheduler placed the pod. */
  | 'NATIVE';

export type SchedulingQueue =
  /** Waiting for its turn. */
  | 'ACTIVE'
  /** Failed recently; waiting out its backoff. */
  | 'BACKOFF'
  /** Being scheduled right now. */
  | 'IN_FLIGHT'
  /** Waiting for a cluster change that could help it. */
  | 'UNSCHEDULABLE';

export type LoadFieldsFragment = { cpuPercent: number, memoryPercent: number, source: LoadSource, timestamp: string, stale: boolean, unavailable: boolean, estimatedPods: number, podCount: number, effective: { cpuMilli: number, memoryBytes: number }, requested: { cpuMilli: number, memoryBytes: number } };

export type DashboardNodesQueryVariables = Exact<{ [key: string]: never; }>;


export type DashboardNodesQuery = { nodes: Array<{ name: string, ready: boolean, schedulable: boolean, podCount: number, allocatable: { cpuMilli: number, memoryBytes: number, pods: number }, load: { cpuPercent: number, memoryPercent: number, source: LoadSource, timestamp: string, stale: boolean, unavailable: boolean, estimatedPods: number, podCount: number, effective: { cpuMilli: number, memoryBytes: number }, requested: { cpuMilli: number, memoryBytes: number } } | null }> };

export type DashboardLoadUpdatesSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type DashboardLoadUpdatesSubscription = { nodeLoadUpdates: { node: string, removed: boolean, load: { cpuPercent: number, memoryPercent: number, source: LoadSource, timestamp: string, stale: boolean, unavailable: boolean, estimatedPods: number, podCount: number, effective: { cpuMilli: number, memoryBytes: number }, requested: { cpuMilli: number, memoryBytes: number } } | null } };

export type SelectorFieldsFragment = { matchLabels: Array<{ key: string, value: string }>, matchExpressions: Array<{ key: string, operator: string, values: Array<string> }> };

export type DashboardRulesQueryVariables = Exact<{ [key: string]: never; }>;


export type DashboardRulesQuery = { rules: Array<{ namespace: string, name: string, generation: number, spec: { maxCPU: number, maxMemory: number, allowedNodes: Array<string>, nodeSelector: { matchLabels: Array<{ key: string, value: string }>, matchExpressions: Array<{ key: string, operator: string, values: Array<string> }> } | null, podSelector: { matchLabels: Array<{ key: string, value: string }>, matchExpressions: Array<{ key: string, operator: string, values: Array<string> }> } | null, burst: { maxPlacements: number, windowSeconds: number } | null }, status: { eligibleCount: number, ineligibleCount: number, lastEvaluationTime: string | null, conditions: Array<{ type: string, status: ConditionStatus, reason: string, message: string }> } | null, evaluation: { evaluatedAt: string | null, eligible: Array<{ node: string, headroom: number }>, ineligible: Array<{ node: string, allowed: boolean, reasons: Array<{ code: ReasonCode, message: string, value: number | null, threshold: number | null }> }> } }> };

export type DashboardPendingQueryVariables = Exact<{ [key: string]: never; }>;


export type DashboardPendingQuery = { pendingPods: Array<{ namespace: string, name: string, queue: SchedulingQueue, reason: string | null, since: string, attempts: number }> };

export type DashboardSchedulerStatusQueryVariables = Exact<{ [key: string]: never; }>;


export type DashboardSchedulerStatusQuery = { schedulerStatus: { schedulerName: string, identity: string, leader: boolean, running: boolean, cacheSynced: boolean, startedAt: string | null, bound: number, unschedulable: number, failed: number, conflicts: number, bindsInFlight: number, historySize: number, queues: { active: number, backoff: number, unschedulable: number, inFlight: number } } };

export type DecisionSummaryFragment = { id: string, time: string, namespace: string, pod: string, result: DecisionResult, engine: SchedulingEngine, node: string | null, message: string, attempts: number, totalNodes: number, feasibleNodes: number, algorithmMs: number, latencyMs: number, e2eLatencyMs: number, rebuilt: boolean };

export type DashboardHistoryQueryVariables = Exact<{
  first: number;
}>;


export type DashboardHistoryQuery = { schedulingHistory: { items: Array<{ id: string, time: string, namespace: string, pod: string, result: DecisionResult, engine: SchedulingEngine, node: string | null, message: string, attempts: number, totalNodes: number, feasibleNodes: number, algorithmMs: number, latencyMs: number, e2eLatencyMs: number, rebuilt: boolean }> } };

export type DashboardDecisionsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type DashboardDecisionsSubscription = { schedulingEvents: { id: string, time: string, namespace: string, pod: string, result: DecisionResult, engine: SchedulingEngine, node: string | null, message: string, attempts: number, totalNodes: number, feasibleNodes: number, algorithmMs: number, latencyMs: number, e2eLatencyMs: number, rebuilt: boolean } };

export type DashboardDecisionQueryVariables = Exact<{
  id: string | number;
}>;


export type DashboardDecisionQuery = { decision: { reportingInstance: string, candidatesOmitted: number, id: string, time: string, namespace: string, pod: string, result: DecisionResult, engine: SchedulingEngine, node: string | null, message: string, attempts: number, totalNodes: number, feasibleNodes: number, algorithmMs: number, latencyMs: number, e2eLatencyMs: number, rebuilt: boolean, rules: Array<{ namespace: string, name: string, maxCPU: number, maxMemory: number, burst: { maxPlacements: number, windowSeconds: number } | null }>, candidates: Array<{ node: string, verdict: CandidateVerdict, feasible: boolean, score: number | null, rank: number | null, scores: Array<{ plugin: string, weight: number, score: number }>, reasons: Array<{ plugin: string, code: string, reason: string, detail: string, rule: string | null, unresolvable: boolean }>, load: { source: LoadSource, cpuPercent: number, memoryPercent: number, cpuPercentAfter: number, memoryPercentAfter: number, estimatedCpuMilli: number, estimatedMemoryBytes: number, estimatedPods: number, requestedCpuMilli: number, requestedMemoryBytes: number, allocatableCpuMilli: number, allocatableMemoryBytes: number, podCount: number, allocatablePods: number, stale: boolean, unavailable: boolean } | null, rules: Array<{ namespace: string, rule: string, allowed: boolean, bypassed: boolean, maxCPU: number, maxMemory: number, cpuMargin: number, memoryMargin: number, burst: { placements: number, maxPlacements: number, windowSeconds: number } | null }>, burst: { placements: number, maxPlacements: number, windowSeconds: number } | null }> } };

export type DashboardSimulateQueryVariables = Exact<{
  namespace: string;
  name: string;
  spec: RuleSpecInput;
}>;


export type DashboardSimulateQuery = { simulateRule: { exists: boolean, eligibleBefore: number | null, eligibleAfter: number, nodesBecomingEligible: Array<string>, nodesBecomingIneligible: Array<{ node: string, reasons: Array<string> }>, pendingPodsBecomingSchedulable: Array<{ namespace: string, pod: string, node: string | null, message: string | null }>, pendingPodsBecomingUnschedulable: Array<{ namespace: string, pod: string, node: string | null, message: string | null }>, runningPodsBreaching: Array<{ namespace: string, pod: string, node: string, reasons: Array<string> }> } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const LoadFieldsFragmentDoc = new TypedDocumentString(`
    fragment LoadFields on NodeLoad {
  cpuPercent
  memoryPercent
  source
  timestamp
  stale
  unavailable
  estimatedPods
  podCount
  effective {
    cpuMilli
    memoryBytes
  }
  requested {
    cpuMilli
    memoryBytes
  }
}
    `, {"fragmentName":"LoadFields"}) as unknown as TypedDocumentString<LoadFieldsFragment, unknown>;
export const SelectorFieldsFragmentDoc = new TypedDocumentString(`
    fragment SelectorFields on LabelSelector {
  matchLabels {
    key
    value
  }
  matchExpressions {
    key
    operator
    values
  }
}
    `, {"fragmentName":"SelectorFields"}) as unknown as TypedDocumentString<SelectorFieldsFragment, unknown>;
export const DecisionSummaryFragmentDoc = new TypedDocumentString(`
    fragment DecisionSummary on SchedulingDecision {
  id
  time
  namespace
  pod
  result
  engine
  node
  message
  attempts
  totalNodes
  feasibleNodes
  algorithmMs
  latencyMs
  e2eLatencyMs
  rebuilt
}
    `, {"fragmentName":"DecisionSummary"}) as unknown as TypedDocumentString<DecisionSummaryFragment, unknown>;
export const DashboardNodesDocument = new TypedDocumentString(`
    query DashboardNodes {
  nodes {
    name
    ready
    schedulable
    podCount
    allocatable {
      cpuMilli
      memoryBytes
      pods
    }
    load {
      ...LoadFields
    }
  }
}
    fragment LoadFields on NodeLoad {
  cpuPercent
  memoryPercent
  source
  timestamp
  stale
  unavailable
  estimatedPods
  podCount
  effective {
    cpuMilli
    memoryBytes
  }
  requested {
    cpuMilli
    memoryBytes
  }
}`) as unknown as TypedDocumentString<DashboardNodesQuery, DashboardNodesQueryVariables>;
export const DashboardLoadUpdatesDocument = new TypedDocumentString(`
    subscription DashboardLoadUpdates {
  nodeLoadUpdates {
    node
    removed
    load {
      ...LoadFields
    }
  }
}
    fragment LoadFields on NodeLoad {
  cpuPercent
  memoryPercent
  source
  timestamp
  stale
  unavailable
  estimatedPods
  podCount
  effective {
    cpuMilli
    memoryBytes
  }
  requested {
    cpuMilli
    memoryBytes
  }
}`) as unknown as TypedDocumentString<DashboardLoadUpdatesSubscription, DashboardLoadUpdatesSubscriptionVariables>;
export const DashboardRulesDocument = new TypedDocumentString(`
    query DashboardRules {
  rules {
    namespace
    name
    generation
    spec {
      maxCPU
      maxMemory
      allowedNodes
      nodeSelector {
        ...SelectorFields
      }
      podSelector {
        ...SelectorFields
      }
      burst {
        maxPlacements
        windowSeconds
      }
    }
    status {
      eligibleCount
      ineligibleCount
      lastEvaluationTime
      conditions {
        type
        status
        reason
        message
      }
    }
    evaluation {
      evaluatedAt
      eligible {
        node
        headroom
      }
      ineligible {
        node
        allowed
        reasons {
          code
          message
          value
          threshold
        }
      }
    }
  }
}
    fragment SelectorFields on LabelSelector {
  matchLabels {
    key
    value
  }
  matchExpressions {
    key
    operator
    values
  }
}`) as unknown as TypedDocumentString<DashboardRulesQuery, DashboardRulesQueryVariables>;
export const DashboardPendingDocument = new TypedDocumentString(`
    query DashboardPending {
  pendingPods {
    namespace
    name
    queue
    reason
    since
    attempts
  }
}
    `) as unknown as TypedDocumentString<DashboardPendingQuery, DashboardPendingQueryVariables>;
export const DashboardSchedulerStatusDocument = new TypedDocumentString(`
    query DashboardSchedulerStatus {
  schedulerStatus {
    schedulerName
    identity
    leader
    running
    cacheSynced
    startedAt
    bound
    unschedulable
    failed
    conflicts
    bindsInFlight
    historySize
    queues {
      active
      backoff
      unschedulable
      inFlight
    }
  }
}
    `) as unknown as TypedDocumentString<DashboardSchedulerStatusQuery, DashboardSchedulerStatusQueryVariables>;
export const DashboardHistoryDocument = new TypedDocumentString(`
    query DashboardHistory($first: Int!) {
  schedulingHistory(first: $first) {
    items {
      ...DecisionSummary
    }
  }
}
    fragment DecisionSummary on SchedulingDecision {
  id
  time
  namespace
  pod
  result
  engine
  node
  message
  attempts
  totalNodes
  feasibleNodes
  algorithmMs
  latencyMs
  e2eLatencyMs
  rebuilt
}`) as unknown as TypedDocumentString<DashboardHistoryQuery, DashboardHistoryQueryVariables>;
export const DashboardDecisionsDocument = new TypedDocumentString(`
    subscription DashboardDecisions {
  schedulingEvents {
    ...DecisionSummary
  }
}
    fragment DecisionSummary on SchedulingDecision {
  id
  time
  namespace
  pod
  result
  engine
  node
  message
  attempts
  totalNodes
  feasibleNodes
  algorithmMs
  latencyMs
  e2eLatencyMs
  rebuilt
}`) as unknown as TypedDocumentString<DashboardDecisionsSubscription, DashboardDecisionsSubscriptionVariables>;
export const DashboardDecisionDocument = new TypedDocumentString(`
    query DashboardDecision($id: ID!) {
  decision(id: $id) {
    ...DecisionSummary
    reportingInstance
    candidatesOmitted
    rules {
      namespace
      name
      maxCPU
      maxMemory
      burst {
        maxPlacements
        windowSeconds
      }
    }
    candidates {
      node
      verdict
      feasible
      score
      rank
      scores {
        plugin
        weight
        score
      }
      reasons {
        plugin
        code
        reason
        detail
        rule
        unresolvable
      }
      load {
        source
        cpuPercent
        memoryPercent
        cpuPercentAfter
        memoryPercentAfter
        estimatedCpuMilli
        estimatedMemoryBytes
        estimatedPods
        requestedCpuMilli
        requestedMemoryBytes
        allocatableCpuMilli
        allocatableMemoryBytes
        podCount
        allocatablePods
        stale
        unavailable
      }
      rules {
        namespace
        rule
        allowed
        bypassed
        maxCPU
        maxMemory
        cpuMargin
        memoryMargin
        burst {
          placements
          maxPlacements
          windowSeconds
        }
      }
      burst {
        placements
        maxPlacements
        windowSeconds
      }
    }
  }
}
    fragment DecisionSummary on SchedulingDecision {
  id
  time
  namespace
  pod
  result
  engine
  node
  message
  attempts
  totalNodes
  feasibleNodes
  algorithmMs
  latencyMs
  e2eLatencyMs
  rebuilt
}`) as unknown as TypedDocumentString<DashboardDecisionQuery, DashboardDecisionQueryVariables>;
export const DashboardSimulateDocument = new TypedDocumentString(`
    query DashboardSimulate($namespace: String!, $name: String!, $spec: RuleSpecInput!) {
  simulateRule(namespace: $namespace, name: $name, spec: $spec) {
    exists
    eligibleBefore
    eligibleAfter
    nodesBecomingEligible
    nodesBecomingIneligible {
      node
      reasons
    }
    pendingPodsBecomingSchedulable {
      namespace
      pod
      node
      message
    }
    pendingPodsBecomingUnschedulable {
      namespace
      pod
      node
      message
    }
    runningPodsBreaching {
      namespace
      pod
      node
      reasons
    }
  }
}
    `) as unknown as TypedDocumentString<DashboardSimulateQuery, DashboardSimulateQueryVariables>;
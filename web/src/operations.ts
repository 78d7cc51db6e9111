/**
 * Every GraphQL operation the dashboard sends, with the shapes of their results. Live lists are
 * fetched in summary form; the heavy parts (a decision's candidates) only when a row is expanded.
 */

export type LoadSource = 'REQUESTS' | 'METRICS' | 'METRICS_PLUS_ESTIMATE';

export interface Load {
  cpuPercent: number;
  memoryPercent: number;
  source: LoadSource;
  timestamp: string;
  stale: boolean;
  unavailable: boolean;
  estimatedPods: number;
  podCount: number;
  effective: { cpuMilli: number; memoryBytes: number };
  requested: { cpuMilli: number; memoryBytes: number };
}

const LOAD_FIELDS = `
fragment LoadFields on NodeLoad {
  cpuPercent memoryPercent source timestamp stale unavailable estimatedPods podCount
  effective { cpuMilli memoryBytes }
  requested { cpuMilli memoryBytes }
}`;

export interface NodeView {
  name: string;
  ready: boolean;
  schedulable: boolean;
  podCount: number;
  allocatable: { cpuMilli: number; memoryBytes: number; pods: number };
  load: Load | null;
}

export const NODES = `
query DashboardNodes {
  nodes {
    name ready schedulable podCount
    allocatable { cpuMilli memoryBytes pods }
    load { ...LoadFields }
  }
}
${LOAD_FIELDS}`;
export interface NodesResult {
  nodes: NodeView[];
}

export interface LoadUpdate {
  node: string;
  removed: boolean;
  load: Load | null;
}

export const LOAD_UPDATES = `
subscription DashboardLoadUpdates {
  nodeLoadUpdates { node removed load { ...LoadFields } }
}
${LOAD_FIELDS}`;
export interface LoadUpdatesResult {
  nodeLoadUpdates: LoadUpdate;
}

export type ReasonCode =
  | 'NotAllowed'
  | 'NodeSelectorMismatch'
  | 'CPUThresholdExceeded'
  | 'MemoryThresholdExceeded'
  | 'LoadUnavailable';

export interface Reason {
  code: ReasonCode;
  message: string;
  value: number | null;
  threshold: number | null;
}

export interface Selector {
  matchLabels: { key: string; value: string }[];
  matchExpressions: { key: string; operator: string; values: string[] }[];
}

export interface RuleSpec {
  maxCPU: number;
  maxMemory: number;
  allowedNodes: string[];
  nodeSelector: Selector | null;
  podSelector: Selector | null;
  burst: { maxPlacements: number; windowSeconds: number } | null;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

export interface RuleView {
  namespace: string;
  name: string;
  generation: number;
  spec: RuleSpec;
  status: {
    eligibleCount: number;
    ineligibleCount: number;
    lastEvaluationTime: string | null;
    conditions: Condition[];
  } | null;
  evaluation: {
    evaluatedAt: string | null;
    eligible: { node: string; headroom: number }[];
    ineligible: { node: string; allowed: boolean; reasons: Reason[] }[];
  };
}

const SELECTOR_FIELDS = 'matchLabels { key value } matchExpressions { key operator values }';

export const RULES = `
query DashboardRules {
  rules {
    namespace name generation
    spec {
      maxCPU maxMemory allowedNodes
      nodeSelector { ${SELECTOR_FIELDS} }
      podSelector { ${SELECTOR_FIELDS} }
      burst { maxPlacements windowSeconds }
    }
    status { eligibleCount ineligibleCount lastEvaluationTime conditions { type status reason message } }
    evaluation {
      evaluatedAt
      eligible { node headroom }
      ineligible { node allowed reasons { code message value threshold } }
    }
  }
}`;
export interface RulesResult {
  rules: RuleView[];
}

export type QueueName = 'ACTIVE' | 'BACKOFF' | 'UNSCHEDULABLE' | 'IN_FLIGHT';

export interface PendingPodView {
  namespace: string;
  name: string;
  queue: QueueName;
  reason: string | null;
  since: string;
  attempts: number;
}

export interface SchedulerStatus {
  schedulerName: string;
  identity: string;
  /** This instance holds the lease and schedules. */
  leader: boolean;
  running: boolean;
  cacheSynced: boolean;
  startedAt: string | null;
  bound: number;
  unschedulable: number;
  failed: number;
  conflicts: number;
  bindsInFlight: number;
  historySize: number;
  queues: { active: number; backoff: number; unschedulable: number; inFlight: number };
}

export const PENDING = `
query DashboardPending {
  pendingPods { namespace name queue reason since attempts }
  schedulerStatus {
    schedulerName identity leader running cacheSynced startedAt
    bound unschedulable failed conflicts bindsInFlight historySize
    queues { active backoff unschedulable inFlight }
  }
}`;
export interface PendingResult {
  pendingPods: PendingPodView[];
  schedulerStatus: SchedulerStatus;
}

export type DecisionResult = 'SCHEDULED' | 'UNSCHEDULABLE' | 'ERROR';

export interface DecisionSummary {
  id: string;
  time: string;
  namespace: string;
  pod: string;
  result: DecisionResult;
  node: string | null;
  message: string;
  attempts: number;
  totalNodes: number;
  feasibleNodes: number;
  algorithmMs: number;
  latencyMs: number;
  e2eLatencyMs: number;
  rebuilt: boolean;
}

const DECISION_SUMMARY = `
fragment DecisionSummary on SchedulingDecision {
  id time namespace pod result node message attempts totalNodes feasibleNodes
  algorithmMs latencyMs e2eLatencyMs rebuilt
}`;

export const HISTORY = `
query DashboardHistory($first: Int!) {
  schedulingHistory(first: $first) { items { ...DecisionSummary } }
}
${DECISION_SUMMARY}`;
export interface HistoryResult {
  schedulingHistory: { items: DecisionSummary[] };
}

export const DECISIONS = `
subscription DashboardDecisions {
  schedulingEvents { ...DecisionSummary }
}
${DECISION_SUMMARY}`;
export interface DecisionsResult {
  schedulingEvents: DecisionSummary;
}

export type CandidateVerdict = 'CHOSEN' | 'FEASIBLE' | 'INFEASIBLE';

export interface Burst {
  placements: number;
  maxPlacements: number;
  windowSeconds: number;
}

export interface FilterReason {
  code: string;
  stage: string;
  reason: string;
  detail: string;
  rule: string | null;
}

export interface CandidateLoad {
  source: LoadSource;
  cpuPercent: number;
  memoryPercent: number;
  cpuPercentAfter: number;
  memoryPercentAfter: number;
  estimatedCpuMilli: number;
  estimatedMemoryBytes: number;
  estimatedPods: number;
  requestedCpuMilli: number;
  requestedMemoryBytes: number;
  allocatableCpuMilli: number;
  allocatableMemoryBytes: number;
  podCount: number;
  allocatablePods: number;
  stale: boolean;
  unavailable: boolean;
}

export interface RuleCheck {
  namespace: string;
  rule: string;
  allowed: boolean;
  bypassed: boolean;
  maxCPU: number;
  maxMemory: number;
  cpuMargin: number;
  memoryMargin: number;
  burst: Burst | null;
}

export interface Candidate {
  node: string;
  verdict: CandidateVerdict;
  feasible: boolean;
  score: number | null;
  balanced: number | null;
  rank: number | null;
  reasons: FilterReason[];
  load: CandidateLoad | null;
  rules: RuleCheck[];
  burst: Burst | null;
}

export interface DecisionDetail extends DecisionSummary {
  reportingInstance: string;
  candidatesOmitted: number;
  rules: {
    namespace: string;
    name: string;
    maxCPU: number;
    maxMemory: number;
    burst: { maxPlacements: number; windowSeconds: number } | null;
  }[];
  candidates: Candidate[];
}

export const DECISION = `
query DashboardDecision($id: ID!) {
  decision(id: $id) {
    ...DecisionSummary
    reportingInstance candidatesOmitted
    rules { namespace name maxCPU maxMemory burst { maxPlacements windowSeconds } }
    candidates {
      node verdict feasible score balanced rank
      reasons { code stage reason detail rule }
      load {
        source cpuPercent memoryPercent cpuPercentAfter memoryPercentAfter
        estimatedCpuMilli estimatedMemoryBytes estimatedPods
        requestedCpuMilli requestedMemoryBytes allocatableCpuMilli allocatableMemoryBytes
        podCount allocatablePods stale unavailable
      }
      rules { namespace rule allowed bypassed maxCPU maxMemory cpuMargin memoryMargin burst { placements maxPlacements windowSeconds } }
      burst { placements maxPlacements windowSeconds }
    }
  }
}
${DECISION_SUMMARY}`;
export interface DecisionResultData {
  decision: DecisionDetail;
}

export interface SelectorInput {
  matchLabels: { key: string; value: string }[];
  matchExpressions: { key: string; operator: string; values?: string[] }[];
}

/** RuleSpecInput: omitted fields take the CRD defaults, so a what-if carries every field of the spec. */
export interface SpecInput {
  maxCPU: number;
  maxMemory: number;
  allowedNodes: string[];
  nodeSelector?: SelectorInput;
  podSelector?: SelectorInput;
  burst?: { maxPlacements: number; windowSeconds: number };
}

export interface Simulation {
  exists: boolean;
  eligibleBefore: number | null;
  eligibleAfter: number;
  nodesBecomingEligible: string[];
  nodesBecomingIneligible: { node: string; reasons: string[] }[];
  pendingPodsBecomingSchedulable: {
    namespace: string;
    pod: string;
    node: string | null;
    message: string | null;
  }[];
  pendingPodsBecomingUnschedulable: {
    namespace: string;
    pod: string;
    node: string | null;
    message: string | null;
  }[];
  runningPodsBreaching: { namespace: string; pod: string; node: string; reasons: string[] }[];
}

export const SIMULATE = `
query DashboardSimulate($namespace: String!, $name: String!, $spec: RuleSpecInput!) {
  simulateRule(namespace: $namespace, name: $name, spec: $spec) {
    exists eligibleBefore eligibleAfter
    nodesBecomingEligible
    nodesBecomingIneligible { node reasons }
    pendingPodsBecomingSchedulable { namespace pod node message }
    pendingPodsBecomingUnschedulable { namespace pod node message }
    runningPodsBreaching { namespace pod node reasons }
  }
}`;
export interface SimulateResult {
  simulateRule: Simulation;
}

/** The operations GraphiQL opens with (one tab each) — also run by the tests, so they stay valid. */

export interface ExampleOperation {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
}

export const EXAMPLE_OPERATIONS: ExampleOperation[] = [
  {
    name: 'Nodes',
    query: `# Every node with its load and the rules it is eligible for.
query Nodes {
  nodes {
    name
    ready
    schedulable
    podCount
    load {
      cpuPercent
      memoryPercent
      source
      timestamp
      stale
      effective { cpu memory }
    }
    rules(eligible: true) { namespace rule headroom }
  }
}
`,
  },
  {
    name: 'Rules',
    query: `# NodeLoadRules with the operator's status and the live evaluation behind it.
query Rules($namespace: String) {
  rules(namespace: $namespace) {
    namespace
    name
    spec { maxCPU maxMemory allowedNodes }
    status {
      eligibleCount
      ineligibleCount
      conditions { type status reason message }
    }
    evaluation {
      eligible { node headroom }
      ineligible { node reasons { code message value threshold } }
    }
    suggestions { node headroom }
    rebalanceHints { namespace pod from to reason }
  }
}
`,
    variables: { namespace: null },
  },
  {
    name: 'History',
    query: `# The latest decisions; pass nextCursor as $after for older ones.
query History($namespace: String, $after: String) {
  schedulingHistory(namespace: $namespace, first: 20, after: $after) {
    items {
      id
      time
      namespace
      pod
      result
      node
      message
      candidates {
        node
        verdict
        score
        reasons { code detail }
        load { cpuPercent cpuPercentAfter estimatedCpuMilli }
        rules { rule maxCPU cpuMargin }
      }
    }
    nextCursor
  }
  pendingPods { namespace name queue reason attempts }
  schedulerStatus { leader queues { active backoff unschedulable } bound unschedulable failed }
}
`,
    variables: { namespace: null, after: null },
  },
  {
    name: 'SchedulingEvents',
    query: `# Live decisions (Server-Sent Events); press play and create some pods.
subscription SchedulingEvents($namespace: String) {
  schedulingEvents(namespace: $namespace) {
    time
    namespace
    pod
    result
    node
    message
    feasibleNodes
    totalNodes
  }
}
`,
    variables: { namespace: null },
  },
  {
    name: 'SimulateRule',
    query: `# What-if: what would change if this rule had another spec? Nothing is written.
query SimulateRule($namespace: String!, $name: String!, $spec: RuleSpecInput!) {
  simulateRule(namespace: $namespace, name: $name, spec: $spec) {
    exists
    eligibleBefore
    eligibleAfter
    nodesBecomingEligible
    nodesBecomingIneligible { node reasons }
    pendingPodsBecomingSchedulable { namespace pod node }
    pendingPodsBecomingUnschedulable { namespace pod message }
    runningPodsBreaching { namespace pod node reasons }
  }
}
`,
    variables: { namespace: 'default', name: 'web', spec: { maxCPU: 60, maxMemory: 80 } },
  },
];

/**
 * A rule's MetricsAvailable condition: whether the nodes of its node set are judged on measured usage
 * (metrics.k8s.io) or, for want of a sample, on their pods' requests — which is what maxCPU/maxMemory
 * then mean. Requests stand in silently otherwise: a gateway started beside a metrics-server that has
 * not yet scraped, or one whose metrics-server is down, places pods by requests (fail-open) or refuses
 * those nodes (fail-closed), and the rule's status is where an operator of the cluster looks.
 *
 *   True  MetricsCurrent    every node of the set has a fresh sample
 *   False MetricsMissing    some have none (missing or older than --metrics-staleness-seconds)
 *   False MetricsNotServed  metrics.k8s.io does not serve node metrics at all: every node by requests
 *   Unknown NoNodes         no node in the rule's node set has a load figure yet
 */
import type { NodeLoad } from '../load/types.js';
import type { MetricsTally, NodeLoadRule, RuleCondition, RuleStatus } from './types.js';

export const METRICS_CONDITION = 'MetricsAvailable';

export function emptyTally(): MetricsTally {
  return { measured: 0, degraded: 0, notServed: 0, failClosed: false };
}

export function tally(t: MetricsTally, load: NodeLoad): void {
  if (load.source !== 'requests') t.measured++;
  else if (load.metricsStale) {
    t.degraded++;
    if (load.unavailable) t.failClosed = true;
  } else t.notServed++;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function metricsCondition(
  rule: NodeLoadRule,
  t: MetricsTally,
  previous: RuleStatus | undefined,
  lastTransitionTime: (status: RuleCondition['status'], prev: RuleCondition | undefined) => string,
): RuleCondition {
  const total = t.measured + t.degraded + t.notServed;
  let status: RuleCondition['status'];
  let reason: string;
  let message: string;
  if (total === 0) {
    [status, reason, message] = ['Unknown', 'NoNodes', 'no node of the rule has a load figure yet'];
  } else if (t.degraded > 0) {
    const judged = t.failClosed
      ? 'ineligible until one arrives (fail-closed)'
      : 'judged by requests (fail-open)';
    status = 'False';
    reason = 'MetricsMissing';
    message = `${t.degraded} of ${plural(total, 'node')} without a fresh metrics sample: ${judged}`;
  } else if (t.notServed > 0) {
    status = 'False';
    reason = 'MetricsNotServed';
    message = `metrics.k8s.io does not serve node metrics: ${plural(total, 'node')} judged by requests`;
  } else {
    status = 'True';
    reason = 'MetricsCurrent';
    message = `${plural(total, 'node')} judged on measured usage`;
  }
  const prev = previous?.conditions.find((c) => c.type === METRICS_CONDITION);
  return {
    type: METRICS_CONDITION,
    status,
    reason,
    message,
    lastTransitionTime: lastTransitionTime(status, prev),
    observedGeneration: rule.generation,
  };
}

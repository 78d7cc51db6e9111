/** Adapters from the gateway's live objects to the read-only sources the resolvers use (context.ts). */

import type { ClusterView } from '../cluster/view.js';
import type { LoadView } from '../load/tracker.js';
import type { Operator } from '../operator/operator.js';
import { ruleKey } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { ClusterSource, LoadSourceView, RuleSource } from './context.js';
import type { SchedulingSource } from './scheduling-source.js';

export function clusterSource(cache: ClusterView<NodeLoadRule>): ClusterSource {
  return {
    nodes: () => cache.nodes.values(),
    node: (name) => cache.nodes.get(name),
    pods: () => cache.pods.values(),
    pod: (namespace, name) => cache.pods.get(`${namespace}/${name}`),
    podsOnNode: (node) => cache.podsOnNode(node).values(),
    rules: () => [...cache.rules.values()].map((e) => e.rule),
    rule: (namespace, name) => cache.rules.get(ruleKey({ namespace, name }))?.rule,
  };
}

export function loadSource(tracker: LoadView): LoadSourceView {
  return {
    loadOf: (node) => tracker.loadOf(node),
    loads: () => tracker.all(),
    onChange: (listener) => tracker.bus.on('load', listener),
  };
}

/** Without an operator (or before its first pass) resolvers evaluate rules themselves. */
export function ruleSource(operator: Pick<Operator, 'evaluation'> | undefined): RuleSource {
  return { evaluation: (namespace, name) => operator?.evaluation(namespace, name) };
}

export function schedulingSource(
  scheduler: Pick<Scheduler, 'history' | 'decision' | 'pendingPods' | 'status' | 'onDecision' | 'simulate'>,
): SchedulingSource {
  return {
    history: (query) => scheduler.history.query(query),
    decision: (id) => scheduler.decision(id),
    pendingPods: () => scheduler.pendingPods(),
    status: () => scheduler.status(),
    onDecision: (listener) => scheduler.onDecision(listener),
    simulate: (rule) => scheduler.simulate(rule),
  };
}

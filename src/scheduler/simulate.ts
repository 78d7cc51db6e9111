/**
 * What-if for a rule change: which nodes enter or leave the rule's eligible set, which pending pods
 * would become schedulable or unschedulable, and which running pods would sit on nodes that break the
 * new rule. Pure, and built on the scheduler's own filter, so the answer agrees with what the scheduler
 * then does (burst limits aside: they depend on the moment).
 */
import type { NamespaceInfo, NodeInfo, PodInfo } from '../cluster/model.js';
import type { LoadOptions, NodeLoad } from '../load/types.js';
import { evaluatePlacement, ruleCoversPod, ruleKey, rulesForPod } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import { runCycle } from './cycle.js';
import { unschedulableMessage } from './explain.js';
import type { Profile } from './framework/runtime.js';
import type { Snapshot } from './framework/snapshot.js';
import type { NodeVerdict } from './framework/verdict.js';

export interface SimulationInput {
  /** The rule as it would be (new, or a changed spec of an existing namespace/name). */
  rule: NodeLoadRule;
  /** The scheduler's profile and snapshot: the same plugins decide the what-if as the loop. */
  profile: Profile;
  snapshot: Snapshot;
  loads: ReadonlyMap<string, NodeLoad>;
  /** Pods waiting for this scheduler. */
  pendingPods: Iterable<PodInfo>;
  /** The rules in force now (the rule's current version among them, if it exists). */
  rules: Iterable<NodeLoadRule>;
  loadOptions: LoadOptions;
  namespaces?: ReadonlyMap<string, NamespaceInfo>;
  now?: number;
}

export interface NodeChange {
  node: string;
  /** For nodes becoming ineligible: why, with the numbers ("cpu 91% > maxCPU 70%"). */
  reasons: string[];
}

export interface PendingPodChange {
  namespace: string;
  pod: string;
  /** Becoming schedulable: where the scheduler would put it now. */
  node?: string;
  /** Becoming unschedulable: the FailedScheduling message it would get. */
  message?: string;
}

export interface BreachingPod {
  namespace: string;
  pod: string;
  node: string;
  reasons: string[];
}

export interface SimulationResult {
  nodesBecomingEligible: string[];
  nodesBecomingIneligible: NodeChange[];
  pendingPodsBecomingSchedulable: PendingPodChange[];
  pendingPodsBecomingUnschedulable: PendingPodChange[];
  runningPodsBreaching: BreachingPod[];
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Node eligibility for a rule at the current load (no pod added), as the operator reports it. */
function ruleReasons(
  rule: NodeLoadRule | undefined,
  node: NodeInfo,
  load: NodeLoad | undefined,
): string[] | undefined {
  if (!rule) return undefined;
  if (!load) return ['no load figure for the node yet'];
  const reasons = evaluatePlacement(rule, node, load);
  return reasons.length ? reasons.map((r) => r.message) : undefined;
}

function feasibility(
  pod: PodInfo,
  rules: NodeLoadRule[],
  input: SimulationInput,
): { node?: string; verdicts: NodeVerdict[] } {
  const { verdicts, ranked } = runCycle({
    profile: input.profile,
    pod,
    snapshot: input.snapshot,
    rules: rulesForPod(rules, pod),
    loads: input.loads,
    loadOptions: input.loadOptions,
    ...(input.namespaces ? { namespaces: input.namespaces } : {}),
    // A what-if is read for its reasons: every node's every failed check, whatever the cluster's size.
    everyReason: true,
    now: input.now ?? Date.now(),
  });
  const best = ranked[0];
  return best ? { node: best.node, verdicts } : { verdicts };
}

export function simulateRule(input: SimulationInput): SimulationResult {
  const { rule } = input;
  const key = ruleKey(rule);
  const before = [...input.rules];
  const current = before.find((r) => ruleKey(r) === key);
  const after = [...before.filter((r) => ruleKey(r) !== key), rule];

  const nodes: NodeInfo[] = [];
  for (const n of input.snapshot.list()) if (n.node) nodes.push(n.node);
  const nodesBecomingEligible: string[] = [];
  const nodesBecomingIneligible: NodeChange[] = [];
  for (const node of nodes) {
    const load = input.loads.get(node.name);
    const was = ruleReasons(current, node, load);
    const will = ruleReasons(rule, node, load);
    if (was && !will) nodesBecomingEligible.push(node.name);
    else if (!was && will) nodesBecomingIneligible.push({ node: node.name, reasons: will });
  }

  const pendingPodsBecomingSchedulable: PendingPodChange[] = [];
  const pendingPodsBecomingUnschedulable: PendingPodChange[] = [];
  for (const pod of input.pendingPods) {
    // Only pods the rule covers (now or after the change) can change their fate.
    if (!ruleCoversPod(rule, pod) && !(current && ruleCoversPod(current, pod))) continue;
    const was = feasibility(pod, before, input);
    const will = feasibility(pod, after, input);
    if (!was.node && will.node) {
      pendingPodsBecomingSchedulable.push({ namespace: pod.namespace, pod: pod.name, node: will.node });
    } else if (was.node && !will.node) {
      pendingPodsBecomingUnschedulable.push({
        namespace: pod.namespace,
        pod: pod.name,
        message: unschedulableMessage(nodes.length, will.verdicts),
      });
    }
  }

  const runningPodsBreaching: BreachingPod[] = [];
  for (const node of nodes) {
    const reasons = ruleReasons(rule, node, input.loads.get(node.name));
    if (!reasons) continue;
    for (const pod of input.snapshot.get(node.name)?.pods.values() ?? []) {
      if (pod.nodeName !== node.name || pod.terminal || pod.isDaemonSetPod || !ruleCoversPod(rule, pod))
        continue;
      runningPodsBreaching.push({ namespace: pod.namespace, pod: pod.name, node: node.name, reasons });
    }
  }

  nodesBecomingEligible.sort(byName);
  nodesBecomingIneligible.sort((a, b) => byName(a.node, b.node));
  const byPod = (a: PendingPodChange | BreachingPod, b: PendingPodChange | BreachingPod) =>
    byName(a.namespace, b.namespace) || byName(a.pod, b.pod);
  pendingPodsBecomingSchedulable.sort(byPod);
  pendingPodsBecomingUnschedulable.sort(byPod);
  runningPodsBreaching.sort(byPod);
  return {
    nodesBecomingEligible,
    nodesBecomingIneligible,
    pendingPodsBecomingSchedulable,
    pendingPodsBecomingUnschedulable,
    runningPodsBreaching,
  };
}

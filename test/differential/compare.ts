// Comparing a run's outcome with kube-scheduler's and with a scenario's stated expectation.
import type { Expectation, PodOutcome, Scenario } from './types.js';

const unscheduled = (outcomes: PodOutcome[]) =>
  outcomes
    .filter((o) => !o.node)
    .map((o) => o.pod)
    .sort();

/** Mismatches between an outcome and an expectation (empty: as expected). */
export function checkExpectation(
  exp: Expectation | undefined,
  outcomes: PodOutcome[],
  victims: string[] = [],
): string[] {
  if (!exp) return [];
  const out: string[] = [];
  const byPod = new Map(outcomes.map((o) => [o.pod, o]));
  if (exp.unschedulable) {
    const want = [...exp.unschedulable].sort();
    const got = unscheduled(outcomes);
    if (want.join() !== got.join())
      out.push(`expected unschedulable [${want.join(', ')}], got [${got.join(', ')}]`);
  }
  for (const [pod, nodes] of Object.entries(exp.placements ?? {})) {
    const node = byPod.get(pod)?.node;
    if (!node || !nodes.includes(node))
      out.push(`expected ${pod} on one of [${nodes.join(', ')}], got ${node ?? 'no node'}`);
  }
  if (exp.victims) {
    const want = [...exp.victims].sort();
    if (want.join() !== [...victims].sort().join())
      out.push(`expected victims [${want.join(', ')}], got [${victims.join(', ')}]`);
  }
  if (exp.boundCount !== undefined) {
    const bound = outcomes.filter((o) => o.node).length;
    if (bound !== exp.boundCount) out.push(`expected ${exp.boundCount} pods bound, got ${bound}`);
  }
  return out;
}

export type Comparison = 'unschedulable-set' | 'unschedulable-count' | 'none';

export function comparisonOf(s: Scenario): Comparison {
  return s.compare ?? (s.orderIndependent ? 'unschedulable-set' : 'unschedulable-count');
}

/** What compareEngines reads of a run. */
export interface RunOutcome {
  outcomes: PodOutcome[];
  /** Existing pods preempted. */
  victims: string[];
}

/**
 * Differences of nodeload's outcome from kube-scheduler's, per the scenario's comparison mode; with
 * PriorityClasses (a preemption scenario, compared by set) the preempted pods must be the same too.
 */
export function compareEngines(s: Scenario, kubeRun: RunOutcome, nodeloadRun: RunOutcome): string[] {
  if (s.expectDifference) return [];
  const mode = comparisonOf(s);
  const k = unscheduled(kubeRun.outcomes);
  const n = unscheduled(nodeloadRun.outcomes);
  const out: string[] = [];
  if (mode === 'unschedulable-set' && s.objects?.priorityClasses?.length) {
    const kv = [...kubeRun.victims].sort().join(', ');
    const nv = [...nodeloadRun.victims].sort().join(', ');
    if (kv !== nv) out.push(`Victims differ: kube-scheduler [${kv}], nodeload [${nv}]`);
  }
  if (mode === 'unschedulable-set' && k.join() !== n.join())
    out.push(`Unschedulable sets differ: kube-scheduler [${k.join(', ')}], nodeload [${n.join(', ')}]`);
  if (mode === 'unschedulable-count' && k.length !== n.length)
    out.push(
      `Unschedulable counts differ: kube-scheduler ${k.length} [${k.join(', ')}], nodeload ${n.length} [${n.join(', ')}]`,
    );
  if (mode === 'unschedulable-set')
    out.push(...nominationDifferences(kubeRun.outcomes, nodeloadRun.outcomes));
  if (s.sameMessages !== false) out.push(...messageDifferences(kubeRun.outcomes, nodeloadRun.outcomes));
  return out;
}

/** A pod both engines left nominated (its victims held) must be nominated to the same node. */
function nominationDifferences(kube: PodOutcome[], nodeload: PodOutcome[]): string[] {
  const theirs = new Map(kube.map((o) => [o.pod, o.nominated]));
  return nodeload
    .filter((o) => o.nominated && theirs.get(o.pod) && theirs.get(o.pod) !== o.nominated)
    .map(
      (o) =>
        `Nominated nodes of ${o.pod} differ: kube-scheduler ${theirs.get(o.pod)}, nodeload ${o.nominated}`,
    );
}

/**
 * Reasons other runs' nodes give (the run's pods are kept off them by node affinity, and their taints and
 * cordons come and go with their scenarios): which of them a message holds depends on what else ran.
 */
const FOREIGN_NODE_REASONS = new Set([
  "node(s) didn't match Pod's node affinity/selector",
  'node(s) had untolerated taint(s)',
  'node(s) were unschedulable',
  'Preemption is not helpful for scheduling',
]);

/**
 * A PodScheduled message as it can be compared across runs: each "0/N nodes are available: …" list as the
 * sorted set of its reasons without counts and without the reasons other runs' nodes give, and every
 * other number as '#'.
 */
export function messageShape(message: string): string {
  return (
    message
      // A list ends at a full stop before a space or the end ("example.com/gpu" holds one within).
      .replace(/\d+\/\d+ nodes are available: (.*?)\.(?= |$)/g, (_m, list: string) => {
        const reasons = new Set(list.split(', ').map((r) => r.replace(/^\d+ /, '')));
        const own = [...reasons].filter((r) => !FOREIGN_NODE_REASONS.has(r)).sort();
        return `#/# nodes are available: ${own.join(', ')}.`;
      })
      .replace(/\d+/g, '#')
  );
}

/**
 * The PodScheduled=False reason and message of each pod both engines left unscheduled — but for a pod
 * nominated by either: its preemption is under way, and its message is that of whichever attempt came
 * last (the one that preempted says nothing of preemption, a later one "not eligible due to a
 * terminating pod on the nominated node"), which is timing, not placement.
 */
function messageDifferences(kube: PodOutcome[], nodeload: PodOutcome[]): string[] {
  const theirs = new Map(kube.map((o) => [o.pod, o]));
  const out: string[] = [];
  for (const o of nodeload) {
    const other = theirs.get(o.pod);
    const k = other?.unschedulable;
    const n = o.unschedulable;
    if (!k || !n || o.nominated || other?.nominated) continue;
    if (k.reason !== n.reason)
      out.push(`Reasons of ${o.pod} differ: kube-scheduler ${k.reason}, nodeload ${n.reason}`);
    if (messageShape(k.message) !== messageShape(n.message))
      out.push(`Messages of ${o.pod} differ: kube-scheduler "${k.message}", nodeload "${n.message}"`);
  }
  return out;
}

// Comparing a run's outcome with kube-scheduler's and with a scenario's stated expectation.
import type { Expectation, PodOutcome, Scenario } from './types.js';

const unscheduled = (outcomes: PodOutcome[]) =>
  outcomes
    .filter((o) => !o.node)
    .map((o) => o.pod)
    .sort();

/** Mismatches between an outcome and an expectation (empty: as expected). */
export function checkExpectation(exp: Expectation | undefined, outcomes: PodOutcome[]): string[] {
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

/** Differences of nodeload's outcome from kube-scheduler's, per the scenario's comparison mode. */
export function compareEngines(s: Scenario, kube: PodOutcome[], nodeload: PodOutcome[]): string[] {
  if (s.expectDifference) return [];
  const mode = comparisonOf(s);
  const k = unscheduled(kube);
  const n = unscheduled(nodeload);
  if (mode === 'unschedulable-set' && k.join() !== n.join())
    return [`Unschedulable sets differ: kube-scheduler [${k.join(', ')}], nodeload [${n.join(', ')}]`];
  if (mode === 'unschedulable-count' && k.length !== n.length)
    return [
      `Unschedulable counts differ: kube-scheduler ${k.length} [${k.join(', ')}], nodeload ${n.length} [${n.join(', ')}]`,
    ];
  return [];
}

/** Figures derived from a decision's candidates for its explanation. Pure. */
import type { Candidate } from './operations.js';

/** The threshold a candidate was held to: the strictest of the rules that applied to it. */
export function candidateThresholds(c: Candidate): { cpu: number; memory: number } {
  const applied = c.rules.filter((r) => r.allowed && !r.bypassed);
  return {
    cpu: Math.min(100, ...applied.map((r) => r.maxCPU)),
    memory: Math.min(100, ...applied.map((r) => r.maxMemory)),
  };
}

/** Infeasible candidates counted by their first reason's text, most common first. */
export function reasonSummary(candidates: Candidate[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const c of candidates) {
    if (c.feasible) continue;
    const first = c.reasons[0]?.reason ?? 'filtered';
    counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

export interface FilteredGroup {
  nodes: string[];
  reasons: Candidate['reasons'];
}

/**
 * Infeasible candidates with identical reasons (same codes and same details) in one row: on a large
 * cluster hundreds of nodes fail the same way, and one line per node would bury the few that differ.
 * Largest group first, then by first node.
 */
export function groupFiltered(candidates: Candidate[]): FilteredGroup[] {
  const groups = new Map<string, FilteredGroup>();
  for (const c of candidates) {
    if (c.feasible) continue;
    const key = c.reasons.map((r) => `${r.code}\u0000${r.detail}`).join('\u0001');
    const group = groups.get(key);
    if (group) group.nodes.push(c.node);
    else groups.set(key, { nodes: [c.node], reasons: c.reasons });
  }
  return [...groups.values()].sort(
    (a, b) => b.nodes.length - a.nodes.length || ((a.nodes[0] ?? '') < (b.nodes[0] ?? '') ? -1 : 1),
  );
}

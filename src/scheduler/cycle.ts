/**
 * One scheduling cycle's algorithm, pure: the pod's rules and the nodes' loads in, every node's verdict
 * and the feasible nodes ranked out. The loop (scheduler.ts), the what-if (simulate.ts) and the views'
 * tests all decide through this one function, so a decision and its simulation cannot disagree.
 */
import type { NamespaceInfo, PodInfo } from '../cluster/model.js';
import type { LoadOptions, NodeLoad } from '../load/types.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { NominatedPods } from './framework/nominator.js';
import { type Profile, type RankedNode, runFilters, runScores } from './framework/runtime.js';
import type { Snapshot } from './framework/snapshot.js';
import type { CycleContext, CycleState } from './framework/types.js';
import type { NodeVerdict } from './framework/verdict.js';

export interface CycleInput {
  profile: Profile;
  pod: PodInfo;
  snapshot: Snapshot;
  /** The rules covering the pod (rulesForPod), in name order. */
  rules: readonly NodeLoadRule[];
  loads: ReadonlyMap<string, NodeLoad>;
  loadOptions: LoadOptions;
  namespaces?: ReadonlyMap<string, NamespaceInfo>;
  /** Pods nominated by preemption (the scheduler's nominator); absent: none. */
  nominated?: NominatedPods;
  now: number;
}

export interface CycleResult {
  ctx: CycleContext;
  state: CycleState;
  verdicts: NodeVerdict[];
  ranked: RankedNode[];
}

export function runCycle(input: CycleInput): CycleResult {
  const { snapshot, loads, namespaces } = input;
  for (const n of snapshot.list()) n.load = loads.get(n.name);
  const ctx: CycleContext = {
    pod: input.pod,
    snapshot,
    rules: input.rules,
    loadOptions: input.loadOptions,
    now: input.now,
    namespaceLabels: (ns) => namespaces?.get(ns)?.labels,
    ...(input.nominated ? { nominated: input.nominated } : {}),
  };
  const { state, verdicts, feasible } = runFilters(input.profile, ctx);
  const ranked = runScores(input.profile, state, ctx, feasible);
  return { ctx, state, verdicts, ranked };
}

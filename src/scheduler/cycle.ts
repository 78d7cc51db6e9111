/**
 * One scheduling cycle's algorithm, pure: the pod's rules and the nodes' loads in, every node's verdict
 * and the feasible nodes ranked out. The loop (schedule-one.ts), the what-if (simulate.ts) and the views'
 * tests all decide through this one function, so a decision and its simulation cannot disagree.
 */
import type { NamespaceInfo, PodInfo } from '../cluster/model.js';
import type { LoadOptions, NodeLoad } from '../load/types.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { NominatedPods } from './framework/nominator.js';
import {
  EVERY_REASON_MAX_NODES,
  type FilterLimit,
  type PreFiltered,
  type Profile,
  runFilters,
} from './framework/runtime.js';
import { type RankedNode, runScores } from './framework/runtime-score.js';
import { numFeasibleNodesToFind } from './framework/sampling.js';
import type { NodeSnapshot, Snapshot } from './framework/snapshot.js';
import type { CycleContext, CycleState } from './framework/types.js';
import type { NodeVerdict } from './framework/verdict.js';
import { PLUGIN } from './plugins/names.js';
import { addVerdictFigures } from './plugins/verdict-figures.js';
import type { SchedulerDeps } from './types.js';

/** Where an engine deciding through runCycle takes its input: the loop's scheduling cycle, the extender. */
export interface CycleSources {
  profile: Profile;
  snapshot: Snapshot;
  cache: Pick<SchedulerDeps['cache'], 'pods' | 'namespaces'>;
  loads: Pick<SchedulerDeps['loads'], 'all' | 'options'>;
}

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
  /**
   * Only these nodes, in this order (kube-scheduler's extender call names the nodes its own filters
   * left); absent: every node of the snapshot.
   */
  nodeNames?: readonly string[];
  /**
   * Filter only until the profile's percentageOfNodesToScore share of the nodes is feasible, starting at
   * this index of the snapshot's node list (the loop rotates it: kube-scheduler's nextStartNodeIndex).
   * Absent, or with nodeNames: every node is filtered (the what-if, the extender, a nominated pod).
   */
  sampleFrom?: number;
  /**
   * Run every Filter plugin on every node, so each verdict lists every failed check (the what-if);
   * absent: only on clusters of up to EVERY_REASON_MAX_NODES nodes (runtime.ts).
   */
  everyReason?: boolean;
  /**
   * Leave the verdicts' load figures and rule checks to the caller, which builds them (addVerdictFigures)
   * for the verdicts its explanation keeps; absent: every verdict gets them.
   */
  deferVerdictFigures?: boolean;
  now: number;
}

export interface CycleResult {
  ctx: CycleContext;
  state: CycleState;
  /** The PreFilter outcome (PostFilter's dry runs start from it). */
  pre: PreFiltered;
  verdicts: NodeVerdict[];
  ranked: RankedNode[];
  /** Nodes filtered (fewer than the snapshot's when sampling found enough feasible ones). */
  examined: number;
  /** Where the next sampled cycle starts. */
  nextStart: number;
}

/**
 * A node named by the caller that the snapshot does not hold (the cache has not seen it yet): without
 * its load no rule can be checked, so it fails as NodeLoadRules fails a node with no load figure.
 */
function unknownNode(name: string): NodeVerdict {
  return {
    node: name,
    feasible: false,
    reasons: [
      {
        plugin: PLUGIN.NodeLoadRules,
        code: 'NoLoad',
        reason: 'node(s) had no load figure yet',
        detail: "node not in nodeload's cache yet",
      },
    ],
    rules: [],
  };
}

function selectNodes(snapshot: Snapshot, names: readonly string[] | undefined) {
  if (!names) return { nodes: snapshot.list(), unknown: [] };
  const nodes: NodeSnapshot[] = [];
  const unknown: NodeVerdict[] = [];
  for (const name of new Set(names)) {
    const n = snapshot.get(name);
    if (n) nodes.push(n);
    else unknown.push(unknownNode(name));
  }
  return { nodes, unknown };
}

export function runCycle(input: CycleInput): CycleResult {
  const { snapshot, loads, namespaces } = input;
  const { nodes, unknown } = selectNodes(snapshot, input.nodeNames);
  const ctx: CycleContext = {
    pod: input.pod,
    snapshot,
    loads,
    rules: input.rules,
    loadOptions: input.loadOptions,
    now: input.now,
    namespaceLabels: (ns) => namespaces?.get(ns)?.labels,
    ...(input.nominated ? { nominated: input.nominated } : {}),
  };
  const start = input.sampleFrom;
  const limit: FilterLimit | undefined =
    start === undefined || input.nodeNames
      ? undefined
      : { numToFind: numFeasibleNodesToFind(input.profile.percentageOfNodesToScore, nodes.length), start };
  const { state, pre, verdicts, feasible, examined } = runFilters(
    input.profile,
    ctx,
    nodes,
    limit,
    input.everyReason ?? nodes.length <= EVERY_REASON_MAX_NODES,
  );
  const ranked = runScores(input.profile, state, ctx, feasible);
  if (!input.deferVerdictFigures) addVerdictFigures(verdicts, ctx);
  verdicts.push(...unknown);
  const nextStart = nodes.length > 0 && limit ? (limit.start + examined) % nodes.length : 0;
  return { ctx, state, pre, verdicts, ranked, examined: examined + unknown.length, nextStart };
}

/**
 * kube-scheduler's scheduling framework, in TypeScript: the extension points a plugin may implement
 * and what flows between them. A scheduling cycle runs, for one pod against one snapshot:
 *
 *   PreEnqueue → (queue, QueueSort) → PreFilter → Filter (per node) → PostFilter (when none fit)
 *   → PreScore → Score (+ NormalizeScore, × weight) → Reserve → Permit → [binding cycle:]
 *   PreBind → Bind → PostBind          (Unreserve on any failure after Reserve)
 *
 * Plugins are plain objects over plain data (src/cluster/model.ts, src/load) and the per-cycle
 * snapshot; only PreBind/Bind do I/O, through what the runtime hands them.
 */
import type { PodInfo } from '../../cluster/model.js';
import type { LoadOptions, NodeLoad } from '../../load/types.js';
import type { NodeLoadRule } from '../../rules/types.js';
import type { NominatedPods } from './nominator.js';
import type { NodeSnapshot, Snapshot } from './snapshot.js';
import type { FilterReason, NodeVerdict } from './verdict.js';

export type { FilterReason };

/** Per-cycle scratch space: PreFilter/PreScore write what Filter/Score read (keyed by plugin name). */
export class CycleState {
  private readonly data = new Map<string, unknown>();
  /** Plugins whose PreFilter/PreScore asked to be skipped for this pod. */
  readonly skipFilter = new Set<string>();
  readonly skipScore = new Set<string>();

  write(key: string, value: unknown): void {
    this.data.set(key, value);
  }

  read<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }

  /**
   * A copy sharing every plugin's entry (CycleState.Clone without the entries' own Clone): a plugin that
   * changes its entry in the copy replaces it there first (PreFilterPlugin.cloneState).
   */
  fork(): CycleState {
    const out = new CycleState();
    for (const [k, v] of this.data) out.data.set(k, v);
    for (const name of this.skipFilter) out.skipFilter.add(name);
    for (const name of this.skipScore) out.skipScore.add(name);
    return out;
  }
}

/** What every plugin sees of the cycle beside the pod: rules, load options, the clock. */
export interface CycleContext {
  pod: PodInfo;
  snapshot: Snapshot;
  /** The NodeLoadRules covering the pod, in name order. */
  rules: readonly NodeLoadRule[];
  loadOptions: LoadOptions;
  now: number;
  /** Namespace labels, for namespaceSelector in pod affinity terms. */
  namespaceLabels(namespace: string): Record<string, string> | undefined;
  /** Pods nominated to nodes by preemption: Filter holds their room against lower priorities. */
  nominated?: NominatedPods;
  /**
   * Every node's load: runFilters sets a node's `load` from it as it examines the node, so a cycle that
   * samples a few hundred nodes of thousands touches only those. Absent: the nodes' `load` is set already.
   */
  loads?: ReadonlyMap<string, NodeLoad>;
}

export interface PreFilterResult {
  /** Only these nodes can possibly fit (upstream's PreFilterResult.NodeNames); undefined = all. */
  nodeNames?: ReadonlySet<string>;
  /** The pod cannot be scheduled at all, whatever the node: every node gets this reason. */
  reject?: Omit<FilterReason, 'plugin'>;
  /** Filter of this plugin has nothing to check for this pod. */
  skip?: boolean;
}

export interface Plugin {
  readonly name: string;
}

/** Gates a pod before it enters the active queue (SchedulingGates). Returns why it must wait, or undefined. */
export interface PreEnqueuePlugin extends Plugin {
  preEnqueue(pod: PodInfo): string | undefined;
}

/** Orders the active queue (PrioritySort). */
export interface QueueSortPlugin extends Plugin {
  less(a: { pod: PodInfo; enqueuedAt: number }, b: { pod: PodInfo; enqueuedAt: number }): boolean;
}

export interface PreFilterPlugin extends Plugin {
  preFilter(state: CycleState, ctx: CycleContext): PreFilterResult | undefined;
  /**
   * PreFilterExtensions.AddPod: counts `pod` — nominated to `node` with priority ≥ the cycle's pod — in
   * this plugin's PreFilter state in `state`, a fork whose entry cloneState has copied. Filter on that node
   * then sees it (upstream's RunFilterPluginsWithNominatedPods, first pass). Plugins reading only the
   * NodeSnapshot need none: the nominated pod is placed there too.
   */
  addPod?(state: CycleState, ctx: CycleContext, pod: PodInfo, node: NodeSnapshot): void;
  /**
   * PreFilterExtensions.RemovePod: uncounts `pod`, a preemption victim the dry run took off `node`, in
   * this plugin's PreFilter state in `state` (a fork, as for addPod; the dry run adds it back with addPod
   * when it reprieves it).
   */
  removePod?(state: CycleState, ctx: CycleContext, pod: PodInfo, node: NodeSnapshot): void;
  /** Replaces this plugin's PreFilter entry in `to` (a fork of `from`) with a copy addPod may change. */
  cloneState?(from: CycleState, to: CycleState): void;
}

/**
 * Filter pushes one reason per problem it finds (nothing = the node passes). Every problem
 * is kept for the explanation; the FailedScheduling message counts a node under its first failing plugin.
 */
export interface FilterPlugin extends Plugin {
  /** Pushes into `verdict.reasons`; nodeload's plugins also attach their figures (load, rules, burst). */
  filter(state: CycleState, ctx: CycleContext, node: NodeSnapshot, verdict: NodeVerdict): void;
}

/** What PostFilter (preemption) found: a node made feasible by evicting victims. */
export interface PostFilterResult {
  /**
   * The node to nominate the pod to; '' = clear the pod's nomination (preemption cannot help anywhere);
   * absent = leave it as it is (upstream's ModeNoop: e.g. its victims are still terminating).
   */
  nominatedNode?: string;
  /** The pods to evict from `nominatedNode`, most important first. */
  victims?: PodInfo[];
  /** PodDisruptionBudgets the eviction of `victims` violates. */
  pdbViolations?: number;
  /**
   * Why preemption did not help, "preemption: …" (appended to the FailedScheduling message, as
   * kube-scheduler does); absent when it found a node.
   */
  message?: string;
  /** What the plugin did, for the decision's explanation (also when it found a node). */
  explanation?: string;
  /** Upstream's Error status: PostFilter ends here, and `message` alone is what it says. */
  error?: boolean;
}

/** What the runtime offers a PostFilter plugin (upstream's framework handle, the part preemption uses). */
export interface PostFilterHandle {
  /**
   * A preemption dry run on one node, as upstream's SelectVictimsOnNode on its own clone of the cycle's
   * state: the cycle's PreFilter state (its skipped plugins stay skipped), forked for this node.
   */
  dryRun(ctx: CycleContext, node: NodeSnapshot): DryRun;
  /**
   * Whether upstream's PreFilter loop reached the plugin: it stops at the first UnschedulableAndUnresolvable
   * rejection (nodeload runs every PreFilter, to explain every reason), so a later plugin has no state.
   */
  preFilterRan(plugin: string): boolean;
}

/**
 * The caller edits the node's pods in the snapshot (a SnapshotEdit) and tells the dry run each change, so
 * the PreFilter extensions (PodTopologySpread, InterPodAffinity, VolumeRestrictions) count as it does.
 */
export interface DryRun {
  /** `pod` was taken off the node (RunPreFilterExtensionRemovePod). */
  removePod(pod: PodInfo): void;
  /** `pod`, one of the node's pods, was put back on it (RunPreFilterExtensionAddPod). */
  addPod(pod: PodInfo): void;
  /** Filter for the cycle's pod on the node as it is now, counting its nominated pods as Filter does. */
  filter(): NodeVerdict;
}

export interface PostFilterPlugin extends Plugin {
  postFilter(
    state: CycleState,
    ctx: CycleContext,
    failed: ReadonlyMap<string, readonly FilterReason[]>,
    handle: PostFilterHandle,
  ): PostFilterResult | undefined;
}

export interface PreScorePlugin extends Plugin {
  /** Returns 'skip' when Score has nothing to say for this pod (every node would score the same). */
  preScore(state: CycleState, ctx: CycleContext, nodes: readonly NodeSnapshot[]): 'skip' | undefined;
}

export interface ScorePlugin extends Plugin {
  /** A raw score for the node; NormalizeScore (if any) maps the raw scores of all nodes to 0–100. */
  score(state: CycleState, ctx: CycleContext, node: NodeSnapshot): number;
  /** In place over `scores` (same order as `nodes`); without it raw scores must already be 0–100. */
  normalizeScore?(state: CycleState, ctx: CycleContext, scores: Float64Array): void;
}

export interface ReservePlugin extends Plugin {
  /** Returns an error message to abort the cycle (Unreserve then runs for every Reserve plugin). */
  reserve(state: CycleState, ctx: CycleContext, node: string): string | undefined;
  unreserve(state: CycleState, ctx: CycleContext, node: string): void;
}

export interface PermitPlugin extends Plugin {
  /** Returns an error message to reject (nodeload's permits never wait). */
  permit(state: CycleState, ctx: CycleContext, node: string): string | undefined;
}

export interface PreBindPlugin extends Plugin {
  /**
   * PreBindPreFlight: whether preBind has work to do for the pod on `node` (false: upstream's Skip).
   * When one has, the binding cycle first sets the pod's nominatedNodeName to the node, so that others
   * (the cluster autoscaler) see where a pod waiting on its volumes is going. Absent: no work.
   */
  preBindPreFlight?(state: CycleState, ctx: CycleContext, node: string): boolean;
  /** Returns an error message when the pod must not be bound (Unreserve follows). */
  preBind(
    state: CycleState,
    ctx: CycleContext,
    node: string,
    signal: AbortSignal,
  ): Promise<string | undefined>;
}

export interface PostBindPlugin extends Plugin {
  postBind(state: CycleState, ctx: CycleContext, node: string): void;
}

export type AnyPlugin = Partial<
  PreEnqueuePlugin &
    QueueSortPlugin &
    PreFilterPlugin &
    FilterPlugin &
    PostFilterPlugin &
    PreScorePlugin &
    ScorePlugin &
    ReservePlugin &
    PermitPlugin &
    PreBindPlugin &
    PostBindPlugin
> &
  Plugin;

/** Re-exported so plugins import their data types from one place. */
export type { NodeSnapshot, PodInfo, Snapshot };

/**
 * Runs one profile's plugins over a cycle, as kube-scheduler's frameworkImpl does: PreFilter once,
 * Filter node by node (plugins in profile order, stopping at a node's first failing plugin as upstream's
 * RunFilterPlugins does, or every plugin where the explanation keeps every reason) until enough feasible
 * nodes are found (percentageOfNodesToScore, sampling.ts), and PostFilter when none is. Scoring the
 * feasible nodes is runtime-score.ts; Reserve, Permit and the binding cycle's points runtime-bind.ts.
 */
import { podKey } from '../../cluster/model.js';
import { withPod } from '../../load/model.js';
import type { NodeSnapshot } from './snapshot.js';
import {
  type CycleContext,
  CycleState,
  type DryRun,
  type FilterPlugin,
  type FilterReason,
  type PermitPlugin,
  type PodInfo,
  type PostBindPlugin,
  type PostFilterHandle,
  type PostFilterPlugin,
  type PostFilterResult,
  type PreBindPlugin,
  type PreEnqueuePlugin,
  type PreFilterPlugin,
  type PreScorePlugin,
  type ReservePlugin,
  type ScorePlugin,
} from './types.js';
import { NO_REASONS, NO_RULE_CHECKS, type NodeVerdict } from './verdict.js';

export interface WeightedScorePlugin {
  plugin: ScorePlugin;
  weight: number;
}

/** One profile: its plugins per extension point, in the order they run. */
export interface Profile {
  schedulerName: string;
  /** KubeSchedulerConfiguration's percentageOfNodesToScore; 0 or absent: adaptive (sampling.ts). */
  percentageOfNodesToScore?: number;
  preEnqueue: PreEnqueuePlugin[];
  preFilter: PreFilterPlugin[];
  filter: FilterPlugin[];
  postFilter: PostFilterPlugin[];
  preScore: PreScorePlugin[];
  score: WeightedScorePlugin[];
  reserve: ReservePlugin[];
  permit: PermitPlugin[];
  preBind: PreBindPlugin[];
  postBind: PostBindPlugin[];
}

export interface FilterOutcome {
  state: CycleState;
  /** The cycle's PreFilter outcome, which preemption's dry runs start from (runPostFilter). */
  pre: PreFiltered;
  /** One per node filtered, in the order they were examined. */
  verdicts: NodeVerdict[];
  feasible: NodeSnapshot[];
  /** How many nodes were filtered (all of them unless a limit stopped the search early). */
  examined: number;
}

/** Stop filtering once `numToFind` feasible nodes are found, starting at `start` (wrapping around). */
export interface FilterLimit {
  numToFind: number;
  start: number;
}

/** Why the pod may not enter the active queue yet (SchedulingGates), or undefined. */
export function runPreEnqueue(profile: Profile, ctx: Pick<CycleContext, 'pod'>): string | undefined {
  for (const p of profile.preEnqueue) {
    const why = p.preEnqueue(ctx.pod);
    if (why) return why;
  }
  return undefined;
}

export interface PreFiltered {
  state: CycleState;
  /** PreFilter rejections: every node gets them. */
  rejects: FilterReason[];
  /**
   * The profile's Filter plugins less those whose PreFilter asked to be skipped, in order: chosen once a
   * cycle instead of a skip-set look-up per plugin per node (~15 × the nodes examined).
   */
  filters: readonly FilterPlugin[];
  /** The profile's PreFilter plugins: those with addPod count nominated pods (extensionsOf). */
  preFilters: readonly PreFilterPlugin[];
  /** The index in `preFilters` of the first unresolvable rejection, where upstream's loop stops. */
  stoppedAt?: number;
  /**
   * The only nodes that can fit, when a PreFilter named them (upstream's merged PreFilterResult), and the
   * status every other node gets instead of being filtered.
   */
  nodeNames?: ReadonlySet<string>;
  notNamed?: FilterReason;
}

function runPreFilter(profile: Profile, ctx: CycleContext): PreFiltered {
  const state = new CycleState();
  const rejects: FilterReason[] = [];
  let stoppedAt: number | undefined;
  // Upstream merges every plugin's PreFilterResult and rejects the pod when the merge leaves no node; of
  // nodeload's plugins only NodeAffinity names nodes, and it rejects an empty set itself.
  let nodeNames: ReadonlySet<string> | undefined;
  const naming: string[] = [];
  for (let i = 0; i < profile.preFilter.length; i++) {
    const p = profile.preFilter[i] as PreFilterPlugin;
    const r = p.preFilter(state, ctx);
    if (!r) continue;
    if (r.skip) state.skipFilter.add(p.name);
    if (r.reject) rejects.push({ ...r.reject, plugin: p.name, preFilter: true });
    if (r.reject?.unresolvable && stoppedAt === undefined) stoppedAt = i;
    const named = r.nodeNames;
    if (named && !r.reject) {
      naming.push(p.name);
      nodeNames = nodeNames ? new Set([...nodeNames].filter((n) => named.has(n))) : named;
    }
  }
  const filters =
    state.skipFilter.size === 0
      ? profile.filter
      : profile.filter.filter((p) => !state.skipFilter.has(p.name));
  return {
    state,
    rejects,
    filters,
    preFilters: profile.preFilter,
    ...(stoppedAt !== undefined ? { stoppedAt } : {}),
    ...(nodeNames ? { nodeNames, notNamed: notNamedReason(naming) } : {}),
  };
}

/** Upstream's status of a node a PreFilterResult left out (UnschedulableAndUnresolvable). */
function notNamedReason(plugins: readonly string[]): FilterReason {
  const sorted = [...new Set(plugins)].sort();
  return {
    plugin: sorted[0] as string,
    code: 'NotInPreFilterResult',
    reason: `node(s) didn't satisfy plugin(s) [${sorted.join(' ')}]`,
    detail: `PreFilter of ${sorted.join(' and ')} named the only nodes that can fit; this node is not one of them`,
    unresolvable: true,
  };
}

/**
 * The PreFilter plugins that count pods added to or removed from a node in their state (addPod,
 * removePod), less those whose PreFilter skipped — upstream's RunPreFilterExtensionAddPod/RemovePod skip
 * SkipFilterPlugins. Looked up only for a node with nominated pods or a dry run, so a cycle without
 * either pays nothing.
 */
function extensionsOf(pre: PreFiltered): PreFilterPlugin[] {
  return pre.preFilters.filter(
    (p) => (p.addPod || p.removePod) && p.cloneState && !pre.state.skipFilter.has(p.name),
  );
}

/** `pre` on a fork of its state that `extensions` may change (each copies its own entry). */
function forked(pre: PreFiltered, extensions: readonly PreFilterPlugin[]): PreFiltered {
  if (extensions.length === 0) return pre;
  const state = pre.state.fork();
  for (const p of extensions) p.cloneState?.(pre.state, state);
  return { ...pre, state };
}

/**
 * Up to this many nodes a cycle runs every Filter plugin on every node, so each verdict lists every
 * failed check: the decision keeps every verdict at that size (explain.ts keeps key candidates only
 * above 100 examined nodes), and the cost is small. Above it a node's filtering stops at its first failing
 * plugin, as kube-scheduler's does: at 5,000 nodes a spread pod fails on three zones' nodes out of four,
 * and running the later plugins (inter-pod affinity, the rules' load figures) on them was wasted work.
 * A cycle that finds no feasible node filters its failed nodes again with every plugin (runFilters), so
 * an unschedulable pod's explanation and preemption see every reason at any size.
 */
export const EVERY_REASON_MAX_NODES = 100;

function runFilterPlugins(
  pre: PreFiltered,
  ctx: CycleContext,
  node: NodeSnapshot,
  everyReason: boolean,
): NodeVerdict {
  // Every field a verdict ever gets (the plugins' load and burst, the explanation's score and rank) is
  // present from the start: one hidden class for all of them, instead of a transition per field added
  // later and megamorphic reads wherever verdicts are walked (explanations, history, Events).
  const verdict: NodeVerdict & { score?: number; scoreParts?: object; rank?: number } = {
    node: node.name,
    feasible: false,
    reasons: NO_REASONS,
    rules: NO_RULE_CHECKS,
    load: undefined,
    burst: undefined,
    placedOn: undefined,
    score: undefined,
    scoreParts: undefined,
    rank: undefined,
  };
  if (pre.rejects.length > 0) {
    verdict.reasons = pre.rejects.slice();
    // Upstream runs no Filter after a PreFilter rejection.
    if (!everyReason) return verdict;
  }
  // A node a PreFilterResult left out is never filtered; it carries that status alone.
  if (pre.notNamed && !pre.nodeNames?.has(node.name)) {
    if (verdict.reasons.length === 0) verdict.reasons = [pre.notNamed];
    return verdict;
  }
  // Indexed, not for…of: where this loop is not yet optimised (a cycle of ≤ 100 nodes runs it ~100
  // times) each step of an array iterator allocates its result (9 KiB per pod at 100 nodes).
  const filters = pre.filters;
  for (let i = 0; i < filters.length; i++) {
    const p = filters[i] as FilterPlugin;
    p.filter(pre.state, ctx, node, verdict);
    if (!everyReason && verdict.reasons.length > 0) break;
  }
  verdict.feasible = verdict.reasons.length === 0;
  return verdict;
}

/** Pods nominated to the node that hold their room against this pod: priority ≥ its own, not yet counted. */
function nominatedAgainst(ctx: CycleContext, node: NodeSnapshot): readonly PodInfo[] {
  // Called for every node filtered: nothing is allocated unless the node has nominated pods.
  let out: PodInfo[] | undefined;
  if (!ctx.nominated || ctx.nominated.size === 0) return NONE;
  let self: string | undefined;
  for (const p of ctx.nominated.forNode(node.name)) {
    const key = podKey(p);
    self ??= podKey(ctx.pod);
    if (key === self || p.priority < ctx.pod.priority || ctx.snapshot.nodeOf(key) !== undefined) continue;
    out ??= [];
    out.push(p);
  }
  return out ?? NONE;
}

const NONE: readonly PodInfo[] = [];

/**
 * Filter on one node counting its nominated pods, as upstream's RunFilterPluginsWithNominatedPods: with
 * every pod nominated there of priority ≥ the pod's added (their requests, ports and count, their load ⊕
 * as a placed pod, and — through addPod on a fork of the PreFilter state — their labels and terms for
 * PodTopologySpread and InterPodAffinity), then, if that passes, once more without them, since a
 * nominated pod may never arrive (an affinity it satisfies cannot be relied on). The node must pass both.
 */
function filterWithNominated(
  pre: PreFiltered,
  ctx: CycleContext,
  node: NodeSnapshot,
  everyReason: boolean,
): NodeVerdict {
  const nominated = nominatedAgainst(ctx, node);
  if (nominated.length === 0) return runFilterPlugins(pre, ctx, node, everyReason);
  const edit = ctx.snapshot.edit();
  const load = node.load;
  let withThem: NodeVerdict;
  try {
    const extensions = extensionsOf(pre);
    const first = forked(pre, extensions);
    for (const p of nominated) {
      const placed = { ...p, nodeName: node.name };
      edit.add(podKey(p), placed, node.name);
      if (node.load) node.load = withPod(node.load, p, ctx.loadOptions);
      for (const ext of extensions) ext.addPod?.(first.state, ctx, placed, node);
    }
    withThem = runFilterPlugins(first, ctx, node, everyReason);
  } finally {
    edit.undo();
    node.load = load;
  }
  return withThem.feasible ? runFilterPlugins(pre, ctx, node, everyReason) : withThem;
}

/**
 * PreFilter once, then Filter on `nodes` (default: every node of the snapshot; an extender names fewer),
 * all of them, or with a `limit` from its start until enough are feasible (upstream's
 * findNodesThatPassFilters with numFeasibleNodesToFind and nextStartNodeIndex). `everyReason` (default:
 * at most EVERY_REASON_MAX_NODES nodes) runs every plugin on every node; otherwise each node stops at
 * its first failing plugin, and if no node is feasible the nodes are filtered again with every plugin.
 */
export function runFilters(
  profile: Profile,
  ctx: CycleContext,
  nodes: readonly NodeSnapshot[] = ctx.snapshot.list(),
  limit?: FilterLimit,
  everyReason = nodes.length <= EVERY_REASON_MAX_NODES,
): FilterOutcome {
  const pre = runPreFilter(profile, ctx);
  const count = nodes.length;
  const numToFind = limit ? Math.min(Math.max(1, limit.numToFind), count) : count;
  const start = limit && count > 0 ? ((limit.start % count) + count) % count : 0;
  // Sized up front and cut to length after: grown by push, the two lists' backing stores were
  // reallocated ~15 times a cycle (25–30 KiB per pod at 1,000 nodes, allocation profile). Verdicts get
  // room for twice the nodes to find (a cycle that examines more grows it), not the whole cluster: at
  // 5,000 nodes a cycle examines a fraction of them.
  const verdicts: NodeVerdict[] = new Array(Math.min(count, 2 * numToFind));
  const feasible: NodeSnapshot[] = new Array(numToFind);
  let found = 0;
  let examined = 0;
  while (examined < count && found < numToFind) {
    const node = nodes[(start + examined) % count] as NodeSnapshot;
    if (ctx.loads) node.load = ctx.loads.get(node.name);
    const verdict = filterWithNominated(pre, ctx, node, everyReason);
    if (verdict.feasible) feasible[found++] = node;
    verdicts[examined++] = verdict;
  }
  verdicts.length = examined;
  feasible.length = found;
  if (feasible.length === 0 && !everyReason) {
    // Unschedulable: the explanation and PostFilter (which nodes preemption could help) read every reason.
    for (let i = 0; i < verdicts.length; i++) {
      const node = nodes[(start + i) % count] as NodeSnapshot;
      if (ctx.loads) node.load = ctx.loads.get(node.name);
      verdicts[i] = filterWithNominated(pre, ctx, node, true);
    }
  }
  return { state: pre.state, pre, verdicts, feasible, examined };
}

/**
 * Upstream's dry run on one node (SelectVictimsOnNode): the cycle's PreFilter state, not a new PreFilter
 * against the edited snapshot — so a plugin the cycle skipped stays skipped (InterPodAffinity skips a pod
 * without terms while no placed pod has required anti-affinity; were the only such pod a victim, a
 * fresh PreFilter would skip too, and miss a nominated pod's anti-affinity upstream still counts), and
 * each victim costs its extensions' removePod instead of a PreFilter over the whole cluster per step.
 */
function dryRun(pre: PreFiltered, ctx: CycleContext, node: NodeSnapshot): DryRun {
  const extensions = extensionsOf(pre);
  const on = forked(pre, extensions);
  return {
    removePod(pod) {
      for (const p of extensions) p.removePod?.(on.state, ctx, pod, node);
    },
    addPod(pod) {
      for (const p of extensions) p.addPod?.(on.state, ctx, pod, node);
    },
    filter: () => filterWithNominated(on, ctx, node, true),
  };
}

/**
 * PostFilter once no node fits, as upstream's RunPostFilterPlugins: plugins in order until one finds a
 * node; otherwise the last answer (its message says why preemption did not help).
 */
export function runPostFilter(
  profile: Profile,
  pre: PreFiltered,
  ctx: CycleContext,
  verdicts: readonly NodeVerdict[],
): PostFilterResult | undefined {
  if (profile.postFilter.length === 0) return undefined;
  const failed = new Map<string, readonly FilterReason[]>();
  for (const v of verdicts) if (!v.feasible) failed.set(v.node, v.reasons);
  const handle: PostFilterHandle = {
    dryRun: (c, node) => dryRun(pre, c, node),
    preFilterRan: (name) => {
      const i = pre.preFilters.findIndex((p) => p.name === name);
      return i >= 0 && (pre.stoppedAt === undefined || i <= pre.stoppedAt);
    },
  };
  // As upstream's RunPostFilterPlugins: the first plugin that finds a node wins alone, an Error ends it
  // with its own message; otherwise every plugin's reasons, in order, joined by ", " (its
  // Status.Message()), with the last plugin's result.
  let last: PostFilterResult | undefined;
  const messages: string[] = [];
  for (const p of profile.postFilter) {
    const r = p.postFilter(pre.state, ctx, failed, handle);
    if (r?.nominatedNode) return r;
    if (r?.error) return { ...(r.message ? { message: r.message } : {}), error: true };
    if (!r) continue;
    if (r.message) messages.push(r.message);
    last = r;
  }
  return last && messages.length > 1 ? { ...last, message: messages.join(', ') } : last;
}

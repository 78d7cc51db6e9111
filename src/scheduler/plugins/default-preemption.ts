/**
 * DefaultPreemption (PostFilter), as upstream's: when no node fits pod P, find the node where evicting
 * pods of lower priority makes room, and nominate P to it; the scheduler then evicts the victims and
 * requeues P, whose room is held on that node against lower priorities until it binds (nominator.ts).
 *
 *   eligible ⇔ P.preemptionPolicy ≠ Never
 *              ∧ ¬(P is nominated to N, N not unresolvable for P, and a pod of lower priority on N is
 *                  terminating)                                   (P already preempted: wait for it)
 *   potential = { N : N failed, and every failure on N may be resolved by evicting pods }
 *   candidates = dry run (default-preemption-victims.ts) over potential, from a random offset, until
 *                ≥ 1 without PDB violation and ≥ max(⌊|potential| × minCandidateNodesPercentage / 100⌋,
 *                minCandidateNodesAbsolute) (capped at |potential|) are found
 *   chosen = pickOneNodeForPreemption(candidates)                     (default-preemption-pick.ts)
 *
 * The fit is always decided by re-running the profile's PreFilter + Filter with the victims gone, so a
 * preemptor is never nominated to a node its NodeLoadRules forbid (RuleNotAllowed is unresolvable) or
 * where its rule's load after placement is exceeded. A failure is not resolvable by eviction when it is
 * marked unresolvable, comes from BurstGuard (placements are not undone by evicting), is a rule's missing
 * or unavailable load, or is a rule's load threshold on a node whose load is measured (metrics): evicted
 * pods' usage is unknown until the next sample, so — the conservative choice — load thresholds are
 * resolved by preemption only where the load is requests-based (the victims' requests are subtracted).
 *
 * Messages are kube-scheduler's: "preemption: not eligible due to preemptionPolicy=Never.", or
 * "preemption: 0/N nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is
 * not helpful for scheduling." (appended to the FailedScheduling message); none when a node was found.
 */
import type { DisruptionBudgetInfo } from '../../cluster/model.js';
import { podKey } from '../../cluster/model.js';
import { unschedulableMessage } from '../explain.js';
import type { NodeSnapshot } from '../framework/snapshot.js';
import type { CycleContext, FilterReason, PostFilterPlugin, PostFilterResult } from '../framework/types.js';
import type { NodeVerdict } from '../framework/verdict.js';
import { type Candidate, pickOneNodeForPreemption } from './default-preemption-pick.js';
import { selectVictimsOnNode } from './default-preemption-victims.js';
import { PLUGIN } from './names.js';

export interface DefaultPreemptionArgs {
  /** Default 10. */
  minCandidateNodesPercentage?: number;
  /** Default 100. */
  minCandidateNodesAbsolute?: number;
}

export interface DefaultPreemptionDeps {
  /** The PodDisruptionBudgets (the shared cache's); absent: none. */
  disruptionBudgets?: () => Iterable<DisruptionBudgetInfo>;
  /** [0, 1) for the dry run's starting offset (tests fix it). */
  random?: () => number;
}

export const NOT_HELPFUL = 'Preemption is not helpful for scheduling';

type Resolvable = 'yes' | 'no' | 'measured-load';

/** Whether evicting pods from the node may lift this failure. */
function resolvableByEviction(r: FilterReason, n: NodeSnapshot): Resolvable {
  if (r.unresolvable || r.plugin === PLUGIN.BurstGuard) return 'no';
  if (r.plugin === PLUGIN.NodeLoadRules) {
    if (r.code !== 'RuleCPUExceeded' && r.code !== 'RuleMemoryExceeded') return 'no';
    return n.load?.source === 'requests' ? 'yes' : 'measured-load';
  }
  return 'yes';
}

function validated(args: DefaultPreemptionArgs): { percentage: number; absolute: number } {
  const percentage = args.minCandidateNodesPercentage ?? 10;
  const absolute = args.minCandidateNodesAbsolute ?? 100;
  if (!Number.isInteger(percentage) || percentage < 0 || percentage > 100)
    throw new Error(
      `DefaultPreemption: minCandidateNodesPercentage must be an integer in [0, 100], got ${percentage}`,
    );
  if (!Number.isInteger(absolute) || absolute < 0)
    throw new Error(
      `DefaultPreemption: minCandidateNodesAbsolute must be a non-negative integer, got ${absolute}`,
    );
  if (percentage === 0 && absolute === 0)
    throw new Error(
      'DefaultPreemption: minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be 0',
    );
  return { percentage, absolute };
}

/** kube-scheduler's FitError text over the preemption statuses; nodes without one were not helpful. */
function statusMessage(ctx: CycleContext, statuses: ReadonlyMap<string, readonly string[]>): string {
  const verdicts: NodeVerdict[] = ctx.snapshot.list().map((n) => ({
    node: n.name,
    feasible: false,
    rules: [],
    reasons: (statuses.get(n.name) ?? [NOT_HELPFUL]).map((reason) => ({
      plugin: PLUGIN.DefaultPreemption,
      code: 'Preemption',
      reason,
      detail: reason,
    })),
  }));
  return `preemption: ${unschedulableMessage(ctx.snapshot.size, verdicts)}`;
}

function measuredNote(count: number): string {
  if (count === 0) return '';
  return ` ${count} node(s) not considered: a rule's load there is measured (metrics) and evicting pods would not lower it before the next sample; preemption resolves load thresholds only on requests-based load.`;
}

function victimList(c: Candidate): string {
  const list = c.victims.map((v) => `${v.namespace}/${v.name} (priority ${v.priority})`).join(', ');
  const pdb = c.pdbViolations > 0 ? `, violating ${c.pdbViolations} PodDisruptionBudget(s)` : '';
  return `preempting ${c.victims.length} pod(s) on node ${c.node}${pdb}: ${list}.`;
}

export function defaultPreemption(
  args: DefaultPreemptionArgs = {},
  deps: DefaultPreemptionDeps = {},
): PostFilterPlugin {
  const { percentage, absolute } = validated(args);
  const random = deps.random ?? Math.random;
  const numCandidates = (n: number) => Math.min(n, Math.max(Math.floor((n * percentage) / 100), absolute));
  const notEligible = (why: string): PostFilterResult => ({
    message: `preemption: ${why}`,
    explanation: `preemption: ${why}`,
  });

  return {
    name: PLUGIN.DefaultPreemption,
    postFilter(_state, ctx, failed, handle) {
      const pod = ctx.pod;
      if (pod.preemptionPolicy === 'Never') return notEligible('not eligible due to preemptionPolicy=Never.');
      const nominated = ctx.nominated?.nodeOf(podKey(pod)) || pod.nominatedNodeName;
      const onNominated = nominated ? ctx.snapshot.get(nominated) : undefined;
      // Still possible there (not unresolvable) while a victim of a preemption is terminating: wait for it
      // to go. Only a preemption's victim (upstream's podTerminatingByPreemption): a lower-priority pod a
      // rollout is deleting frees nothing this pod was promised, so it may preempt again.
      const waiting =
        onNominated &&
        (failed.get(onNominated.name) ?? []).every((r) => resolvableByEviction(r, onNominated) === 'yes') &&
        [...onNominated.pods.values()].some((q) => q.terminatingByPreemption && q.priority < pod.priority);
      if (waiting) return notEligible('not eligible due to a terminating pod on the nominated node.');

      const statuses = new Map<string, string[]>();
      const potential: NodeSnapshot[] = [];
      let measured = 0;
      for (const n of ctx.snapshot.list()) {
        const reasons = failed.get(n.name);
        if (!reasons) continue;
        const verdicts = reasons.map((r) => resolvableByEviction(r, n));
        if (verdicts.every((v) => v === 'yes')) potential.push(n);
        else if (!verdicts.includes('no')) measured++;
      }
      const none = (): PostFilterResult => {
        const message = statusMessage(ctx, statuses);
        return { nominatedNode: '', message, explanation: message + measuredNote(measured) };
      };
      if (potential.length === 0) return none();

      const pdbs = [...(deps.disruptionBudgets?.() ?? [])];
      const want = numCandidates(potential.length);
      const offset = Math.floor(random() * potential.length) % potential.length;
      const clean: Candidate[] = [];
      const violating: Candidate[] = [];
      for (let i = 0; i < potential.length; i++) {
        const n = potential[(offset + i) % potential.length] as NodeSnapshot;
        const r = selectVictimsOnNode(ctx, n, pdbs, handle);
        if ('failure' in r) {
          statuses.set(n.name, r.failure);
          continue;
        }
        const list = r.pdbViolations === 0 ? clean : violating;
        if (list.length < want) list.push({ node: n.name, ...r });
        if (clean.length > 0 && clean.length + violating.length >= want) break;
      }
      const best = pickOneNodeForPreemption([...clean, ...violating], ctx.now);
      if (!best) return none();
      return {
        nominatedNode: best.node,
        victims: best.victims,
        pdbViolations: best.pdbViolations,
        explanation: victimList(best) + measuredNote(measured),
      };
    },
  };
}

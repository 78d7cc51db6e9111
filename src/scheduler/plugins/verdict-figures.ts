/**
 * What a verdict shows beside its reasons: the node's load figures with the pod placed, and one check per
 * NodeLoadRule covering the pod, with its thresholds and the margins the node keeps. NodeLoadRules
 * decides from the same numbers but builds neither: a cycle at 1,000 nodes examines ~350–1,000 nodes, and
 * a decision on its way to be bound keeps ~10 of their verdicts (explain.ts, keyCandidates). The filter
 * leaves the load it placed the pod on (`placedOn`), and the figures are built from it for the verdicts
 * that are kept — runCycle builds them for every verdict unless its caller keeps fewer (the loop:
 * schedule-one.ts) — from what the filter saw: that load, the node's labels, the pod. BurstGuard hangs
 * its per-rule figures on the checks, so it builds them at once where a rule has a burst limit.
 */
import type { NodeLoad } from '../../load/types.js';
import { exemptFromLoadLimits } from '../../rules/daemonset.js';
import { nodeAllowedByRule } from '../../rules/rule.js';
import type { NodeLoadRule } from '../../rules/types.js';
import type { CycleContext } from '../framework/types.js';
import {
  type BurstCheck,
  type CandidateLoad,
  NO_RULE_CHECKS,
  type NodeVerdict,
  type RuleCheck,
} from '../framework/verdict.js';
import { candidateLoad, placedLoadOf } from './load-after.js';

/**
 * A rule's check on one node, read through from the rule and the node's load with the pod placed. The
 * plain record with its two margins (boxed doubles) was ~120 bytes; this is the references and two
 * flags. The rule and the placed load are immutable, so a later read shows what the cycle saw.
 * Serialises as the plain figures.
 */
class RuleCheckView implements RuleCheck {
  burst: BurstCheck | undefined = undefined;
  readonly #rule: NodeLoadRule;
  readonly #after: NodeLoad;
  constructor(
    rule: NodeLoadRule,
    after: NodeLoad,
    readonly allowed: boolean,
    readonly bypassed: boolean,
  ) {
    this.#rule = rule;
    this.#after = after;
  }
  get rule(): string {
    return this.#rule.name;
  }
  get namespace(): string {
    return this.#rule.namespace;
  }
  get maxCPU(): number {
    return this.#rule.spec.maxCPU;
  }
  get maxMemory(): number {
    return this.#rule.spec.maxMemory;
  }
  get cpuMargin(): number {
    return this.#rule.spec.maxCPU - this.#after.cpuPercent;
  }
  get memoryMargin(): number {
    return this.#rule.spec.maxMemory - this.#after.memoryPercent;
  }
  toJSON(): RuleCheck {
    return plainRuleCheck(this);
  }
}

/** The check as a plain object (what a test compares, what JSON shows); burst only when checked. */
export function plainRuleCheck(c: RuleCheck): RuleCheck {
  return {
    rule: c.rule,
    namespace: c.namespace,
    allowed: c.allowed,
    bypassed: c.bypassed,
    maxCPU: c.maxCPU,
    maxMemory: c.maxMemory,
    cpuMargin: c.cpuMargin,
    memoryMargin: c.memoryMargin,
    ...(c.burst ? { burst: c.burst } : {}),
  };
}

/**
 * Gives the verdict its load figures, once, from the load NodeLoadRules placed the pod on; none where it
 * did not examine the node with a load figure (the filtering stopped at an earlier plugin, or the node
 * had no load yet), as before.
 */
export function ensureLoadFigures(verdict: NodeVerdict, ctx: CycleContext): CandidateLoad | undefined {
  const on = verdict.placedOn;
  if (on !== undefined) {
    verdict.load ??= candidateLoad(on, ctx.pod, ctx.loadOptions);
    verdict.placedOn = undefined;
  }
  return verdict.load;
}

/**
 * Gives the verdict its rule checks, once (and its load figures, which they read): only where
 * NodeLoadRules examined the node with a load figure and rules cover the pod. Must run in the verdict's
 * own cycle, before the pod is assumed: it reads the node from the cycle's snapshot.
 */
export function ensureRuleChecks(verdict: NodeVerdict, ctx: CycleContext): readonly RuleCheck[] {
  const figures = ensureLoadFigures(verdict, ctx);
  if (verdict.rules !== NO_RULE_CHECKS || ctx.rules.length === 0) return verdict.rules;
  // The margins read the whole placed load: built here, only where a rule covers the pod.
  const after = placedLoadOf(figures);
  const node = ctx.snapshot.get(verdict.node)?.node;
  if (!after || !node) return verdict.rules;
  const bypassed = exemptFromLoadLimits(ctx.pod);
  const checks: RuleCheck[] = new Array(ctx.rules.length);
  for (let i = 0; i < ctx.rules.length; i++) {
    const rule = ctx.rules[i] as NodeLoadRule;
    checks[i] = new RuleCheckView(rule, after, !nodeAllowedByRule(rule, node), bypassed);
  }
  verdict.rules = checks;
  return checks;
}

/** Load figures and rule checks for each verdict (an explanation's kept candidates). */
export function addVerdictFigures(verdicts: readonly NodeVerdict[], ctx: CycleContext): void {
  for (let i = 0; i < verdicts.length; i++) {
    const v = verdicts[i] as NodeVerdict;
    ensureLoadFigures(v, ctx);
    ensureRuleChecks(v, ctx);
  }
}

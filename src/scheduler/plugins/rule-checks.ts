/**
 * A verdict's rule checks: one per NodeLoadRule covering the pod, with its thresholds and the margins
 * the node keeps with the pod placed. NodeLoadRules decides from the same figures but does not build
 * them: a cycle at 1,000 nodes examines ~350 nodes, and a decision on its way to be bound keeps ~10 of
 * their verdicts (explain.ts, keyCandidates). So the checks are built for the verdicts that are kept —
 * runCycle builds them for every verdict unless its caller keeps fewer (the loop: schedule-one.ts) —
 * from what the filter saw: the placed load its load figures hold, the node's labels, the pod.
 * BurstGuard hangs its per-rule figures on them, so it builds them at once where a rule has a burst limit.
 */

import type { NodeLoad } from '../../load/types.js';
import { exemptFromLoadLimits } from '../../rules/daemonset.js';
import { nodeAllowedByRule } from '../../rules/rule.js';
import type { NodeLoadRule } from '../../rules/types.js';
import type { CycleContext } from '../framework/types.js';
import { type BurstCheck, NO_RULE_CHECKS, type NodeVerdict, type RuleCheck } from '../framework/verdict.js';
import { placedLoadOf } from './load-after.js';

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
 * Gives the verdict its rule checks, once: only where NodeLoadRules examined the node with a load
 * figure (the verdict has its load figures; a node the filtering stopped at an earlier plugin has
 * neither, as before) and rules cover the pod. Must run in the verdict's own cycle, before the pod is
 * assumed: it reads the node from the cycle's snapshot.
 */
export function ensureRuleChecks(verdict: NodeVerdict, ctx: CycleContext): readonly RuleCheck[] {
  if (verdict.rules !== NO_RULE_CHECKS || ctx.rules.length === 0) return verdict.rules;
  const after = placedLoadOf(verdict.load);
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

/** ensureRuleChecks for each verdict (an explanation's kept candidates). */
export function addRuleChecks(verdicts: readonly NodeVerdict[], ctx: CycleContext): void {
  if (ctx.rules.length === 0) return;
  for (let i = 0; i < verdicts.length; i++) ensureRuleChecks(verdicts[i] as NodeVerdict, ctx);
}

/**
 * NodeLoadRules (Filter, nodeload's own): every NodeLoadRule covering the pod must allow the node
 * (allowedNodes ∩ nodeSelector) and keep its load within the rule's thresholds with the pod placed:
 *   fails ⇔ node ∉ allowed(rule)  ∨  cpu%(load ⊕ pod) > maxCPU  ∨  memory%(load ⊕ pod) > maxMemory
 *         ∨ (fail-closed and no fresh metrics)
 * DaemonSet pods are exempt from thresholds (they must run everywhere their selector says) — those the
 * webhook vouched for, see rules/daemonset.ts; a bare DaemonSet ownerReference is no proof. The verdict
 * carries the load figures and one check per rule with its margins, whatever the outcome.
 */
import { formatPercent } from '../../load/model.js';
import type { NodeLoad } from '../../load/types.js';
import { exemptFromLoadLimits } from '../../rules/daemonset.js';
import { loadReasons, nodeAllowedByRule } from '../../rules/rule.js';
import type { NodeLoadRule } from '../../rules/types.js';
import type { FilterPlugin } from '../framework/types.js';
import { addReason, type BurstCheck, type RuleCheck } from '../framework/verdict.js';
import { candidateLoad, loadAfter } from './load-after.js';
import { PLUGIN } from './names.js';

/**
 * A rule's check on one node, read through from the rule and the node's load with the pod placed: one
 * per rule per node a cycle examines, and most are never read (explanations keep key candidates only).
 * The plain record with its two margins (boxed doubles) was ~120 bytes; this is the references and two
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

export function nodeLoadRules(): FilterPlugin {
  return {
    name: PLUGIN.NodeLoadRules,
    filter(state, ctx, n, verdict) {
      const node = n.node;
      if (!node) return;
      const load = n.load;
      const after = loadAfter(state, ctx, n);
      if (load && after) verdict.load = candidateLoad(load, after);
      if (ctx.rules.length === 0) return;
      if (!after) {
        addReason(verdict, {
          plugin: PLUGIN.NodeLoadRules,
          code: 'NoLoad',
          reason: 'node(s) had no load figure yet',
          detail: 'node just added',
        });
        return;
      }
      const bypassed = exemptFromLoadLimits(ctx.pod);
      // Sized once: pushed into the verdict's empty array, the first check grew it to 17 slots, on every
      // node a cycle filters (allocation profile, README).
      const checks: RuleCheck[] = new Array(ctx.rules.length);
      verdict.rules = checks;
      for (let i = 0; i < ctx.rules.length; i++) {
        const rule = ctx.rules[i] as (typeof ctx.rules)[number];
        const name = rule.name;
        const notAllowed = nodeAllowedByRule(rule, node);
        const check = new RuleCheckView(rule, after, !notAllowed, bypassed);
        checks[i] = check;
        if (notAllowed) {
          addReason(verdict, {
            plugin: PLUGIN.NodeLoadRules,
            code: 'RuleNotAllowed',
            reason: `node(s) not allowed by rule ${name}`,
            detail: `rule ${name}: ${notAllowed.message}`,
            rule: name,
            unresolvable: true,
          });
        }
        // Within both thresholds (the common case, loadReasons' own test): nothing to say, nothing allocated.
        const { maxCPU, maxMemory } = rule.spec;
        const within = after.cpuPercent <= maxCPU && after.memoryPercent <= maxMemory && !after.unavailable;
        if (bypassed || within) continue;
        for (const r of loadReasons(rule, after)) {
          if (r.code === 'CPUThresholdExceeded' || r.code === 'MemoryThresholdExceeded') {
            const cpu = r.code === 'CPUThresholdExceeded';
            addReason(verdict, {
              plugin: PLUGIN.NodeLoadRules,
              code: cpu ? 'RuleCPUExceeded' : 'RuleMemoryExceeded',
              reason: `node(s) exceed rule ${name} ${cpu ? 'cpu' : 'memory'} ${formatPercent(cpu ? maxCPU : maxMemory)}%`,
              detail: `rule ${name}: ${r.message} with this pod`,
              rule: name,
            });
          } else if (r.code === 'LoadUnavailable') {
            addReason(verdict, {
              plugin: PLUGIN.NodeLoadRules,
              code: 'RuleLoadUnavailable',
              reason: `node(s) have no fresh load metrics for rule ${name}`,
              detail: `rule ${name}: ${r.message}`,
              rule: name,
            });
          }
        }
      }
    },
  };
}

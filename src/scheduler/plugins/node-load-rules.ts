/**
 * NodeLoadRules (Filter, nodeload's own): every NodeLoadRule covering the pod must allow the node
 * (allowedNodes ∩ nodeSelector) and keep its load within the rule's thresholds with the pod placed:
 *   fails ⇔ node ∉ allowed(rule)  ∨  cpu%(load ⊕ pod) > maxCPU  ∨  memory%(load ⊕ pod) > maxMemory
 *         ∨ (fail-closed and no fresh metrics)
 * DaemonSet pods are exempt from thresholds (they must run everywhere their selector says) — those the
 * webhook vouched for, see rules/daemonset.ts; a bare DaemonSet ownerReference is no proof. The verdict
 * carries the load the pod was placed on whatever the outcome; its load figures and its check per rule,
 * with the margins, are built from it for the verdicts an explanation keeps (verdict-figures.ts).
 */
import { formatPercent } from '../../load/model.js';
import type { NodeLoad } from '../../load/types.js';
import { exemptFromLoadLimits } from '../../rules/daemonset.js';
import { loadReasons, nodeAllowedByRule } from '../../rules/rule.js';
import type { FilterPlugin } from '../framework/types.js';
import { addReason } from '../framework/verdict.js';
import { placedLoadOf, placePod } from './load-after.js';
import { PLUGIN } from './names.js';
import { ensureLoadFigures } from './verdict-figures.js';

export function nodeLoadRules(): FilterPlugin {
  return {
    name: PLUGIN.NodeLoadRules,
    filter(state, ctx, n, verdict) {
      const node = n.node;
      if (!node) return;
      const load = n.load;
      const placed = load !== undefined && placePod(state, ctx, n);
      // The load figures are built from it for the verdicts an explanation keeps (verdict-figures.ts).
      if (placed) verdict.placedOn = load;
      if (ctx.rules.length === 0) return;
      if (!placed) {
        addReason(verdict, {
          plugin: PLUGIN.NodeLoadRules,
          code: 'NoLoad',
          reason: 'node(s) had no load figure yet',
          detail: 'node just added',
        });
        return;
      }
      const bypassed = exemptFromLoadLimits(ctx.pod);
      for (let i = 0; i < ctx.rules.length; i++) {
        const rule = ctx.rules[i] as (typeof ctx.rules)[number];
        const name = rule.name;
        const notAllowed = nodeAllowedByRule(rule, node);
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
        const within = n.cpuPercentAfter <= maxCPU && n.memoryPercentAfter <= maxMemory && !load.unavailable;
        if (bypassed || within) continue;
        // Over a threshold: the reasons' messages read the whole placed load, built here with the
        // verdict's load figures (a failing node's verdict is kept).
        for (const r of loadReasons(rule, placedLoadOf(ensureLoadFigures(verdict, ctx)) as NodeLoad)) {
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

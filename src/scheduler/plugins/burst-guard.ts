/**
 * BurstGuard (Filter, nodeload's own): caps placements per node per sliding window, cluster-wide
 * (--burst-max-placements) and per rule (spec.burst), because metrics lag and estimates can be wrong:
 *   fails ⇔ placements(node, window) ≥ maxPlacements            (rule limits count that rule's pods only)
 * DaemonSet pods the webhook vouched for are exempt (rules/daemonset.ts).
 */
import { exemptFromLoadLimits } from '../../rules/daemonset.js';
import { ruleKey } from '../../rules/rule.js';
import type { BurstGuard as BurstLimit } from '../../rules/types.js';
import type { FilterPlugin } from '../framework/types.js';
import { addReason, type BurstCheck } from '../framework/verdict.js';
import type { BurstView } from '../placement-log.js';
import { PLUGIN } from './names.js';
import { ensureRuleChecks } from './verdict-figures.js';

export interface BurstGuardArgs {
  placements: BurstView;
  /** The cluster-wide limit, if configured. */
  limit?: BurstLimit;
}

function check(view: BurstView, node: string, limit: BurstLimit, rule?: string): BurstCheck {
  return {
    placements: view.placements(node, limit.windowSeconds, rule),
    maxPlacements: limit.maxPlacements,
    windowSeconds: limit.windowSeconds,
  };
}

function detail(b: BurstCheck): string {
  return `${b.placements} placements in the last ${b.windowSeconds}s, limit ${b.maxPlacements}`;
}

export function burstGuard(args: BurstGuardArgs): FilterPlugin {
  return {
    name: PLUGIN.BurstGuard,
    filter(_state, ctx, n, verdict) {
      if (exemptFromLoadLimits(ctx.pod)) return;
      for (const rule of ctx.rules) {
        if (!rule.spec.burst) continue;
        const b = check(args.placements, n.name, rule.spec.burst, ruleKey(rule));
        // Its figures hang on the rule's check, so a burst-limited rule has its checks built at once.
        const rc = ensureRuleChecks(verdict, ctx).find((c) => c.rule === rule.name);
        if (rc) rc.burst = b;
        if (b.placements >= b.maxPlacements) {
          addReason(verdict, {
            plugin: PLUGIN.BurstGuard,
            code: 'RuleBurstLimit',
            reason: `node(s) hit burst limit of rule ${rule.name}`,
            detail: `rule ${rule.name}: ${detail(b)}`,
            rule: rule.name,
          });
        }
      }
      if (args.limit) {
        const b = check(args.placements, n.name, args.limit);
        verdict.burst = b;
        if (b.placements >= b.maxPlacements) {
          addReason(verdict, {
            plugin: PLUGIN.BurstGuard,
            code: 'BurstLimit',
            reason: 'node(s) hit burst limit',
            detail: detail(b),
          });
        }
      }
    },
  };
}

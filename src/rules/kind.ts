/**
 * NodeLoadRule as the shared cluster cache watches it: where it lives and how an API object becomes a
 * rule. The cache (src/cluster) is handed this and never imports the rule domain.
 */
import type { CustomResourceKind } from '../cluster/cache.js';
import type { ClusterTopics, RuleEntry } from '../cluster/view.js';
import { toRule } from './rule.js';
import { type NodeLoadRule, RULE_GROUP, RULE_PLURAL, RULE_VERSION } from './types.js';

export const NODE_LOAD_RULE_KIND: CustomResourceKind<NodeLoadRule> = {
  group: RULE_GROUP,
  version: RULE_VERSION,
  plural: RULE_PLURAL,
  convert: toRule,
};

/** The cache's change topics with rules typed as NodeLoadRules. */
export type RuleClusterTopics = ClusterTopics<NodeLoadRule>;
export type NodeLoadRuleEntry = RuleEntry<NodeLoadRule>;

/**
 * The validating decisions, pure: pods pinned to a node their rules forbid are denied; NodeLoadRules
 * get warnings for what the CRD schema cannot check (node names that do not exist, duplicates, rules
 * that together leave no node).
 */
import type { LabelSelector, LabelSelectorRequirement, NodeInfo } from '../cluster/model.js';
import { allowedNodeNames, nodeAllowedByRule } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';

/** `refusedBy`: the names of the rules that forbid the node. */
export type PodVerdict = { allowed: true } | { allowed: false; message: string; refusedBy: string[] };

/**
 * Break-glass: a pinned pod labelled so is allowed despite its rules (with a warning, a log line and
 * nodeload_admission_break_glass_total), also while the gateway is down — its webhook entry fails
 * open. The webhook cannot tell who may use it: restrict setting the label with RBAC and a
 * ValidatingAdmissionPolicy (manifests/webhook/break-glass-policy.yaml, README "Break-glass").
 */
export const BREAK_GLASS_LABEL = 'nodeload.example.com/break-glass';
export const BREAK_GLASS_VALUE = 'true';

export function breaksGlass(labels: Readonly<Record<string, string>> | null | undefined): boolean {
  return labels?.[BREAK_GLASS_LABEL] === BREAK_GLASS_VALUE;
}

/** Stands in for a node the cache does not know: no labels, so a rule's nodeSelector cannot match it. */
function unknownNode(name: string): NodeInfo {
  return {
    name,
    uid: '',
    resourceVersion: '',
    labels: {},
    taints: [],
    unschedulable: false,
    ready: false,
    capacity: { cpuMilli: 0, memoryBytes: 0, pods: 0 },
    allocatable: { cpuMilli: 0, memoryBytes: 0, pods: 0 },
    allocatableResources: {},
    images: [],
    declaredFeatures: [],
    creationTimestamp: '',
  };
}

/**
 * A pod with spec.nodeName bypasses the scheduler, so this is the only place its rules can hold.
 * `rules` are the rules covering the pod; every rule that forbids the node is named.
 */
export function validatePinnedPod(
  nodeName: string,
  rules: NodeLoadRule[],
  nodes: ReadonlyMap<string, NodeInfo>,
): PodVerdict {
  if (!nodeName || rules.length === 0) return { allowed: true };
  const known = nodes.get(nodeName);
  const node = known ?? unknownNode(nodeName);
  const refusals: string[] = [];
  const refusedBy: string[] = [];
  for (const rule of rules) {
    const reason = nodeAllowedByRule(rule, node);
    if (!reason) continue;
    const why =
      !known && reason.code === 'NodeSelectorMismatch'
        ? 'node is unknown, so its labels cannot match nodeSelector'
        : reason.message;
    refusals.push(`NodeLoadRule "${rule.name}" does not allow node "${nodeName}" (${reason.code}: ${why})`);
    refusedBy.push(rule.name);
  }
  if (refusals.length === 0) return { allowed: true };
  return {
    allowed: false,
    message: `pod is pinned by spec.nodeName to node "${nodeName}": ${refusals.join('; ')}`,
    refusedBy,
  };
}

// Selector overlap, per key: whether some label set could satisfy both selectors. Conservative —
// "might overlap" unless the requirements on one key plainly contradict.
interface KeyConstraint {
  /** Allowed values (intersection of In / matchLabels); undefined = any. */
  values?: Set<string>;
  excluded: Set<string>;
  mustExist: boolean;
  mustNotExist: boolean;
}

function requirementsOf(sel: LabelSelector | undefined): LabelSelectorRequirement[] {
  if (!sel) return [];
  return [
    ...Object.entries(sel.matchLabels ?? {}).map(([key, v]) => ({ key, operator: 'In', values: [v] })),
    ...(sel.matchExpressions ?? []),
  ];
}

function intersect(a: Set<string> | undefined, b: string[]): Set<string> {
  return a ? new Set(b.filter((v) => a.has(v))) : new Set(b);
}

/** False only when no label set can satisfy both selectors. */
export function selectorsMayOverlap(a: LabelSelector | undefined, b: LabelSelector | undefined): boolean {
  const byKey = new Map<string, KeyConstraint>();
  for (const req of [...requirementsOf(a), ...requirementsOf(b)]) {
    const c = byKey.get(req.key) ?? { excluded: new Set<string>(), mustExist: false, mustNotExist: false };
    const values = req.values ?? [];
    if (req.operator === 'In') {
      c.values = intersect(c.values, values);
      c.mustExist = true;
    } else if (req.operator === 'NotIn') {
      for (const v of values) c.excluded.add(v);
    } else if (req.operator === 'Exists') {
      c.mustExist = true;
    } else if (req.operator === 'DoesNotExist') {
      c.mustNotExist = true;
    }
    byKey.set(req.key, c);
  }
  for (const c of byKey.values()) {
    if (c.mustExist && c.mustNotExist) return false;
    if (c.values && [...c.values].every((v) => c.excluded.has(v))) return false;
  }
  return true;
}

/**
 * Warnings for a NodeLoadRule being created or updated. `others` are the other rules of its
 * namespace; `nodes` is undefined while the node list is not known yet (node checks are skipped).
 */
export function ruleWarnings(
  rule: NodeLoadRule,
  others: NodeLoadRule[],
  nodes: NodeInfo[] | undefined,
): string[] {
  const warnings: string[] = [];
  const counts = new Map<string, number>();
  for (const n of rule.spec.allowedNodes) counts.set(n, (counts.get(n) ?? 0) + 1);
  for (const [name, count] of counts) {
    if (count > 1) warnings.push(`spec.allowedNodes: "${name}" is listed ${count} times`);
  }
  if (!nodes || nodes.length === 0) return warnings;

  const existing = new Set(nodes.map((n) => n.name));
  const missing = [...counts.keys()].filter((n) => !existing.has(n));
  if (missing.length > 0) {
    const shown = missing.slice(0, 10).map((n) => `"${n}"`);
    const more = missing.length > shown.length ? ` and ${missing.length - shown.length} more` : '';
    const none = missing.length === counts.size ? ' (none of the listed nodes exists)' : '';
    warnings.push(`spec.allowedNodes: no node named ${shown.join(', ')}${more}${none}`);
  }
  if (allowedNodeNames([rule], nodes).size === 0) {
    warnings.push(`NodeLoadRule "${rule.name}" allows none of the ${nodes.length} existing nodes`);
    return warnings;
  }
  for (const other of others) {
    if (other.name === rule.name || other.namespace !== rule.namespace) continue;
    if (!selectorsMayOverlap(rule.spec.podSelector, other.spec.podSelector)) continue;
    if (allowedNodeNames([rule, other], nodes).size === 0) {
      warnings.push(
        `together with NodeLoadRule "${other.name}" this rule allows no existing node: pods both rules select cannot be scheduled`,
      );
    }
  }
  return warnings;
}

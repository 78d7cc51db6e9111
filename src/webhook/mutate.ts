/**
 * The mutating decision, pure: which scheduler and which required node affinity a pod covered by
 * NodeLoadRules should have, expressed as a JSON Patch from the pod as sent.
 *
 * Idempotence comes from comparing with the desired state, not from a marker: a term that already
 * implies the rules' restriction is left alone, so a reinvoked webhook (reinvocationPolicy IfNeeded)
 * or a pod created from an already mutated manifest gets no patch.
 */
import type { LabelSelector, NodeInfo } from '../cluster/model.js';
import { someNodeAllowed } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import { NOT_STEERED_ANNOTATION } from './gate.js';
import {
  escapePointer,
  type PatchOperation,
  type PodNodeSelectorRequirement,
  type PodNodeSelectorTerm,
  type PodObject,
} from './review.js';

/** Names the rules whose restriction the webhook applied, comma-separated, sorted. */
export const RULES_ANNOTATION = 'nodeload.example.com/rules';
export const DEFAULT_SCHEDULER = 'default-scheduler';
/** The annotations the patch sets or removes (patch-memo.ts keys on their current values). */
export const STEERING_ANNOTATIONS = [RULES_ANNOTATION, NOT_STEERED_ANNOTATION] as const;
/**
 * A label key no node is expected to carry; "Exists and DoesNotExist" on it matches no node. Used
 * when the rules together allow no node at all, because an empty nodeSelectorTerms list is invalid.
 */
export const NO_NODE_ALLOWED_KEY = 'nodeload.example.com/no-node-allowed-by-rules';

const NODE_NAME_FIELD = 'metadata.name';
const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
/** A DNS-1123 subdomain: the only names a Node can have (and matchFields accepts). */
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export interface MutationOptions {
  schedulerName: string;
  overrideExplicitScheduler: boolean;
}

export interface Mutation {
  patch: PatchOperation[];
  /** What the patch changes, for the log: "schedulerName", "affinity", "annotation". */
  changes: string[];
  warnings: string[];
}

/**
 * The rules' node restriction as node-affinity requirements: label requirements every term must
 * carry (from the rules' nodeSelectors), and the node names one of which every term must pin
 * (the intersection of the rules' allowedNodes; undefined when no rule lists nodes).
 */
export interface NodeRestriction {
  labelRequirements: PodNodeSelectorRequirement[];
  nodeNames?: string[];
}

function selectorRequirements(sel: LabelSelector | undefined): PodNodeSelectorRequirement[] {
  if (!sel) return [];
  const out: PodNodeSelectorRequirement[] = Object.entries(sel.matchLabels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, operator: 'In', values: [value] }));
  for (const e of sel.matchExpressions ?? []) {
    out.push(
      e.operator === 'Exists' || e.operator === 'DoesNotExist'
        ? { key: e.key, operator: e.operator }
        : { key: e.key, operator: e.operator, values: [...(e.values ?? [])] },
    );
  }
  return out;
}

function sameRequirement(a: PodNodeSelectorRequirement, b: PodNodeSelectorRequirement): boolean {
  if (a.key !== b.key || a.operator !== b.operator) return false;
  const av = new Set(a.values ?? []);
  const bv = new Set(b.values ?? []);
  return av.size === bv.size && [...av].every((v) => bv.has(v));
}

export function restrictionFor(rules: NodeLoadRule[]): NodeRestriction {
  const labelRequirements: PodNodeSelectorRequirement[] = [];
  for (const rule of rules) {
    for (const req of selectorRequirements(rule.spec.nodeSelector)) {
      if (!labelRequirements.some((r) => sameRequirement(r, req))) labelRequirements.push(req);
    }
  }
  let names: Set<string> | undefined;
  for (const rule of rules) {
    if (rule.spec.allowedNodes.length === 0) continue;
    const listed = new Set(rule.spec.allowedNodes);
    names = names ? new Set([...names].filter((n) => listed.has(n))) : listed;
  }
  const restriction: NodeRestriction = { labelRequirements };
  if (names) {
    // A name that is not a valid node name can never match; leaving it out keeps the pod valid.
    restriction.nodeNames = [...names].filter((n) => NODE_NAME.test(n)).sort();
    if (restriction.nodeNames.length === 0) {
      delete restriction.nodeNames;
      labelRequirements.push(
        { key: NO_NODE_ALLOWED_KEY, operator: 'Exists' },
        { key: NO_NODE_ALLOWED_KEY, operator: 'DoesNotExist' },
      );
    }
  }
  return restriction;
}

/** An empty term matches no node (Kubernetes semantics), so it already implies any restriction. */
function isEmptyTerm(term: PodNodeSelectorTerm): boolean {
  return !term.matchExpressions?.length && !term.matchFields?.length;
}

function pinsAllowedName(term: PodNodeSelectorTerm, names: string[]): boolean {
  return (term.matchFields ?? []).some(
    (f) =>
      f.key === NODE_NAME_FIELD &&
      f.operator === 'In' &&
      f.values?.length === 1 &&
      names.includes(f.values[0] as string),
  );
}

/** Whether every node the term selects is one the restriction allows (checked syntactically). */
export function termImplies(term: PodNodeSelectorTerm, r: NodeRestriction): boolean {
  if (isEmptyTerm(term)) return true;
  const exprs = term.matchExpressions ?? [];
  if (!r.labelRequirements.every((req) => exprs.some((e) => sameRequirement(e, req)))) return false;
  return r.nodeNames === undefined || pinsAllowedName(term, r.nodeNames);
}

/**
 * The term ANDed with the restriction. matchFields `metadata.name In` takes exactly one value (API
 * validation), so "one of these nodes" becomes one term per allowed node: (T) ∧ (n1 ∨ n2) = T∧n1 ∨ T∧n2.
 */
function restrictTerm(term: PodNodeSelectorTerm, r: NodeRestriction): PodNodeSelectorTerm[] {
  const exprs = [...(term.matchExpressions ?? [])];
  for (const req of r.labelRequirements) if (!exprs.some((e) => sameRequirement(e, req))) exprs.push(req);
  const base: PodNodeSelectorTerm = { ...term, ...(exprs.length ? { matchExpressions: exprs } : {}) };
  if (r.nodeNames === undefined || pinsAllowedName(term, r.nodeNames)) return [base];
  return r.nodeNames.map((name) => ({
    ...base,
    matchFields: [...(term.matchFields ?? []), { key: NODE_NAME_FIELD, operator: 'In', values: [name] }],
  }));
}

/**
 * The pod's required node-affinity terms restricted to the rules' nodes (one new term when it has
 * none); undefined when every term already implies the restriction.
 */
export function restrictedTerms(
  current: PodNodeSelectorTerm[],
  r: NodeRestriction,
): PodNodeSelectorTerm[] | undefined {
  if (r.labelRequirements.length === 0 && r.nodeNames === undefined) return undefined;
  if (current.length === 0) return restrictTerm({}, r);
  if (current.every((t) => termImplies(t, r))) return undefined;
  return current.flatMap((t) => (termImplies(t, r) ? [t] : restrictTerm(t, r)));
}

function affinityPatch(pod: PodObject, terms: PodNodeSelectorTerm[]): PatchOperation {
  const affinity = pod.spec.affinity;
  const nodeAffinity = affinity?.nodeAffinity;
  const required = nodeAffinity?.[REQUIRED];
  // "add" on an existing member replaces it (RFC 6902), so null members are covered too; a missing
  // parent is added whole, because "add" cannot create intermediate objects.
  if (!affinity) {
    return {
      op: 'add',
      path: '/spec/affinity',
      value: { nodeAffinity: { [REQUIRED]: { nodeSelectorTerms: terms } } },
    };
  }
  if (!nodeAffinity) {
    return {
      op: 'add',
      path: '/spec/affinity/nodeAffinity',
      value: { [REQUIRED]: { nodeSelectorTerms: terms } },
    };
  }
  if (!required) {
    return {
      op: 'add',
      path: `/spec/affinity/nodeAffinity/${REQUIRED}`,
      value: { nodeSelectorTerms: terms },
    };
  }
  return { op: 'add', path: `/spec/affinity/nodeAffinity/${REQUIRED}/nodeSelectorTerms`, value: terms };
}

/**
 * The annotation operations setting `desired` (undefined = remove) from the pod as sent: "add" on
 * an existing member replaces it, and a missing annotations object is added whole.
 */
export function annotationPatch(
  pod: PodObject,
  desired: Record<string, string | undefined>,
): PatchOperation[] {
  const annotations = pod.metadata.annotations;
  const changed = Object.entries(desired).filter(([k, v]) => (annotations?.[k] ?? undefined) !== v);
  if (changed.length === 0) return [];
  if (!annotations) {
    const value = Object.fromEntries(changed.filter(([, v]) => v !== undefined));
    return Object.keys(value).length ? [{ op: 'add', path: '/metadata/annotations', value }] : [];
  }
  return changed.map(([k, v]): PatchOperation => {
    const path = `/metadata/annotations/${escapePointer(k)}`;
    return v === undefined ? { op: 'remove', path } : { op: 'add', path, value: v };
  });
}

/**
 * The patch steering a pod to its rules. `rules` are the rules covering the pod (non-empty);
 * `nodes`, when known, only serve the warning that the rules together allow no current node.
 *
 * `notSteered` (the capability gate's reasons, see gate.ts): when not empty the pod keeps its
 * scheduler and carries the reasons in NOT_STEERED_ANNOTATION; the rules' node restriction is still
 * applied (kube-scheduler honours it), only their load limits are not enforced. A steered pod loses a
 * stale NOT_STEERED_ANNOTATION, so the annotation never lies.
 */
export function mutatePod(
  pod: PodObject,
  rules: NodeLoadRule[],
  opts: MutationOptions,
  nodes?: ReadonlyMap<string, NodeInfo>,
  notSteered: readonly string[] = [],
): Mutation {
  const patch: PatchOperation[] = [];
  const changes: string[] = [];
  const warnings: string[] = [];
  const ruleNames = rules.map((r) => r.name).sort();
  const named = ruleNames.map((n) => `NodeLoadRule "${n}"`).join(', ');

  const scheduler = pod.spec.schedulerName;
  if (notSteered.length > 0) {
    const plugins = [...new Set(notSteered.map((r) => r.split(':')[0]))].join(', ');
    // Warnings beyond ~120 characters may be truncated by clients: the annotation has the details.
    warnings.push(
      scheduler === opts.schedulerName
        ? `pod asks for "${scheduler}", which does not handle ${plugins} yet; see ${NOT_STEERED_ANNOTATION}`
        : `not steered to "${opts.schedulerName}" (${plugins}); see annotation ${NOT_STEERED_ANNOTATION}`,
    );
  } else if (
    !scheduler ||
    scheduler === DEFAULT_SCHEDULER ||
    (opts.overrideExplicitScheduler && scheduler !== opts.schedulerName)
  ) {
    if (scheduler !== opts.schedulerName) {
      patch.push({ op: 'add', path: '/spec/schedulerName', value: opts.schedulerName });
      changes.push('schedulerName');
    }
  } else if (scheduler !== opts.schedulerName) {
    // Warnings beyond ~120 characters may be truncated by clients: keep them short.
    warnings.push(
      `scheduler "${scheduler}" kept: nodes restricted by affinity, load limits of ${named} not enforced`,
    );
  }

  const restriction = restrictionFor(rules);
  const current = pod.spec.affinity?.nodeAffinity?.[REQUIRED]?.nodeSelectorTerms ?? [];
  const terms = restrictedTerms(current, restriction);
  if (terms) {
    patch.push(affinityPatch(pod, terms));
    changes.push('affinity');
  }

  if (
    restriction.labelRequirements.some((r) => r.key === NO_NODE_ALLOWED_KEY) ||
    (nodes && nodes.size > 0 && !someNodeAllowed(rules, nodes))
  ) {
    warnings.push(`${named} allow no node together: the pod will stay Pending`);
  }

  const annotations = annotationPatch(pod, {
    [RULES_ANNOTATION]: ruleNames.join(','),
    [NOT_STEERED_ANNOTATION]: notSteered.length > 0 ? notSteered.join('; ') : undefined,
  });
  if (annotations.length > 0) {
    patch.push(...annotations);
    changes.push('annotation');
  }
  return { patch, changes, warnings };
}

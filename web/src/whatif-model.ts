/** The what-if draft: simulateRule input from a rule's spec, the patch that would apply it, map marks. Pure. */
import type {
  LabelSelectorOperator,
  RuleSpec,
  RuleView,
  Selector,
  SelectorInput,
  Simulation,
  SpecInput,
} from './operations.js';
import type { Mark } from './ui-state.js';

function selectorInput(s: Selector | null): SelectorInput | undefined {
  if (!s) return undefined;
  return {
    matchLabels: s.matchLabels,
    matchExpressions: s.matchExpressions.map((e) => ({
      key: e.key,
      // The output field is a String; the CRD admits only the four operators of the input enum, and
      // simulateRule would refuse anything else with an error the panel shows.
      operator: e.operator as LabelSelectorOperator,
      ...(e.values.length ? { values: e.values } : {}),
    })),
  };
}

/** The rule's spec as simulateRule input, keeping the fields the panel does not edit. */
export function specInput(spec: RuleSpec, edits: Partial<SpecInput> = {}): SpecInput {
  const nodeSelector = selectorInput(spec.nodeSelector);
  const podSelector = selectorInput(spec.podSelector);
  return {
    maxCPU: Math.round(spec.maxCPU),
    maxMemory: Math.round(spec.maxMemory),
    allowedNodes: spec.allowedNodes,
    ...(nodeSelector ? { nodeSelector } : {}),
    ...(podSelector ? { podSelector } : {}),
    ...(spec.burst ? { burst: spec.burst } : {}),
    ...edits,
  };
}

/** The merge patch that would apply the draft (only the fields that differ from the current spec). */
export function patchCommand(rule: RuleView, draft: SpecInput): string | undefined {
  const patch: Record<string, unknown> = {};
  if (draft.maxCPU !== Math.round(rule.spec.maxCPU)) patch['maxCPU'] = draft.maxCPU;
  if (draft.maxMemory !== Math.round(rule.spec.maxMemory)) patch['maxMemory'] = draft.maxMemory;
  if (draft.allowedNodes.join(',') !== rule.spec.allowedNodes.join(','))
    patch['allowedNodes'] = draft.allowedNodes;
  if (Object.keys(patch).length === 0) return undefined;
  return `kubectl -n ${rule.namespace} patch nodeloadrule ${rule.name} --type merge -p '${JSON.stringify({ spec: patch })}'`;
}

export function whatIfMarks(sim: Simulation | undefined): Map<string, Mark> {
  const marks = new Map<string, Mark>();
  if (!sim) return marks;
  for (const n of sim.nodesBecomingEligible) marks.set(n, 'gain');
  for (const n of sim.nodesBecomingIneligible) marks.set(n.node, 'lose');
  return marks;
}

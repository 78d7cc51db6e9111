/**
 * RuleSpecInput: a NodeLoadRule spec as a what-if argument, validated with the CRD's own constraints
 * (manifests/crd/nodeloadrules.example.com.yaml) so a simulation never accepts a spec the API server
 * would reject. Defaults are the CRD's: maxCPU/maxMemory 80, allowedNodes empty (every node).
 */
import type { LabelSelector } from '../cluster/model.js';
import { DEFAULT_MAX_PERCENT, type RuleSpec } from '../rules/types.js';
import { builder } from './builder.js';
import { badUserInput } from './errors.js';

const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const LabelInput = builder.inputType('LabelInput', {
  fields: (t) => ({ key: t.string({ required: true }), value: t.string({ required: true }) }),
});

const SelectorOperatorRef = builder.enumType('LabelSelectorOperator', {
  values: ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const,
});

const RequirementInput = builder.inputType('LabelSelectorRequirementInput', {
  fields: (t) => ({
    key: t.string({ required: true }),
    operator: t.field({ type: SelectorOperatorRef, required: true }),
    values: t.stringList({ required: false }),
  }),
});

const LabelSelectorInput = builder.inputType('LabelSelectorInput', {
  fields: (t) => ({
    matchLabels: t.field({ type: [LabelInput], required: false }),
    matchExpressions: t.field({ type: [RequirementInput], required: false }),
  }),
});

const BurstGuardInput = builder.inputType('BurstGuardInput', {
  fields: (t) => ({
    maxPlacements: t.int({ required: true, description: '1–10000.' }),
    windowSeconds: t.int({ required: true, description: '1–3600.' }),
  }),
});

export const RuleSpecInput = builder.inputType('RuleSpecInput', {
  description: 'A NodeLoadRule spec; omitted fields take the CRD defaults.',
  fields: (t) => ({
    maxCPU: t.int({ required: false, description: '0–100 percent of allocatable CPU (default 80).' }),
    maxMemory: t.int({ required: false, description: '0–100 percent of allocatable memory (default 80).' }),
    allowedNodes: t.stringList({ required: false, description: 'Node names; empty means every node.' }),
    podSelector: t.field({ type: LabelSelectorInput, required: false }),
    nodeSelector: t.field({ type: LabelSelectorInput, required: false }),
    burst: t.field({ type: BurstGuardInput, required: false }),
  }),
});

export type RuleSpecInputShape = typeof RuleSpecInput.$inferInput;
type SelectorInputShape = typeof LabelSelectorInput.$inferInput;

function percent(value: number | null | undefined, field: string): number {
  if (value === null || value === undefined) return DEFAULT_MAX_PERCENT;
  if (value < 0 || value > 100) throw badUserInput(`${field} must be between 0 and 100, got ${value}`, field);
  return value;
}

function intIn(value: number, min: number, max: number, field: string): number {
  if (value < min || value > max)
    throw badUserInput(`${field} must be between ${min} and ${max}, got ${value}`, field);
  return value;
}

function maxLength(value: string, max: number, field: string): void {
  if (value.length > max) throw badUserInput(`${field} must be at most ${max} characters`, field);
}

function selector(input: SelectorInputShape | null | undefined, field: string): LabelSelector | undefined {
  if (!input) return undefined;
  const sel: LabelSelector = {};
  if (input.matchLabels) {
    if (input.matchLabels.length > 64)
      throw badUserInput(`${field}.matchLabels allows at most 64 labels`, `${field}.matchLabels`);
    sel.matchLabels = {};
    for (const [i, { key, value }] of input.matchLabels.entries()) {
      if (!key)
        throw badUserInput(`${field}.matchLabels[${i}].key must not be empty`, `${field}.matchLabels`);
      maxLength(value, 63, `${field}.matchLabels[${i}].value`);
      sel.matchLabels[key] = value;
    }
  }
  if (input.matchExpressions) {
    const path = `${field}.matchExpressions`;
    if (input.matchExpressions.length > 32)
      throw badUserInput(`${path} allows at most 32 requirements`, path);
    sel.matchExpressions = input.matchExpressions.map((req, i) => {
      const at = `${path}[${i}]`;
      if (!req.key) throw badUserInput(`${at}.key must not be empty`, `${at}.key`);
      maxLength(req.key, 317, `${at}.key`);
      const values = req.values ?? [];
      if (values.length > 256) throw badUserInput(`${at}.values allows at most 256 entries`, `${at}.values`);
      for (const v of values) maxLength(v, 63, `${at}.values`);
      const needsValues = req.operator === 'In' || req.operator === 'NotIn';
      if (needsValues && values.length === 0) {
        throw badUserInput(`${at}: operators In and NotIn require a non-empty values list`, `${at}.values`);
      }
      if (!needsValues && values.length > 0) {
        throw badUserInput(`${at}: operators Exists and DoesNotExist must not have values`, `${at}.values`);
      }
      return { key: req.key, operator: req.operator, ...(needsValues ? { values } : {}) };
    });
  }
  return sel;
}

/** The validated spec with defaults applied, or a BAD_USER_INPUT error naming the field (`spec.maxCPU`). */
export function ruleSpecFromInput(input: RuleSpecInputShape, field = 'spec'): RuleSpec {
  const allowedNodes = input.allowedNodes ?? [];
  if (allowedNodes.length > 1000) {
    throw badUserInput(`${field}.allowedNodes allows at most 1000 names`, `${field}.allowedNodes`);
  }
  for (const name of allowedNodes) {
    if (name.length > 253 || !NODE_NAME.test(name)) {
      throw badUserInput(
        `'${name}' is not a valid node name: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`,
        `${field}.allowedNodes`,
      );
    }
  }
  const spec: RuleSpec = {
    maxCPU: percent(input.maxCPU, `${field}.maxCPU`),
    maxMemory: percent(input.maxMemory, `${field}.maxMemory`),
    allowedNodes,
  };
  const podSelector = selector(input.podSelector, `${field}.podSelector`);
  if (podSelector) spec.podSelector = podSelector;
  const nodeSelector = selector(input.nodeSelector, `${field}.nodeSelector`);
  if (nodeSelector) spec.nodeSelector = nodeSelector;
  if (input.burst) {
    spec.burst = {
      maxPlacements: intIn(input.burst.maxPlacements, 1, 10_000, `${field}.burst.maxPlacements`),
      windowSeconds: intIn(input.burst.windowSeconds, 1, 3600, `${field}.burst.windowSeconds`),
    };
  }
  return spec;
}

/**
 * Small object types shared by several type groups: resources, labels, taints, selectors, conditions.
 * Backed directly by the core's plain data (cluster/model.ts, rules/types.ts): no copies are made.
 */
import type {
  CpuMem,
  LabelSelector,
  LabelSelectorRequirement,
  NodeResources,
  Taint,
} from '../cluster/model.js';
import { formatCpu, formatMemory } from '../cluster/quantity.js';
import type { RuleCondition } from '../rules/types.js';
import { builder } from './builder.js';

export interface KeyValue {
  key: string;
  value: string;
}

/** Label maps become sorted key/value lists: GraphQL has no map type and stable order keeps diffs quiet. */
export function keyValues(map: Record<string, string> | undefined): KeyValue[] {
  return Object.entries(map ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value }));
}

export const KeyValueRef = builder.objectRef<KeyValue>('Label').implement({
  description: 'A label (or selector matchLabels entry).',
  fields: (t) => ({ key: t.exposeString('key'), value: t.exposeString('value') }),
});

export const ResourcesRef = builder.objectRef<CpuMem>('Resources').implement({
  description: 'CPU and memory: exact numbers plus Kubernetes quantity strings for display.',
  fields: (t) => ({
    cpuMilli: t.exposeInt('cpuMilli', { description: 'Millicores.' }),
    memoryBytes: t.field({ type: 'SafeInt', resolve: (r) => r.memoryBytes }),
    cpu: t.string({ description: 'e.g. "500m", "2".', resolve: (r) => formatCpu(r.cpuMilli) }),
    memory: t.string({ description: 'e.g. "512Mi".', resolve: (r) => formatMemory(r.memoryBytes) }),
  }),
});

export const NodeResourcesRef = builder.objectRef<NodeResources>('NodeResources').implement({
  fields: (t) => ({
    cpuMilli: t.exposeInt('cpuMilli'),
    memoryBytes: t.field({ type: 'SafeInt', resolve: (r) => r.memoryBytes }),
    cpu: t.string({ resolve: (r) => formatCpu(r.cpuMilli) }),
    memory: t.string({ resolve: (r) => formatMemory(r.memoryBytes) }),
    pods: t.exposeInt('pods'),
  }),
});

export const TaintRef = builder.objectRef<Taint>('Taint').implement({
  fields: (t) => ({
    key: t.exposeString('key'),
    value: t.string({ nullable: true, resolve: (x) => x.value ?? null }),
    effect: t.exposeString('effect'),
  }),
});

export const SelectorRequirementRef = builder
  .objectRef<LabelSelectorRequirement>('LabelSelectorRequirement')
  .implement({
    fields: (t) => ({
      key: t.exposeString('key'),
      operator: t.exposeString('operator', { description: 'In, NotIn, Exists or DoesNotExist.' }),
      values: t.stringList({ resolve: (r) => r.values ?? [] }),
    }),
  });

export const LabelSelectorRef = builder.objectRef<LabelSelector>('LabelSelector').implement({
  description: 'metav1.LabelSelector: matchLabels and matchExpressions are ANDed; empty matches everything.',
  fields: (t) => ({
    matchLabels: t.field({ type: [KeyValueRef], resolve: (s) => keyValues(s.matchLabels) }),
    matchExpressions: t.field({ type: [SelectorRequirementRef], resolve: (s) => s.matchExpressions ?? [] }),
  }),
});

export const ConditionStatusRef = builder.enumType('ConditionStatus', {
  values: ['True', 'False', 'Unknown'] as const,
});

export const ConditionRef = builder.objectRef<RuleCondition>('Condition').implement({
  description: 'A metav1.Condition.',
  fields: (t) => ({
    type: t.exposeString('type'),
    status: t.field({ type: ConditionStatusRef, resolve: (c) => c.status }),
    reason: t.exposeString('reason'),
    message: t.exposeString('message'),
    lastTransitionTime: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (c) => c.lastTransitionTime || null,
    }),
    observedGeneration: t.exposeInt('observedGeneration'),
  }),
});

/** Why a node is not eligible, in kube-scheduler's style (rules/types.ts Reason). */
import type { Reason } from '../rules/types.js';
import { builder } from './builder.js';

export const ReasonCodeRef = builder.enumType('ReasonCode', {
  values: {
    NotAllowed: { description: "Not in the rule's allowedNodes." },
    NodeSelectorMismatch: { description: "Node labels do not match the rule's nodeSelector." },
    CPUThresholdExceeded: {},
    MemoryThresholdExceeded: {},
    LoadUnavailable: { description: 'Metrics stale or missing under fail-closed, or no load figure yet.' },
  } as const,
});

export const ReasonRef = builder.objectRef<Reason>('Reason').implement({
  fields: (t) => ({
    code: t.field({ type: ReasonCodeRef, resolve: (r) => r.code }),
    rule: t.exposeString('rule', { description: 'The rule name.' }),
    message: t.exposeString('message', { description: 'e.g. "cpu 91% > maxCPU 80%".' }),
    value: t.float({
      nullable: true,
      description: 'Threshold reasons: the load, in percent.',
      resolve: (r) => r.value ?? null,
    }),
    threshold: t.float({
      nullable: true,
      description: 'Threshold reasons: the limit, in percent.',
      resolve: (r) => r.threshold ?? null,
    }),
    margin: t.float({
      nullable: true,
      description: 'Threshold reasons: how far over the limit, in percentage points (value - threshold).',
      resolve: (r) => (r.value !== undefined && r.threshold !== undefined ? r.value - r.threshold : null),
    }),
  }),
});

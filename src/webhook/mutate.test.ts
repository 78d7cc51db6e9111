import { applyPatch, deepClone, type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import type { LabelSelector } from '../cluster/model.js';
import type { NodeLoadRule } from '../rules/types.js';
import { NOT_STEERED_ANNOTATION } from './gate.js';
import {
  type MutationOptions,
  mutatePod,
  NO_NODE_ALLOWED_KEY,
  RULES_ANNOTATION,
  restrictionFor,
} from './mutate.js';
import type { PodObject } from './review.js';
import { webhookNode } from './testing.js';

const OPTS: MutationOptions = { schedulerName: 'nodeload-scheduler', overrideExplicitScheduler: false };
const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';

function rule(
  name: string,
  spec: { allowedNodes?: string[]; nodeSelector?: LabelSelector } = {},
): NodeLoadRule {
  return {
    namespace: 'team',
    name,
    uid: `uid-${name}`,
    generation: 1,
    resourceVersion: '1',
    creationTimestamp: '',
    spec: {
      maxCPU: 80,
      maxMemory: 80,
      allowedNodes: spec.allowedNodes ?? [],
      nodeSelector: spec.nodeSelector,
    },
  };
}

const node = webhookNode;

// biome-ignore lint/suspicious/noExplicitAny: test fixtures are raw JSON pods.
function pod(spec: Record<string, any> = {}, metadata: Record<string, any> = {}): PodObject {
  // The raw pod (as the API server sends it); mutatePod reads only the fields PodObject types.
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'team', ...metadata },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
  } as PodObject;
}

/** Applies the patch with fast-json-patch's validation (fails on "add" under a missing parent). */
function apply(p: PodObject, patch: unknown[]): PodObject {
  return applyPatch(deepClone(p), patch as Operation[], true, false).newDocument as PodObject;
}

function terms(p: PodObject) {
  return p.spec.affinity?.nodeAffinity?.[REQUIRED]?.nodeSelectorTerms;
}

const name = (n: string) => ({ key: 'metadata.name', operator: 'In', values: [n] });

describe('mutatePod', () => {
  const cases: {
    what: string;
    pod: PodObject;
    rules: NodeLoadRule[];
    opts?: Partial<MutationOptions>;
    scheduler: string | undefined;
    terms: unknown;
    changes: string[];
  }[] = [
    {
      what: 'pod without affinity, rule listing two nodes: one term per node',
      pod: pod(),
      rules: [rule('r1', { allowedNodes: ['n2', 'n1'] })],
      scheduler: 'nodeload-scheduler',
      terms: [{ matchFields: [name('n1')] }, { matchFields: [name('n2')] }],
      changes: ['schedulerName', 'affinity', 'annotation'],
    },
    {
      what: 'pod terms are ORed: the restriction goes into every term',
      pod: pod({
        affinity: {
          nodeAffinity: {
            [REQUIRED]: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
                { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
              ],
            },
          },
        },
      }),
      rules: [rule('r1', { nodeSelector: { matchLabels: { tier: 'gold' } } })],
      scheduler: 'nodeload-scheduler',
      terms: [
        {
          matchExpressions: [
            { key: 'zone', operator: 'In', values: ['a'] },
            { key: 'tier', operator: 'In', values: ['gold'] },
          ],
        },
        {
          matchExpressions: [
            { key: 'zone', operator: 'In', values: ['b'] },
            { key: 'tier', operator: 'In', values: ['gold'] },
          ],
        },
      ],
      changes: ['schedulerName', 'affinity', 'annotation'],
    },
    {
      what: 'two pod terms × two allowed nodes = four terms, matchFields kept',
      pod: pod({
        affinity: {
          nodeAffinity: {
            [REQUIRED]: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
                { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n9'] }] },
              ],
            },
          },
        },
      }),
      rules: [rule('r1', { allowedNodes: ['n1', 'n2'] })],
      scheduler: 'nodeload-scheduler',
      terms: [
        { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }], matchFields: [name('n1')] },
        { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }], matchFields: [name('n2')] },
        { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n9'] }, name('n1')] },
        { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n9'] }, name('n2')] },
      ],
      changes: ['schedulerName', 'affinity', 'annotation'],
    },
    {
      what: 'allowedNodes of several rules intersect; nodeSelector expressions are kept as they are',
      pod: pod({ schedulerName: 'default-scheduler' }),
      rules: [
        rule('a', { allowedNodes: ['n1', 'n2', 'n3'] }),
        rule('b', {
          allowedNodes: ['n3', 'n2'],
          nodeSelector: { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] },
        }),
      ],
      scheduler: 'nodeload-scheduler',
      terms: [
        { matchExpressions: [{ key: 'gpu', operator: 'Exists' }], matchFields: [name('n2')] },
        { matchExpressions: [{ key: 'gpu', operator: 'Exists' }], matchFields: [name('n3')] },
      ],
      changes: ['schedulerName', 'affinity', 'annotation'],
    },
    {
      what: 'a rule without node restriction: scheduler and annotation only',
      pod: pod(),
      rules: [rule('r1')],
      scheduler: 'nodeload-scheduler',
      terms: undefined,
      changes: ['schedulerName', 'annotation'],
    },
    {
      what: 'an explicitly chosen scheduler is kept',
      pod: pod({ schedulerName: 'batch-scheduler' }),
      rules: [rule('r1', { allowedNodes: ['n1'] })],
      scheduler: 'batch-scheduler',
      terms: [{ matchFields: [name('n1')] }],
      changes: ['affinity', 'annotation'],
    },
    {
      what: 'an explicitly chosen scheduler is overridden when configured',
      pod: pod({ schedulerName: 'batch-scheduler' }),
      rules: [rule('r1', { allowedNodes: ['n1'] })],
      opts: { overrideExplicitScheduler: true },
      scheduler: 'nodeload-scheduler',
      terms: [{ matchFields: [name('n1')] }],
      changes: ['schedulerName', 'affinity', 'annotation'],
    },
    {
      what: 'a term already pinning an allowed node is narrower than the rule: left alone',
      pod: pod(
        {
          schedulerName: 'nodeload-scheduler',
          affinity: { nodeAffinity: { [REQUIRED]: { nodeSelectorTerms: [{ matchFields: [name('n2')] }] } } },
        },
        { annotations: { other: 'x' } },
      ),
      rules: [rule('r1', { allowedNodes: ['n1', 'n2'] })],
      scheduler: 'nodeload-scheduler',
      terms: [{ matchFields: [name('n2')] }],
      changes: ['annotation'],
    },
    {
      what: 'invalid node names cannot match any node and are left out',
      pod: pod(),
      rules: [rule('r1', { allowedNodes: ['n1', 'Not_A_Node'] })],
      scheduler: 'nodeload-scheduler',
      terms: [{ matchFields: [name('n1')] }],
      changes: ['schedulerName', 'affinity', 'annotation'],
    },
  ];

  it.each(cases)('$what', (c) => {
    const m = mutatePod(c.pod, c.rules, { ...OPTS, ...c.opts });
    expect(m.changes).toEqual(c.changes);
    const out = apply(c.pod, m.patch);
    expect(out.spec.schedulerName).toBe(c.scheduler);
    expect(terms(out)).toEqual(c.terms);
    expect(out.metadata.annotations?.[RULES_ANNOTATION]).toBe(
      c.rules
        .map((r) => r.name)
        .sort()
        .join(','),
    );
    // Idempotent: the mutated pod needs nothing more.
    expect(mutatePod(out, c.rules, { ...OPTS, ...c.opts }).patch).toEqual([]);
  });

  it('adds missing parents whole: no annotations map, no affinity', () => {
    const m = mutatePod(pod(), [rule('r1', { allowedNodes: ['n1'] })], OPTS);
    expect(m.patch).toEqual([
      { op: 'add', path: '/spec/schedulerName', value: 'nodeload-scheduler' },
      {
        op: 'add',
        path: '/spec/affinity',
        value: { nodeAffinity: { [REQUIRED]: { nodeSelectorTerms: [{ matchFields: [name('n1')] }] } } },
      },
      { op: 'add', path: '/metadata/annotations', value: { [RULES_ANNOTATION]: 'r1' } },
    ]);
  });

  it('escapes the annotation key when the annotations map exists', () => {
    const m = mutatePod(
      pod({ schedulerName: 'nodeload-scheduler' }, { annotations: { a: 'b' } }),
      [rule('r1')],
      OPTS,
    );
    expect(m.patch).toEqual([
      { op: 'add', path: '/metadata/annotations/nodeload.example.com~1rules', value: 'r1' },
    ]);
  });

  it.each([
    {
      what: 'pod anti-affinity only',
      affinity: { podAntiAffinity: { x: 1 } },
      path: '/spec/affinity/nodeAffinity',
    },
    {
      what: 'preferred node affinity only',
      affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } },
      path: `/spec/affinity/nodeAffinity/${REQUIRED}`,
    },
    { what: 'null affinity', affinity: null, path: '/spec/affinity' },
  ])('merges into $what without touching the rest', ({ affinity, path }) => {
    const p = pod({ affinity });
    const m = mutatePod(p, [rule('r1', { allowedNodes: ['n1'] })], OPTS);
    expect(m.patch.find((o) => o.path.startsWith('/spec/affinity'))?.path).toBe(path);
    const out = apply(p, m.patch);
    expect(terms(out)).toEqual([{ matchFields: [name('n1')] }]);
    const outAffinity = out.spec.affinity as Record<string, object> | undefined;
    for (const [k, v] of Object.entries(affinity ?? {})) expect(outAffinity?.[k]).toMatchObject(v);
  });

  it('rules with disjoint allowedNodes: an unsatisfiable term and a warning', () => {
    const rules = [rule('a', { allowedNodes: ['n1'] }), rule('b', { allowedNodes: ['n2'] })];
    const m = mutatePod(pod(), rules, OPTS);
    const out = apply(pod(), m.patch);
    expect(terms(out)).toEqual([
      {
        matchExpressions: [
          { key: NO_NODE_ALLOWED_KEY, operator: 'Exists' },
          { key: NO_NODE_ALLOWED_KEY, operator: 'DoesNotExist' },
        ],
      },
    ]);
    expect(m.warnings.join()).toMatch(/NodeLoadRule "a", NodeLoadRule "b" allow no node/);
    expect(mutatePod(out, rules, OPTS).patch).toEqual([]);
  });

  it('warns when the rules allow none of the known nodes', () => {
    const rules = [rule('gold', { nodeSelector: { matchLabels: { tier: 'gold' } } })];
    expect(
      mutatePod(pod(), rules, OPTS, new Map([['n1', node('n1', { tier: 'silver' })]])).warnings,
    ).toHaveLength(1);
    expect(
      mutatePod(pod(), rules, OPTS, new Map([['n1', node('n1', { tier: 'gold' })]])).warnings,
    ).toHaveLength(0);
  });

  it('warns when an explicit scheduler is kept', () => {
    const m = mutatePod(pod({ schedulerName: 'other' }), [rule('r1')], OPTS);
    expect(m.warnings).toEqual([expect.stringMatching(/^scheduler "other" kept/)]);
    expect(m.warnings[0]?.length).toBeLessThanOrEqual(120);
  });

  it('keeps empty terms (they match no node) and restricts the others', () => {
    const p = pod({
      affinity: {
        nodeAffinity: {
          [REQUIRED]: { nodeSelectorTerms: [{}, { matchExpressions: [{ key: 'z', operator: 'Exists' }] }] },
        },
      },
    });
    const out = apply(p, mutatePod(p, [rule('r1', { allowedNodes: ['n1'] })], OPTS).patch);
    expect(terms(out)).toEqual([
      {},
      { matchExpressions: [{ key: 'z', operator: 'Exists' }], matchFields: [name('n1')] },
    ]);
  });
});

describe('mutatePod: not steered (capability gate)', () => {
  const REASONS = ['DynamicResources: pod uses ResourceClaim "gpu"'];
  const rules = [rule('r1', { allowedNodes: ['n1'] })];

  it.each([
    { what: 'no schedulerName', spec: {}, scheduler: undefined, override: false },
    {
      what: 'default-scheduler',
      spec: { schedulerName: 'default-scheduler' },
      scheduler: 'default-scheduler',
      override: false,
    },
    {
      what: 'an explicit scheduler, even with override',
      spec: { schedulerName: 'batch' },
      scheduler: 'batch',
      override: true,
    },
    {
      what: 'nodeload-scheduler chosen by the pod (kept: its author asked)',
      spec: { schedulerName: 'nodeload-scheduler' },
      scheduler: 'nodeload-scheduler',
      override: false,
    },
  ])(
    '$what: scheduler untouched, affinity and both annotations set, idempotent',
    ({ spec, scheduler, override }) => {
      const p = pod(spec);
      const opts = { ...OPTS, overrideExplicitScheduler: override };
      const m = mutatePod(p, rules, opts, undefined, REASONS);
      expect(m.changes).toEqual(['affinity', 'annotation']);
      const out = apply(p, m.patch);
      expect(out.spec.schedulerName).toBe(scheduler);
      expect(terms(out)).toEqual([{ matchFields: [name('n1')] }]);
      expect(out.metadata.annotations).toEqual({
        [RULES_ANNOTATION]: 'r1',
        [NOT_STEERED_ANNOTATION]: REASONS[0],
      });
      expect(m.warnings).toHaveLength(1);
      expect(m.warnings[0]).toMatch(/DynamicResources/);
      expect(m.warnings[0]?.length).toBeLessThanOrEqual(120);
      expect(mutatePod(out, rules, opts, undefined, REASONS).patch).toEqual([]);
    },
  );

  it('several reasons are joined with "; "; an existing annotations map gets member adds', () => {
    const p = pod({}, { annotations: { other: 'x' } });
    const reasons = [...REASONS, 'DynamicResources: pod uses ResourceClaim "gpu"'];
    const m = mutatePod(p, [rule('r1')], OPTS, undefined, reasons);
    expect(m.patch).toEqual([
      { op: 'add', path: '/metadata/annotations/nodeload.example.com~1rules', value: 'r1' },
      {
        op: 'add',
        path: '/metadata/annotations/nodeload.example.com~1not-steered',
        value: reasons.join('; '),
      },
    ]);
  });

  it('a steerable pod loses a stale not-steered annotation (copied from a gated pod)', () => {
    const p = pod({}, { annotations: { [RULES_ANNOTATION]: 'r1', [NOT_STEERED_ANNOTATION]: REASONS[0] } });
    const m = mutatePod(p, [rule('r1')], OPTS);
    expect(m.patch).toEqual([
      { op: 'add', path: '/spec/schedulerName', value: 'nodeload-scheduler' },
      { op: 'remove', path: '/metadata/annotations/nodeload.example.com~1not-steered' },
    ]);
    const out = apply(p, m.patch);
    expect(out.metadata.annotations).toEqual({ [RULES_ANNOTATION]: 'r1' });
    expect(mutatePod(out, [rule('r1')], OPTS).patch).toEqual([]);
  });

  it('changed reasons replace the annotation', () => {
    const p = pod({}, { annotations: { [RULES_ANNOTATION]: 'r1', [NOT_STEERED_ANNOTATION]: 'old' } });
    expect(mutatePod(p, [rule('r1')], OPTS, undefined, REASONS).patch).toEqual([
      { op: 'add', path: '/metadata/annotations/nodeload.example.com~1not-steered', value: REASONS[0] },
    ]);
  });
});

describe('restrictionFor', () => {
  it('translates matchLabels and expressions, deduplicating identical requirements', () => {
    const sel: LabelSelector = {
      matchLabels: { b: '2', a: '1' },
      matchExpressions: [{ key: 'c', operator: 'NotIn', values: ['x'] }],
    };
    expect(restrictionFor([rule('r1', { nodeSelector: sel }), rule('r2', { nodeSelector: sel })])).toEqual({
      labelRequirements: [
        { key: 'a', operator: 'In', values: ['1'] },
        { key: 'b', operator: 'In', values: ['2'] },
        { key: 'c', operator: 'NotIn', values: ['x'] },
      ],
    });
  });
});

import { describe, expect, it } from 'vitest';
import { CRD_MANIFEST_PATH, CRD_NAME, loadCrdManifest } from './crd.js';
import { DEFAULT_MAX_PERCENT, RULE_GROUP, RULE_KIND, RULE_PLURAL, RULE_VERSION } from './types.js';

// biome-ignore lint/suspicious/noExplicitAny: walking an OpenAPI schema.
type Schema = any;

/** The original design's schema (seed nodeloadrule-crd.yaml): ours must accept whatever it accepted in range. */
const ORIGINAL_SCHEMA: Schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        maxCPU: { type: 'integer' },
        maxMemory: { type: 'integer' },
        allowedNodes: { type: 'array', items: { type: 'string' } },
      },
    },
  },
};

/** The original design's example rule (seed nodeloadrule-example.yaml). */
const ORIGINAL_EXAMPLE = {
  apiVersion: 'example.com/v1',
  kind: 'NodeLoadRule',
  metadata: { name: 'web-tier', namespace: 'default' },
  spec: { maxCPU: 80, maxMemory: 75, allowedNodes: ['node-a', 'node-b'] },
};

const crd = loadCrdManifest() as Schema;
const version = crd.spec.versions[0];
const schema: Schema = version.schema.openAPIV3Schema;
const specProps = schema.properties.spec.properties;

/**
 * The structural subset of OpenAPI validation the API server applies that this schema uses (not CEL).
 * Returns the paths that fail.
 */
function violations(value: unknown, s: Schema, path = ''): string[] {
  const out: string[] = [];
  const typeOk =
    (s.type === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) ||
    (s.type === 'array' && Array.isArray(value)) ||
    (s.type === 'string' && typeof value === 'string') ||
    (s.type === 'integer' && Number.isInteger(value)) ||
    (s.type === 'number' && typeof value === 'number') ||
    s.type === undefined;
  if (!typeOk) return [`${path}: type`];
  if (s.enum && !s.enum.includes(value)) out.push(`${path}: enum`);
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) out.push(`${path}: minimum`);
    if (s.maximum !== undefined && value > s.maximum) out.push(`${path}: maximum`);
  }
  if (typeof value === 'string' && s.maxLength !== undefined && value.length > s.maxLength)
    out.push(`${path}: maxLength`);
  if (Array.isArray(value)) {
    if (s.maxItems !== undefined && value.length > s.maxItems) out.push(`${path}: maxItems`);
    value.forEach((v, i) => {
      out.push(...violations(v, s.items, `${path}[${i}]`));
    });
  }
  if (s.type === 'object' && typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    for (const key of s.required ?? []) if (!(key in obj)) out.push(`${path}.${key}: required`);
    for (const [key, v] of Object.entries(obj)) {
      const sub =
        s.properties?.[key] ??
        (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
      if (sub) out.push(...violations(v, sub, `${path}.${key}`));
    }
  }
  return out;
}

describe('NodeLoadRule CRD manifest', () => {
  it('is found next to the sources and names the resource the code uses', () => {
    expect(CRD_MANIFEST_PATH).toMatch(/manifests\/crd\/nodeloadrules\.example\.com\.yaml$/);
    expect(crd.metadata.name).toBe(CRD_NAME);
    expect(crd.spec.group).toBe(RULE_GROUP);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toMatchObject({
      plural: RULE_PLURAL,
      singular: 'nodeloadrule',
      kind: RULE_KIND,
      shortNames: ['nlr'],
      categories: ['nodeload'],
    });
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({
      name: RULE_VERSION,
      served: true,
      storage: true,
      subresources: { status: {} },
    });
  });

  it('has the printer columns', () => {
    expect(version.additionalPrinterColumns.map((c: Schema) => [c.name, c.jsonPath])).toEqual([
      ['MaxCPU', '.spec.maxCPU'],
      ['MaxMemory', '.spec.maxMemory'],
      ['Eligible', '.status.eligibleCount'],
      ['Ready', '.status.conditions[?(@.type=="Ready")].status'],
      ['Allowed', '.spec.allowedNodes'],
      ['Metrics', '.status.conditions[?(@.type=="MetricsAvailable")].reason'],
      ['Age', '.metadata.creationTimestamp'],
    ]);
  });

  it('keeps every field of the original schema with the same type', () => {
    const walk = (orig: Schema, ours: Schema, path: string) => {
      expect(ours?.type, path).toBe(orig.type);
      for (const [key, sub] of Object.entries(orig.properties ?? {}))
        walk(sub, ours.properties?.[key], `${path}.${key}`);
      if (orig.items) walk(orig.items, ours.items, `${path}[]`);
    };
    walk(ORIGINAL_SCHEMA, schema, '');
  });

  it('defaults the thresholds to the original design value and allows duplicate node names', () => {
    expect(specProps.maxCPU.default).toBe(DEFAULT_MAX_PERCENT);
    expect(specProps.maxMemory.default).toBe(DEFAULT_MAX_PERCENT);
    expect(schema.properties.spec.default).toEqual({});
    expect(specProps.allowedNodes['x-kubernetes-list-type']).toBe('atomic');
  });

  it.each([
    { name: 'the original example', obj: ORIGINAL_EXAMPLE, want: [] },
    { name: 'no spec at all', obj: { metadata: { name: 'x' } }, want: [] },
    {
      name: 'every new field',
      obj: {
        spec: {
          maxCPU: 0,
          maxMemory: 100,
          podSelector: {
            matchLabels: { app: 'web' },
            matchExpressions: [{ key: 'tier', operator: 'Exists' }],
          },
          nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] },
          burst: { maxPlacements: 5, windowSeconds: 30 },
        },
      },
      want: [],
    },
    { name: 'maxCPU above 100', obj: { spec: { maxCPU: 150 } }, want: ['.spec.maxCPU: maximum'] },
    { name: 'negative maxMemory', obj: { spec: { maxMemory: -1 } }, want: ['.spec.maxMemory: minimum'] },
    { name: 'fractional maxCPU', obj: { spec: { maxCPU: 80.5 } }, want: ['.spec.maxCPU: type'] },
    {
      name: 'incomplete burst',
      obj: { spec: { burst: { maxPlacements: 5 } } },
      want: ['.spec.burst.windowSeconds: required'],
    },
    {
      name: 'burst window too long',
      obj: { spec: { burst: { maxPlacements: 5, windowSeconds: 7200 } } },
      want: ['.spec.burst.windowSeconds: maximum'],
    },
    {
      name: 'unknown selector operator',
      obj: { spec: { podSelector: { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] } } },
      want: ['.spec.podSelector.matchExpressions[0].operator: enum'],
    },
  ])('structural validation: $name', ({ obj, want }) => {
    expect(violations(obj, schema)).toEqual(want);
  });

  it('accepts the status the operator writes', () => {
    const status = {
      observedGeneration: 2,
      eligibleNodes: ['node-a'],
      eligibleCount: 1,
      ineligibleNodes: [{ node: 'node-b', reasons: ['cpu 91% > maxCPU 80%'] }],
      ineligibleCount: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'NodesEligible',
          message: '1 of 2 nodes eligible',
          lastTransitionTime: '2026-11-29T12:00:00Z',
          observedGeneration: 2,
        },
      ],
      lastEvaluationTime: '2026-11-29T12:00:00Z',
      suggestions: [{ node: 'node-a', headroom: 30 }],
    };
    expect(violations({ status }, schema)).toEqual([]);
    expect(schema.properties.status.properties.conditions.items.properties.status.enum).toEqual([
      'True',
      'False',
      'Unknown',
    ]);
  });

  describe('allowedNodes entries must be DNS subdomain names (the CEL rule’s regex)', () => {
    const rule: string = specProps.allowedNodes.items['x-kubernetes-validations'][0].rule;
    const pattern = new RegExp(/self\.matches\('(.*)'\)/.exec(rule)?.[1] ?? 'unparsed');
    it.each([
      ['node-a', true],
      ['ip-10-0-1-2.ec2.internal', true],
      ['a', true],
      ['0', true],
      ['Node-A', false],
      ['node_a', false],
      ['-node', false],
      ['node-', false],
      ['a..b', false],
      ['', false],
    ])('%s → %s', (name, valid) => {
      expect(pattern.test(name)).toBe(valid);
    });
  });
});

// The NodeLoad types and the OpenAPI `kubectl explain` reads come from one set of zod schemas
// (schema.ts); these tests fail when a field of the type, or of an object the API serves, is missing
// from the OpenAPI documents (or has no description there), and when a served object has a field
// the type does not know.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { computeNodeLoad } from '../load/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../load/types.js';
import { NODELOADS } from './api.js';
import { nodeLoadList, nodeLoadObject } from './nodeloads.js';
import { openApiV2, openApiV3GroupVersion } from './openapi.js';
import {
  DEFINITIONS,
  NodeLoadListSchema,
  NodeLoadObjectSchema,
  NodeLoadStatusSchema,
  PREFIX,
} from './schema.js';
import { CREATED, NOW, nodeInfo, rule } from './testing.js';

type Schema = Record<string, unknown>;

const documents: [string, Record<string, Schema>, string][] = [
  ['v2', openApiV2()['definitions'], '#/definitions/'],
  ['v3', openApiV3GroupVersion()['components'].schemas, '#/components/schemas/'],
];

/** The schema a property stands for: follows `$ref`, and the `allOf: [{$ref}]` wrapper v3 uses. */
function resolve(defs: Record<string, Schema>, base: string, s: Schema): Schema {
  const target = (s['$ref'] ?? (s['allOf'] as Schema[] | undefined)?.[0]?.['$ref']) as string | undefined;
  if (!target) return s;
  expect(target.startsWith(base), target).toBe(true);
  const found = defs[target.slice(base.length)];
  expect(found, target).toBeDefined();
  return resolve(defs, base, found as Schema);
}

/** What the zod schema holds once optional and array wrappers are looked through. */
function unwrap(s: z.ZodType): z.ZodType {
  if (s instanceof z.ZodOptional) return unwrap(s.unwrap() as z.ZodType);
  if (s instanceof z.ZodArray) return unwrap(s.element as z.ZodType);
  return s;
}

/** Every field path of the zod object, with the OpenAPI property it must have, recursively. */
function compare(
  defs: Record<string, Schema>,
  base: string,
  type: z.ZodObject,
  api: Schema,
  path: string,
  seen: string[],
): void {
  const properties = (resolve(defs, base, api)['properties'] ?? {}) as Record<string, Schema>;
  for (const [field, fieldType] of Object.entries(type.shape)) {
    const at = `${path}.${field}`;
    seen.push(at);
    const prop = properties[field];
    expect(prop, `${at} is in the type but not in the OpenAPI`).toBeDefined();
    expect(prop?.['description'], `${at} has no description for kubectl explain`).toEqual(
      expect.stringMatching(/\S/),
    );
    let inner = resolve(defs, base, prop as Schema);
    if (inner['type'] === 'array') inner = resolve(defs, base, inner['items'] as Schema);
    const innerType = unwrap(fieldType as z.ZodType);
    if (innerType instanceof z.ZodObject) compare(defs, base, innerType, inner, at, seen);
  }
  expect(Object.keys(properties).sort(), `${path}: OpenAPI fields the type lacks`).toEqual(
    Object.keys(type.shape).sort(),
  );
}

/** Every key path of a served JSON object must resolve to an OpenAPI property. */
function served(defs: Record<string, Schema>, base: string, value: unknown, api: Schema, path: string): void {
  const s = resolve(defs, base, api);
  if (Array.isArray(value)) {
    for (const item of value) served(defs, base, item, s['items'] as Schema, `${path}[]`);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (s['additionalProperties']) return; // a map (labels)
  const properties = (s['properties'] ?? {}) as Record<string, Schema>;
  for (const [k, v] of Object.entries(value)) {
    expect(properties[k], `${path}.${k} is served but not in the OpenAPI`).toBeDefined();
    served(defs, base, v, properties[k] as Schema, `${path}.${k}`);
  }
}

/** A NodeLoad with every optional field present: labels, a metrics sample (usage, window), rules. */
function fullObject() {
  const node = nodeInfo('n1', { labels: { zone: 'a' } });
  const load = computeNodeLoad({
    node,
    pods: [],
    metrics: {
      name: 'n1',
      timestamp: new Date(NOW - 10_000).toISOString(),
      windowSeconds: 20,
      usage: { cpuMilli: 1500, memoryBytes: 2 ** 31 },
    },
    now: NOW,
    options: { ...DEFAULT_LOAD_OPTIONS, metricsServed: true },
  });
  return nodeLoadObject(
    node,
    load,
    [rule('team', 'loose', { maxCPU: 90 }), rule('team', 'tight', { maxCPU: 10 })],
    '7',
  );
}

describe('NodeLoad schema', () => {
  it.each(documents)(
    '%s: every field of the types is in the OpenAPI, with a description',
    (_v, defs, base) => {
      const seen: string[] = [];
      compare(defs, base, NodeLoadObjectSchema, { $ref: `${base}${PREFIX}.NodeLoad` }, 'NodeLoad', seen);
      compare(
        defs,
        base,
        NodeLoadListSchema,
        { $ref: `${base}${PREFIX}.NodeLoadList` },
        'NodeLoadList',
        seen,
      );
      // The walk reached the leaves kubectl explain shows.
      for (const field of ['status.effective.cpu', 'status.ineligibleRules.reasons', 'metadata.labels'])
        expect(seen).toContain(`NodeLoad.${field}`);
      expect(seen).toContain('NodeLoadList.items.status.cpuPercent');
      expect(Object.keys(NodeLoadStatusSchema.shape).length).toBeGreaterThan(15);
    },
  );

  it.each(documents)(
    '%s: a definition for every schema, NodeLoad with its group-version-kind',
    (_v, defs) => {
      expect(Object.keys(defs).sort()).toEqual(Object.keys(DEFINITIONS).sort());
      expect(defs[`${PREFIX}.NodeLoad`]?.['x-kubernetes-group-version-kind']).toEqual([
        { group: 'nodeload.example.com', kind: NODELOADS.kind, version: 'v1alpha1' },
      ]);
      expect(defs[`${PREFIX}.NodeLoadList`]?.['x-kubernetes-group-version-kind']).toEqual([
        { group: 'nodeload.example.com', kind: NODELOADS.listKind, version: 'v1alpha1' },
      ]);
      const properties = defs[`${PREFIX}.NodeLoad`]?.['properties'] as Record<string, Schema> | undefined;
      const metadata = properties?.['metadata'];
      expect(JSON.stringify(metadata)).toContain('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"');
    },
  );

  it.each(documents)('%s: Kubernetes-style types (formats, no closed objects)', (v, defs) => {
    const status = defs[`${PREFIX}.NodeLoadStatus`]?.['properties'] as Record<string, Schema>;
    expect(status['pods']).toEqual({ type: 'integer', format: 'int32', description: expect.any(String) });
    expect(status['cpuPercent']).toMatchObject({ type: 'number', format: 'double' });
    expect(status['timestamp']).toMatchObject({ type: 'string', format: 'date-time' });
    expect(status['source']).toMatchObject({ enum: ['requests', 'metrics', 'metrics+estimate'] });
    const text = JSON.stringify(defs);
    expect(text).not.toContain('"additionalProperties":false');
    expect(text).not.toMatch(/"(const|nullable|anyOf|oneOf|\$schema|\$id)"/);
    if (v === 'v2') expect(text).not.toContain('allOf');
  });

  it('a served NodeLoad (every optional field present) matches the type and the OpenAPI', () => {
    const obj = fullObject();
    expect(obj.status.usage).toBeDefined();
    expect(obj.status.window).toBe('20s');
    expect(obj.status.ineligibleRules).toHaveLength(1);
    expect(obj.metadata.creationTimestamp).toBe(CREATED);
    // Strict schemas: a field the type lacks fails the parse.
    expect(NodeLoadObjectSchema.parse(JSON.parse(JSON.stringify(obj)))).toEqual(obj);
    const list = nodeLoadList(
      [obj, { ...obj, metadata: { ...obj.metadata, name: 'n2' } }],
      { labels: [], fields: [] },
      '9',
      {
        limit: 1,
      },
    );
    expect(list.metadata.continue).toBeDefined();
    expect(NodeLoadListSchema.parse(JSON.parse(JSON.stringify(list)))).toEqual(list);
    for (const [, defs, base] of documents) {
      served(defs, base, obj, { $ref: `${base}${PREFIX}.NodeLoad` }, 'NodeLoad');
      served(defs, base, list, { $ref: `${base}${PREFIX}.NodeLoadList` }, 'NodeLoadList');
    }
  });

  it('refuses a served field the schema does not have', () => {
    const obj = fullObject();
    const extra = { ...obj, status: { ...obj.status, surprise: 1 } };
    expect(NodeLoadObjectSchema.safeParse(extra).success).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList } from './discovery.js';
import { documentHash, OPENAPI_V3_PATH, openApiV2, openApiV3GroupVersion, openApiV3Root } from './openapi.js';

describe('discovery', () => {
  it('lists the group with v1alpha1 preferred', () => {
    const gv = { groupVersion: 'nodeload.example.com/v1alpha1', version: 'v1alpha1' };
    expect(apiGroupList()).toEqual({
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [{ name: 'nodeload.example.com', versions: [gv], preferredVersion: gv }],
    });
    expect(apiGroup()).toMatchObject({
      kind: 'APIGroup',
      name: 'nodeload.example.com',
      preferredVersion: gv,
    });
  });

  it('describes nodeloads as a cluster-scoped, read-only resource', () => {
    expect(apiResourceList()).toEqual({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'nodeload.example.com/v1alpha1',
      resources: [
        {
          name: 'nodeloads',
          singularName: 'nodeload',
          namespaced: false,
          kind: 'NodeLoad',
          verbs: ['get', 'list', 'watch'],
          shortNames: ['nl'],
          categories: ['nodeload'],
        },
      ],
    });
  });

  it.each(['v2', 'v2beta1'] as const)('answers aggregated discovery %s in its own apiVersion', (version) => {
    const doc = aggregatedDiscovery(version);
    expect(doc.apiVersion).toBe(`apidiscovery.k8s.io/${version}`);
    expect(doc.items[0]?.versions[0]?.resources[0]).toEqual({
      resource: 'nodeloads',
      responseKind: { group: 'nodeload.example.com', version: 'v1alpha1', kind: 'NodeLoad' },
      scope: 'Cluster',
      singularResource: 'nodeload',
      verbs: ['get', 'list', 'watch'],
      shortNames: ['nl'],
      categories: ['nodeload'],
    });
  });
});

/** Every "$ref" in the document, anywhere. */
function refs(doc: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string') out.push(x);
        else walk(x);
      }
    }
  };
  walk(doc);
  return out;
}

describe('openapi', () => {
  it.each([
    ['v2', openApiV2(), '#/definitions/', (d: Record<string, unknown>) => d['definitions']],
    [
      'v3',
      openApiV3GroupVersion(),
      '#/components/schemas/',
      (d: Record<string, unknown>) => (d['components'] as { schemas: unknown }).schemas,
    ],
  ])('%s: every $ref resolves and NodeLoad carries its group-version-kind', (_v, doc, base, schemasOf) => {
    const schemas = schemasOf(doc) as Record<string, Record<string, unknown>>;
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(5);
    for (const ref of all) {
      expect(ref.startsWith(base), ref).toBe(true);
      expect(schemas[ref.slice(base.length)], ref).toBeDefined();
    }
    expect(schemas['com.example.nodeload.v1alpha1.NodeLoad']?.['x-kubernetes-group-version-kind']).toEqual([
      { group: 'nodeload.example.com', kind: 'NodeLoad', version: 'v1alpha1' },
    ]);
  });

  it('only serves paths of its own group, since the aggregator merges them into its own', () => {
    for (const doc of [openApiV2(), openApiV3GroupVersion()]) {
      for (const path of Object.keys(doc['paths'] as object)) {
        expect(path.startsWith('/apis/nodeload.example.com/v1alpha1/')).toBe(true);
      }
    }
    const root = openApiV3Root(documentHash(openApiV3GroupVersion()));
    expect(Object.keys(root.paths)).toEqual([OPENAPI_V3_PATH]);
    expect(root.paths[OPENAPI_V3_PATH]?.serverRelativeURL).toMatch(
      /^\/openapi\/v3\/apis\/nodeload\.example\.com\/v1alpha1\?hash=[0-9A-F]{128}$/,
    );
  });

  it('keeps field descriptions next to references in v3 (allOf), where a $ref sibling would be ignored', () => {
    const status = (
      openApiV3GroupVersion()['components'] as {
        schemas: Record<string, { properties: Record<string, unknown> }>;
      }
    ).schemas['com.example.nodeload.v1alpha1.NodeLoadStatus'];
    expect(status?.properties['effective']).toEqual({
      allOf: [{ $ref: '#/components/schemas/com.example.nodeload.v1alpha1.CPUMemory' }],
      description: expect.stringContaining('every decision'),
    });
  });
});

/**
 * OpenAPI for `kubectl explain nodeloads`. The aggregator downloads `/openapi/v3` (a discovery
 * document whose paths it merges into its own, so it must list only our group-version) and proxies
 * `/openapi/v3/apis/<group>/<version>` to us; kubectl explain reads that document first and falls back
 * to the merged `/openapi/v2`, into which the aggregator merges our `/apis/...` paths and definitions
 * (renaming definitions whose name clashes with different content). Both are built from the zod schemas
 * the resource's TypeScript types come from (schema.ts); `x-kubernetes-group-version-kind` is how
 * kubectl finds the type for a resource.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { GROUP, GROUP_VERSION, NODELOADS, VERSION } from './api.js';
import { DEFINITIONS, META, PREFIX } from './schema.js';

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI documents are free-form JSON.
type Schema = Record<string, any>;

const NODELOAD = `${PREFIX}.${NODELOADS.kind}`;
const NODELOAD_LIST = `${PREFIX}.${NODELOADS.listKind}`;

const ref = (name: string, base: string): Schema => ({ $ref: `${base}${name}` });

const gvk = (kind: string) => [{ group: GROUP, kind, version: VERSION }];
const GVK: Record<string, ReturnType<typeof gvk>> = {
  [NODELOAD]: gvk(NODELOADS.kind),
  [NODELOAD_LIST]: gvk(NODELOADS.listKind),
};

const INT32 = { minimum: -(2 ** 31), maximum: 2 ** 31 - 1 };
const INT64 = { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };

/**
 * z.toJSONSchema's output (target OpenAPI 3.0) as Kubernetes writes OpenAPI: integer bounds become
 * int32/int64 formats, objects are open (no `additionalProperties: false`, no empty `properties`) and,
 * in v2, a description sits next to its `$ref` (v3 keeps zod's `allOf: [{$ref}]` wrapper, since a
 * `$ref` sibling is ignored in OpenAPI 3.0).
 */
function kubernetesStyle(schema: Schema, v2: boolean): Schema {
  const out: Schema = { ...schema };
  const each = (xs: Record<string, Schema>) =>
    Object.fromEntries(Object.entries(xs).map(([k, x]) => [k, kubernetesStyle(x, v2)]));
  if (out['properties']) {
    out['properties'] = each(out['properties']);
    if (Object.keys(out['properties']).length === 0) delete out['properties'];
  }
  if (out['items']) out['items'] = kubernetesStyle(out['items'], v2);
  if (out['allOf']) out['allOf'] = (out['allOf'] as Schema[]).map((x) => kubernetesStyle(x, v2));
  const extra = out['additionalProperties'];
  if (extra === false || (typeof extra === 'object' && Object.keys(extra).length === 0))
    delete out['additionalProperties'];
  else if (typeof extra === 'object') out['additionalProperties'] = kubernetesStyle(extra, v2);
  if (out['type'] === 'integer') {
    for (const [format, bounds] of [
      ['int32', INT32],
      ['int64', INT64],
    ] as const) {
      if (out['minimum'] === bounds.minimum && out['maximum'] === bounds.maximum) {
        delete out['minimum'];
        delete out['maximum'];
        out['format'] = format;
      }
    }
  }
  const allOf = out['allOf'] as Schema[] | undefined;
  if (v2 && allOf?.length === 1 && allOf[0]?.['$ref'] && Object.keys(out).length === 2 && out['description'])
    return { $ref: allOf[0]['$ref'], description: out['description'] };
  return out;
}

/** Every schema (schema.ts), with `$ref`s relative to `base` ("#/definitions/" in v2, "#/components/schemas/" in v3). */
export function schemas(base: string): Record<string, Schema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(DEFINITIONS)) registry.add(schema, { id });
  const { schemas: generated } = z.toJSONSchema(registry, {
    target: 'openapi-3.0',
    uri: (id) => `${base}${id}`,
  });
  const out: Record<string, Schema> = {};
  for (const id of Object.keys(DEFINITIONS)) {
    const { $id: _id, ...schema } = generated[id] as Schema;
    out[id] = {
      ...kubernetesStyle(schema, base === '#/definitions/'),
      ...(GVK[id] ? { 'x-kubernetes-group-version-kind': GVK[id] } : {}),
    };
  }
  return out;
}

interface Param {
  name: string;
  in: 'query' | 'path';
  type: 'string' | 'integer' | 'boolean';
  description: string;
}

const LIST_PARAMS: Param[] = [
  {
    name: 'allowWatchBookmarks',
    in: 'query',
    type: 'boolean',
    description: 'Request BOOKMARK watch events.',
  },
  { name: 'continue', in: 'query', type: 'string', description: 'Continue token from a previous page.' },
  { name: 'fieldSelector', in: 'query', type: 'string', description: 'Only metadata.name is supported.' },
  { name: 'labelSelector', in: 'query', type: 'string', description: "Selects by the node's labels." },
  { name: 'limit', in: 'query', type: 'integer', description: 'Maximum number of items per page.' },
  {
    name: 'resourceVersion',
    in: 'query',
    type: 'string',
    description: 'For watch: start after this version.',
  },
  {
    name: 'sendInitialEvents',
    in: 'query',
    type: 'boolean',
    description: 'With watch: send the current objects first, then a BOOKMARK.',
  },
  { name: 'timeoutSeconds', in: 'query', type: 'integer', description: 'Ends a watch after this long.' },
  { name: 'watch', in: 'query', type: 'boolean', description: 'Stream changes instead of listing.' },
];
const NAME_PARAM: Param = { name: 'name', in: 'path', type: 'string', description: 'name of the NodeLoad' };

interface Operation {
  path: string;
  operationId: string;
  description: string;
  action: 'list' | 'get' | 'watch' | 'watchlist';
  params: Param[];
  response: string;
}

const BASE = `/apis/${GROUP_VERSION}`;
const OPERATIONS: Operation[] = [
  {
    path: `${BASE}/${NODELOADS.plural}`,
    operationId: 'listNodeloadExampleComV1alpha1NodeLoad',
    description: 'list or watch objects of kind NodeLoad',
    action: 'list',
    params: LIST_PARAMS,
    response: NODELOAD_LIST,
  },
  {
    path: `${BASE}/${NODELOADS.plural}/{name}`,
    operationId: 'readNodeloadExampleComV1alpha1NodeLoad',
    description: 'read the specified NodeLoad',
    action: 'get',
    params: [NAME_PARAM],
    response: NODELOAD,
  },
  {
    path: `${BASE}/watch/${NODELOADS.plural}`,
    operationId: 'watchNodeloadExampleComV1alpha1NodeLoadList',
    description:
      'watch individual changes to a list of NodeLoad. deprecated: use the watch parameter with a list operation instead.',
    action: 'watchlist',
    params: LIST_PARAMS,
    response: `${META}.WatchEvent`,
  },
  {
    path: `${BASE}/watch/${NODELOADS.plural}/{name}`,
    operationId: 'watchNodeloadExampleComV1alpha1NodeLoad',
    description:
      'watch changes to an object of kind NodeLoad. deprecated: use the watch parameter with a list operation instead, filtered to a single item with the fieldSelector parameter.',
    action: 'watch',
    params: [NAME_PARAM, ...LIST_PARAMS],
    response: `${META}.WatchEvent`,
  },
];

function operationCommon(op: Operation): Schema {
  return {
    description: op.description,
    operationId: op.operationId,
    tags: ['nodeloadExampleCom_v1alpha1'],
    'x-kubernetes-action': op.action,
    'x-kubernetes-group-version-kind': { group: GROUP, kind: NODELOADS.kind, version: VERSION },
  };
}

export function openApiV2(): Schema {
  const base = '#/definitions/';
  const paths: Schema = {};
  for (const op of OPERATIONS) {
    paths[op.path] = {
      get: {
        ...operationCommon(op),
        consumes: ['*/*'],
        produces: ['application/json', 'application/json;stream=watch'],
        schemes: ['https'],
        parameters: op.params.map((p) => ({
          ...p,
          uniqueItems: true,
          ...(p.in === 'path' ? { required: true } : {}),
        })),
        responses: {
          '200': { description: 'OK', schema: ref(op.response, base) },
          '401': { description: 'Unauthorized' },
        },
      },
    };
  }
  return {
    swagger: '2.0',
    info: { title: 'nodeload', version: VERSION },
    paths,
    definitions: schemas(base),
    securityDefinitions: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header' } },
    security: [{ BearerToken: [] }],
  };
}

/** The document for `/openapi/v3/apis/nodeload.example.com/v1alpha1`. */
export function openApiV3GroupVersion(): Schema {
  const base = '#/components/schemas/';
  const paths: Schema = {};
  for (const op of OPERATIONS) {
    paths[op.path] = {
      get: {
        ...operationCommon(op),
        parameters: op.params.map((p) => ({
          name: p.name,
          in: p.in,
          description: p.description,
          ...(p.in === 'path' ? { required: true } : {}),
          schema: { type: p.type, uniqueItems: true },
        })),
        responses: {
          '200': {
            description: 'OK',
            content: {
              'application/json': { schema: ref(op.response, base) },
              'application/json;stream=watch': { schema: ref(op.response, base) },
            },
          },
          '401': { description: 'Unauthorized' },
        },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'nodeload', version: VERSION },
    paths,
    components: {
      schemas: schemas(base),
      securitySchemes: {
        BearerToken: {
          type: 'apiKey',
          description: 'Bearer Token authentication',
          name: 'authorization',
          in: 'header',
        },
      },
    },
  };
}

export const OPENAPI_V3_PATH = `apis/${GROUP_VERSION}`;

/** An ETag-style hash of a document, also used as the `hash` query of its serverRelativeURL. */
export function documentHash(doc: unknown): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase();
}

/** `/openapi/v3`: one path, ours — the aggregator merges these keys into its own root document. */
export function openApiV3Root(groupVersionHash: string): {
  paths: Record<string, { serverRelativeURL: string }>;
} {
  return {
    paths: {
      [OPENAPI_V3_PATH]: { serverRelativeURL: `/openapi/v3/${OPENAPI_V3_PATH}?hash=${groupVersionHash}` },
    },
  };
}

/**
 * OpenAPI for `kubectl explain nodeloads`. The aggregator downloads `/openapi/v3` (a discovery
 * document whose paths it merges into its own, so it must list only our group-version) and proxies
 * `/openapi/v3/apis/<group>/<version>` to us; kubectl explain reads that document first and falls back
 * to the merged `/openapi/v2`, into which the aggregator merges our `/apis/...` paths and definitions
 * (renaming definitions whose name clashes with different content). Both are built from one set of
 * schemas; `x-kubernetes-group-version-kind` is how kubectl finds the type for a resource.
 */
import { createHash } from 'node:crypto';
import { GROUP, GROUP_VERSION, NODELOADS, VERSION } from './api.js';

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI documents are free-form JSON.
type Schema = Record<string, any>;

const PREFIX = 'com.example.nodeload.v1alpha1';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const NODELOAD = `${PREFIX}.${NODELOADS.kind}`;
const NODELOAD_LIST = `${PREFIX}.${NODELOADS.listKind}`;

const ref = (name: string, base: string): Schema => ({ $ref: `${base}${name}` });
const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const int = (description: string): Schema => ({ type: 'integer', format: 'int32', description });
const bool = (description: string): Schema => ({ type: 'boolean', description });
const pct = (description: string): Schema => ({ type: 'number', format: 'double', description });

const gvk = (kind: string) => [{ group: GROUP, kind, version: VERSION }];

/** Every schema, with `$ref`s relative to `base` ("#/definitions/" in v2, "#/components/schemas/" in v3). */
function schemas(base: string): Record<string, Schema> {
  const r = (name: string) => ref(name, base);
  const v3 = base.startsWith('#/components/');
  // A description next to $ref is ignored in OpenAPI 3.0; k8s wraps the $ref in allOf to keep it.
  const field = (name: string, description: string): Schema =>
    v3 ? { allOf: [r(name)], description } : { ...r(name), description };
  const cpuMem = (description: string): Schema => field(`${PREFIX}.CPUMemory`, description);
  return {
    [NODELOAD]: {
      description:
        "NodeLoad is a node's current load as nodeload sees it: requests, metrics, the effective figure every " +
        'scheduling decision uses, and the NodeLoadRules whose pods may be placed on the node. Read-only; one per node.',
      type: 'object',
      properties: {
        apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
        kind: str('Kind is a string value representing the REST resource this object represents.'),
        metadata: field(`${META}.ObjectMeta`, "Standard object's metadata; name is the node's name."),
        status: field(`${PREFIX}.NodeLoadStatus`, "The node's load figures."),
      },
      'x-kubernetes-group-version-kind': gvk(NODELOADS.kind),
    },
    [NODELOAD_LIST]: {
      description: 'NodeLoadList is a list of NodeLoad objects.',
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
        kind: str('Kind is a string value representing the REST resource this object represents.'),
        metadata: field(`${META}.ListMeta`, 'Standard list metadata.'),
        items: { type: 'array', description: 'One NodeLoad per node.', items: r(NODELOAD) },
      },
      'x-kubernetes-group-version-kind': gvk(NODELOADS.listKind),
    },
    [`${PREFIX}.NodeLoadStatus`]: {
      description: "NodeLoadStatus holds a node's load figures.",
      type: 'object',
      properties: {
        capacity: field(`${PREFIX}.NodeResources`, "The node's capacity."),
        allocatable: field(`${PREFIX}.NodeResources`, "The node's allocatable resources: 100%."),
        requested: cpuMem('Sum of the requests of the non-terminal pods bound to the node.'),
        usage: cpuMem('Usage from the NodeMetrics sample (metrics.k8s.io), when there is one.'),
        estimated: cpuMem('Estimated usage of pods bound after the metrics sample was taken.'),
        estimatedPods: int('Number of pods counted in estimated.'),
        effective: cpuMem(
          'The figure every decision uses: usage + estimated with fresh metrics, else requested.',
        ),
        cpuPercent: pct('Effective CPU in percent of allocatable CPU, two decimals.'),
        memoryPercent: pct('Effective memory in percent of allocatable memory, two decimals.'),
        source: str('Where the effective figure comes from: requests, metrics, or metrics+estimate.', {
          enum: ['requests', 'metrics', 'metrics+estimate'],
        }),
        timestamp: str('Time the figure refers to: the metrics sample time, or when it was computed.', {
          format: 'date-time',
        }),
        window: str('Averaging window of the metrics sample, e.g. "20s"; absent without a sample.'),
        pods: int('Non-terminal pods bound to the node.'),
        metricsStale: bool(
          'Metrics are served but the sample is stale or missing; the figure fell back to requests.',
        ),
        unavailable: bool(
          'The load is unknown (stale metrics under the fail-closed policy): rules treat the node as ineligible.',
        ),
        eligibleRules: {
          type: 'array',
          description: 'NodeLoadRules whose pods may be placed on the node now.',
          items: r(`${PREFIX}.RuleReference`),
        },
        ineligibleRules: {
          type: 'array',
          description: 'NodeLoadRules whose pods may not be placed on the node now, with the reasons.',
          items: r(`${PREFIX}.IneligibleRule`),
        },
      },
    },
    [`${PREFIX}.CPUMemory`]: {
      description: 'CPU and memory as Kubernetes quantities.',
      type: 'object',
      properties: { cpu: str('CPU quantity, e.g. "1500m".'), memory: str('Memory quantity, e.g. "2Gi".') },
    },
    [`${PREFIX}.NodeResources`]: {
      description: 'CPU, memory and pods as Kubernetes quantities.',
      type: 'object',
      properties: {
        cpu: str('CPU quantity, e.g. "4".'),
        memory: str('Memory quantity, e.g. "8Gi".'),
        pods: str('Pod count.'),
      },
    },
    [`${PREFIX}.RuleReference`]: {
      description: 'A NodeLoadRule by namespace and name.',
      type: 'object',
      properties: { namespace: str('Namespace of the rule.'), name: str('Name of the rule.') },
    },
    [`${PREFIX}.IneligibleRule`]: {
      description: 'A NodeLoadRule the node is not eligible for, and why.',
      type: 'object',
      properties: {
        namespace: str('Namespace of the rule.'),
        name: str('Name of the rule.'),
        reasons: {
          type: 'array',
          description: 'Why, e.g. "cpu 91% > maxCPU 80%" or "not in allowedNodes".',
          items: { type: 'string' },
        },
      },
    },
    [`${META}.ObjectMeta`]: {
      description: 'ObjectMeta is metadata that all persisted resources must have.',
      type: 'object',
      properties: {
        name: str('Name must be unique within a namespace.'),
        resourceVersion: str(
          'An opaque value that represents the internal version of this object; changes whenever the load figures do.',
        ),
        creationTimestamp: str(
          'CreationTimestamp is a timestamp representing the server time when this object was created.',
          {
            format: 'date-time',
          },
        ),
        labels: {
          type: 'object',
          description: "Map of string keys and values; for a NodeLoad, its node's labels.",
          additionalProperties: { type: 'string' },
        },
      },
    },
    [`${META}.ListMeta`]: {
      description: 'ListMeta describes metadata that synthetic resources must have, including lists.',
      type: 'object',
      properties: {
        resourceVersion: str("String that identifies the server's internal version of this object."),
        continue: str(
          'Set if more items are available: pass it as the continue parameter to get the next page.',
        ),
        remainingItemCount: { type: 'integer', format: 'int64', description: 'Items after this page.' },
      },
    },
    [`${META}.WatchEvent`]: {
      description: 'Event represents a single event to a watched resource.',
      type: 'object',
      required: ['type', 'object'],
      properties: {
        type: str('ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.'),
        object: { type: 'object', description: 'The object (a Status for ERROR).' },
      },
    },
  };
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

/**
 * The NodeLoad resource's one definition: these zod schemas give both its TypeScript types (z.infer,
 * re-exported by nodeloads.ts) and its OpenAPI v2/v3 definitions (openapi.ts turns them into
 * documents with z.toJSONSchema), so `kubectl explain nodeloads` describes exactly what is served.
 * Every field carries its description: that is the text kubectl explain shows.
 *
 * Objects are strict, so a parse of a served object (in the tests) refuses a field the schema lacks.
 */
import { z } from 'zod';
import { GROUP_VERSION } from './api.js';

export const PREFIX = 'com.example.nodeload.v1alpha1';
export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

const str = (description: string) => z.string().describe(description);
const dateTime = (description: string) => z.string().meta({ format: 'date-time', description });
const int32 = (description: string) => z.int32().describe(description);
const double = (description: string) => z.number().meta({ format: 'double', description });
const bool = (description: string) => z.boolean().describe(description);

const API_VERSION = 'APIVersion defines the versioned schema of this representation of an object.';
const KIND = 'Kind is a string value representing the REST resource this object represents.';

export const CpuMemQuantitiesSchema = z
  .strictObject({
    cpu: str('CPU quantity, e.g. "1500m".'),
    memory: str('Memory quantity, e.g. "2Gi".'),
  })
  .describe('CPU and memory as Kubernetes quantities.');

export const NodeResourceQuantitiesSchema = z
  .strictObject({
    cpu: str('CPU quantity, e.g. "4".'),
    memory: str('Memory quantity, e.g. "8Gi".'),
    pods: str('Pod count.'),
  })
  .describe('CPU, memory and pods as Kubernetes quantities.');

export const RuleRefSchema = z
  .strictObject({
    namespace: str('Namespace of the rule.'),
    name: str('Name of the rule.'),
  })
  .describe('A NodeLoadRule by namespace and name.');

export const IneligibleRuleSchema = z
  .strictObject({
    namespace: str('Namespace of the rule.'),
    name: str('Name of the rule.'),
    reasons: z.array(z.string()).describe('Why, e.g. "cpu 91% > maxCPU 80%" or "not in allowedNodes".'),
  })
  .describe('A NodeLoadRule the node is not eligible for, and why.');

/** Where the effective figure comes from (load/types.ts LoadSource: nodeLoadStatus assigns one to it). */
export const LoadSourceSchema = z
  .enum(['requests', 'metrics', 'metrics+estimate'])
  .describe('Where the effective figure comes from: requests, metrics, or metrics+estimate.');

const cpuMem = (description: string) => CpuMemQuantitiesSchema.describe(description);

export const NodeLoadStatusSchema = z
  .strictObject({
    capacity: NodeResourceQuantitiesSchema.describe("The node's capacity."),
    allocatable: NodeResourceQuantitiesSchema.describe("The node's allocatable resources: 100%."),
    requested: cpuMem('Sum of the requests of the non-terminal pods bound to the node.'),
    usage: cpuMem('Usage from the NodeMetrics sample (metrics.k8s.io), when there is one.').optional(),
    estimated: cpuMem('Estimated usage of pods bound after the metrics sample was taken.'),
    estimatedPods: int32('Number of pods counted in estimated.'),
    effective: cpuMem(
      'The figure every decision uses: usage + estimated with fresh metrics, else requested.',
    ),
    cpuPercent: double('Effective CPU in percent of allocatable CPU, two decimals.'),
    memoryPercent: double('Effective memory in percent of allocatable memory, two decimals.'),
    source: LoadSourceSchema,
    timestamp: dateTime('Time the figure refers to: the metrics sample time, or when it was computed.'),
    window: str('Averaging window of the metrics sample, e.g. "20s"; absent without a sample.').optional(),
    pods: int32('Non-terminal pods bound to the node.'),
    metricsStale: bool(
      'Metrics are served but the sample is stale or missing; the figure fell back to requests.',
    ),
    unavailable: bool(
      'The load is unknown (stale metrics under the fail-closed policy): rules treat the node as ineligible.',
    ),
    eligibleRules: z.array(RuleRefSchema).describe('NodeLoadRules whose pods may be placed on the node now.'),
    ineligibleRules: z
      .array(IneligibleRuleSchema)
      .describe('NodeLoadRules whose pods may not be placed on the node now, with the reasons.'),
  })
  .describe("NodeLoadStatus holds a node's load figures.");

export const ObjectMetaSchema = z
  .strictObject({
    name: str('Name must be unique within a namespace.'),
    resourceVersion: str(
      'An opaque value that represents the internal version of this object; changes whenever the load figures do.',
    ),
    creationTimestamp: dateTime(
      'CreationTimestamp is a timestamp representing the server time when this object was created.',
    ),
    labels: z
      .record(z.string(), z.string())
      .describe("Map of string keys and values; for a NodeLoad, its node's labels.")
      .optional(),
  })
  .describe('ObjectMeta is metadata that all persisted resources must have.');

export const ListMetaSchema = z
  .strictObject({
    resourceVersion: str("String that identifies the server's internal version of this object."),
    continue: str(
      'Set if more items are available: pass it as the continue parameter to get the next page.',
    ).optional(),
    remainingItemCount: z.int().describe('Items after this page.').optional(),
  })
  .describe('ListMeta describes metadata that synthetic resources must have, including lists.');

export const NodeLoadObjectSchema = z
  .strictObject({
    apiVersion: z.literal(GROUP_VERSION).describe(API_VERSION),
    kind: z.literal('NodeLoad').describe(KIND),
    metadata: ObjectMetaSchema.describe("Standard object's metadata; name is the node's name."),
    status: NodeLoadStatusSchema.describe("The node's load figures."),
  })
  .describe(
    "NodeLoad is a node's current load as nodeload sees it: requests, metrics, the effective figure every " +
      'scheduling decision uses, and the NodeLoadRules whose pods may be placed on the node. Read-only; one per node.',
  );

export const NodeLoadListSchema = z
  .strictObject({
    apiVersion: z.literal(GROUP_VERSION).describe(API_VERSION),
    kind: z.literal('NodeLoadList').describe(KIND),
    metadata: ListMetaSchema.describe('Standard list metadata.'),
    items: z.array(NodeLoadObjectSchema).describe('One NodeLoad per node.'),
  })
  .describe('NodeLoadList is a list of NodeLoad objects.');

export const WatchEventTypeSchema = z
  .enum(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'])
  .describe('ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.');

export const WatchEventSchema = z
  .strictObject({
    type: WatchEventTypeSchema,
    object: z.looseObject({}).describe('The object (a Status for ERROR).'),
  })
  .describe('Event represents a single event to a watched resource.');

/** Every OpenAPI definition, by its name there; a schema used in another becomes a `$ref` to it. */
export const DEFINITIONS = {
  [`${PREFIX}.NodeLoad`]: NodeLoadObjectSchema,
  [`${PREFIX}.NodeLoadList`]: NodeLoadListSchema,
  [`${PREFIX}.NodeLoadStatus`]: NodeLoadStatusSchema,
  [`${PREFIX}.CPUMemory`]: CpuMemQuantitiesSchema,
  [`${PREFIX}.NodeResources`]: NodeResourceQuantitiesSchema,
  [`${PREFIX}.RuleReference`]: RuleRefSchema,
  [`${PREFIX}.IneligibleRule`]: IneligibleRuleSchema,
  [`${META}.ObjectMeta`]: ObjectMetaSchema,
  [`${META}.ListMeta`]: ListMetaSchema,
  [`${META}.WatchEvent`]: WatchEventSchema,
} satisfies Record<string, z.ZodType>;

export type CpuMemQuantities = z.infer<typeof CpuMemQuantitiesSchema>;
export type NodeResourceQuantities = z.infer<typeof NodeResourceQuantitiesSchema>;
export type RuleRef = z.infer<typeof RuleRefSchema>;
export type IneligibleRule = z.infer<typeof IneligibleRuleSchema>;
export type NodeLoadStatus = z.infer<typeof NodeLoadStatusSchema>;
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;
export type ListMeta = z.infer<typeof ListMetaSchema>;
export type NodeLoadObject = z.infer<typeof NodeLoadObjectSchema>;
export type NodeLoadList = z.infer<typeof NodeLoadListSchema>;
export type WatchEventType = z.infer<typeof WatchEventTypeSchema>;

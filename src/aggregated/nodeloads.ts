/**
 * The NodeLoad resource: a node's load figures as an API object, built from the same NodeInfo,
 * NodeLoad and rules every other view uses, so `kubectl get nodeloads`, GraphQL and the scheduler's
 * decisions agree. Pure: no I/O, no clock.
 */
import type { NodeInfo } from '../cluster/model.js';
import { formatCpu, formatMemory } from '../cluster/quantity.js';
import type { LoadSource, NodeLoad } from '../load/types.js';
import { evaluateNodeForRule } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import { badRequest, GROUP_VERSION, NODELOADS } from './api.js';
import type {
  CpuMemQuantities,
  IneligibleRule,
  ListMeta,
  NodeLoadList,
  NodeLoadObject,
  NodeLoadStatus,
  NodeResourceQuantities,
  ObjectMeta,
  RuleRef,
} from './schema.js';
import { type FieldRequirement, fieldsMatch, type LabelRequirement, labelsMatch } from './selectors.js';

// The resource's types come from its zod schemas, which also give its OpenAPI (schema.ts, openapi.ts).
export type {
  CpuMemQuantities,
  IneligibleRule,
  ListMeta,
  NodeLoadList,
  NodeLoadObject,
  NodeLoadStatus,
  ObjectMeta,
  RuleRef,
} from './schema.js';

export interface PartialObjectMetadata {
  apiVersion: 'meta.k8s.io/v1';
  kind: 'PartialObjectMetadata';
  metadata: ObjectMeta;
}

const cpuMem = (v: { cpuMilli: number; memoryBytes: number }): CpuMemQuantities => ({
  cpu: formatCpu(v.cpuMilli),
  memory: formatMemory(v.memoryBytes),
});

const nodeResources = (v: {
  cpuMilli: number;
  memoryBytes: number;
  pods: number;
}): NodeResourceQuantities => ({
  ...cpuMem(v),
  pods: String(v.pods),
});

export function roundPercent(n: number): number {
  return Math.round(n * 100) / 100;
}

function byRef(a: RuleRef, b: RuleRef): number {
  const ka = `${a.namespace}/${a.name}`;
  const kb = `${b.namespace}/${b.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** Which rules' pods may go to the node right now, and why the others may not. */
export function ruleEligibility(
  node: NodeInfo,
  load: NodeLoad,
  rules: Iterable<NodeLoadRule>,
): { eligibleRules: RuleRef[]; ineligibleRules: IneligibleRule[] } {
  const eligibleRules: RuleRef[] = [];
  const ineligibleRules: IneligibleRule[] = [];
  for (const rule of rules) {
    const verdict = evaluateNodeForRule(rule, node, load);
    const ref = { namespace: rule.namespace, name: rule.name };
    if (verdict.eligible) eligibleRules.push(ref);
    else ineligibleRules.push({ ...ref, reasons: verdict.reasons.map((r) => r.message) });
  }
  return { eligibleRules: eligibleRules.sort(byRef), ineligibleRules: ineligibleRules.sort(byRef) };
}

export function nodeLoadStatus(
  node: NodeInfo,
  load: NodeLoad,
  rules: Iterable<NodeLoadRule>,
): NodeLoadStatus {
  return {
    capacity: nodeResources(node.capacity),
    allocatable: nodeResources(load.allocatable),
    requested: cpuMem(load.requested),
    ...(load.usage ? { usage: cpuMem(load.usage) } : {}),
    estimated: cpuMem(load.estimated),
    estimatedPods: load.estimatedPods,
    effective: cpuMem(load.effective),
    cpuPercent: roundPercent(load.cpuPercent),
    memoryPercent: roundPercent(load.memoryPercent),
    source: load.source,
    timestamp: load.timestamp,
    ...(load.usage ? { window: `${load.usage.windowSeconds}s` } : {}),
    pods: load.podCount,
    metricsStale: load.metricsStale,
    unavailable: load.unavailable,
    ...ruleEligibility(node, load, rules),
  };
}

/**
 * The object for one node. It carries the node's labels (as metrics.k8s.io NodeMetrics does) so
 * `-l` selects NodeLoads the way it selects Nodes, and the node's creationTimestamp, so AGE matches
 * `kubectl get nodes`.
 */
export function nodeLoadObject(
  node: NodeInfo,
  load: NodeLoad,
  rules: Iterable<NodeLoadRule>,
  resourceVersion: string,
): NodeLoadObject {
  return {
    apiVersion: GROUP_VERSION,
    kind: NODELOADS.kind as 'NodeLoad',
    metadata: {
      name: node.name,
      resourceVersion,
      creationTimestamp: node.creationTimestamp,
      ...(Object.keys(node.labels).length > 0 ? { labels: { ...node.labels } } : {}),
    },
    status: nodeLoadStatus(node, load, rules),
  };
}

/** Whether two objects differ in anything but their resourceVersion. */
export function sameContent(a: NodeLoadObject, b: NodeLoadObject): boolean {
  const strip = (o: NodeLoadObject) =>
    JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: '' } });
  return strip(a) === strip(b);
}

export function partialObjectMetadata(obj: NodeLoadObject): PartialObjectMetadata {
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: obj.metadata };
}

export interface ObjectFilter {
  labels: readonly LabelRequirement[];
  fields: readonly FieldRequirement[];
}

export function matchesFilter(obj: NodeLoadObject, filter: ObjectFilter): boolean {
  return (
    labelsMatch(filter.labels, obj.metadata.labels ?? {}) &&
    fieldsMatch(filter.fields, { 'metadata.name': obj.metadata.name, 'metadata.namespace': '' })
  );
}

interface ContinueToken {
  /** The list's resourceVersion when the first page was served. */
  rv: string;
  /** The last name served; the next page starts after it. */
  start: string;
}

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

export function decodeContinue(text: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<ContinueToken>;
    if (typeof t.rv === 'string' && typeof t.start === 'string') return { rv: t.rv, start: t.start };
  } catch {
    // fall through
  }
  throw badRequest('continue key is not valid: malformed token');
}

/**
 * One page of a list sorted by name. Pages after the first continue by name rather than from a
 * snapshot: a node added or removed between two pages shows up (or not) as it would in a new list.
 */
export function nodeLoadList(
  objects: Iterable<NodeLoadObject>,
  filter: ObjectFilter,
  resourceVersion: string,
  page: { limit?: number; continue?: string } = {},
): NodeLoadList {
  const token = page.continue ? decodeContinue(page.continue) : undefined;
  const everything = !token && filter.labels.length === 0 && filter.fields.length === 0;
  const selected = everything
    ? [...objects]
    : [...objects].filter((o) => matchesFilter(o, filter) && (!token || o.metadata.name > token.start));
  // The store's objects come mostly in name order (the informer lists nodes sorted): a near-linear sort.
  const sorted = selected.sort((a, b) =>
    a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
  );
  const metadata: ListMeta = { resourceVersion };
  let items = sorted;
  const limit = page.limit ?? 0;
  if (limit > 0 && sorted.length > limit) {
    items = sorted.slice(0, limit);
    const last = items[items.length - 1] as NodeLoadObject;
    metadata.continue = encodeContinue({ rv: token?.rv ?? resourceVersion, start: last.metadata.name });
    metadata.remainingItemCount = sorted.length - limit;
  }
  return { apiVersion: GROUP_VERSION, kind: 'NodeLoadList', metadata, items };
}

/** One entry of GET /api/node-load: the original's name + capacity strings, plus the load figures. */
export interface NodeLoadSummary {
  name: string;
  cpu: string;
  memory: string;
  allocatable: CpuMemQuantities;
  requested: CpuMemQuantities;
  usage?: CpuMemQuantities;
  effective: CpuMemQuantities;
  cpuPercent: number;
  memoryPercent: number;
  source: LoadSource;
  pods: number;
  timestamp: string;
  metricsStale: boolean;
  unavailable: boolean;
  eligibleRules: RuleRef[];
}

export function nodeLoadSummary(obj: NodeLoadObject): NodeLoadSummary {
  const s = obj.status;
  return {
    name: obj.metadata.name,
    cpu: s.capacity.cpu,
    memory: s.capacity.memory,
    allocatable: { cpu: s.allocatable.cpu, memory: s.allocatable.memory },
    requested: s.requested,
    ...(s.usage ? { usage: s.usage } : {}),
    effective: s.effective,
    cpuPercent: s.cpuPercent,
    memoryPercent: s.memoryPercent,
    source: s.source,
    pods: s.pods,
    timestamp: s.timestamp,
    metricsStale: s.metricsStale,
    unavailable: s.unavailable,
    eligibleRules: s.eligibleRules,
  };
}

/**
 * A Kubernetes object as the cluster cache handles it: raw JSON, with the few helpers every consumer of
 * watched objects needs (its key, its identity, client-node classes back to plain JSON, an error's HTTP
 * status). Plain functions over plain data, no I/O.
 */

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

/** An object's identity and version only: what a cache that converts objects on arrival needs kept. */
export function identityOf(obj: KubeObject): KubeObject {
  const meta = obj.metadata;
  const kept: NonNullable<KubeObject['metadata']> = {};
  if (meta?.namespace !== undefined) kept.namespace = meta.namespace;
  if (meta?.name !== undefined) kept.name = meta.name;
  if (meta?.uid !== undefined) kept.uid = meta.uid;
  if (meta?.resourceVersion !== undefined) kept.resourceVersion = meta.resourceVersion;
  return { metadata: kept };
}

/**
 * Deep copy with Dates as strings and undefined fields dropped — for client-node's deserialised classes,
 * whose property names equal the JSON names for every type reachable from V1Pod and V1Node (checked).
 * Whole-second times come out as the API server writes them ("…:05Z", not "…:05.000Z").
 */
export function toPlainJson(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace('.000Z', 'Z');
  if (Array.isArray(value)) return value.map(toPlainJson);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toPlainJson(v);
    return out;
  }
  return value;
}

/** The HTTP status of a client-node error (ApiException.code) or of a refused watch (statusCode). */
export function httpStatusOf(err: unknown): number | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.statusCode === 'number') return e.statusCode;
  return typeof e.code === 'number' ? e.code : undefined;
}

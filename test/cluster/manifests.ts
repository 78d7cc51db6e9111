/**
 * What registering a gateway running on this machine with the local control plane takes (tests, demo):
 * render a manifest template of manifests/ for a port and CA, then create or replace its objects.
 * webhooks.ts and apiservice.ts use it for the admission webhooks and the aggregated API.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiException, loadAllYaml } from '@kubernetes/client-node';

/** A file of manifests/, resolved from this module (test/cluster is two levels below the repo root). */
export function manifestPath(relative: string): string {
  return fileURLToPath(new URL(`../../manifests/${relative}`, import.meta.url));
}

export interface LocalEndpoint {
  /** The gateway's kube-facing HTTPS port. */
  port: number;
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
}

/**
 * YAML text with `${PORT}` and `${CA_BUNDLE}` filled in (manifests/overlays/local); any other
 * placeholder is an error naming `source`.
 */
export function fillPlaceholders(
  text: string,
  endpoint: LocalEndpoint,
  what: string,
  source: string,
): string {
  if (!Number.isInteger(endpoint.port) || endpoint.port <= 0 || endpoint.port > 65535) {
    throw new Error(`invalid ${what} port ${endpoint.port}`);
  }
  const values: Record<string, string> = {
    PORT: String(endpoint.port),
    CA_BUNDLE: Buffer.from(endpoint.caPem).toString('base64'),
  };
  return text.replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`${source}: unknown placeholder ${whole}`);
    return v;
  });
}

/**
 * The documents of a template file with its placeholders filled in (fillPlaceholders). Comment lines may
 * mention placeholders; only the documents' values are substituted.
 */
export function renderTemplate(path: string, endpoint: LocalEndpoint, what: string): unknown[] {
  const values = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n');
  return loadAllYaml(fillPlaceholders(values, endpoint, what, path)).filter(Boolean);
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiException && err.code === 404;
}

/** For deletes: an object that is already gone is fine. */
export function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}

/** Replaces the object (carrying over its resourceVersion) or creates it when absent. */
export async function createOrReplace<T extends { metadata?: { resourceVersion?: string } }>(
  desired: T,
  api: {
    read: () => Promise<T>;
    create: (body: T) => Promise<unknown>;
    replace: (body: T) => Promise<unknown>;
  },
): Promise<void> {
  let current: T;
  try {
    current = await api.read();
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await api.create(desired);
    return;
  }
  await api.replace({
    ...desired,
    metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion },
  });
}

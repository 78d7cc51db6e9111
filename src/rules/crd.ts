/**
 * The NodeLoadRule CRD manifest, for components that install or check it at startup and for tests.
 * The YAML file is the single source; this only locates and parses it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { RULE_GROUP, RULE_PLURAL } from './types.js';

export const CRD_NAME = `${RULE_PLURAL}.${RULE_GROUP}`;

/** Resolved from this module: src/rules (tsx) and dist/rules (build) are both two levels below the repo root. */
export const CRD_MANIFEST_PATH = fileURLToPath(
  new URL(`../../manifests/crd/${CRD_NAME}.yaml`, import.meta.url),
);

export interface CrdManifest {
  apiVersion: string;
  kind: 'CustomResourceDefinition';
  metadata: { name: string; [key: string]: unknown };
  spec: Record<string, unknown>;
}

/** Reads and parses the CRD; throws when the file is missing or is not this CRD. */
export function loadCrdManifest(path: string = CRD_MANIFEST_PATH): CrdManifest {
  const doc = load(readFileSync(path, 'utf8')) as Partial<CrdManifest> | null;
  if (doc?.kind !== 'CustomResourceDefinition' || doc.metadata?.name !== CRD_NAME || !doc.spec) {
    throw new Error(`${path}: not the ${CRD_NAME} CustomResourceDefinition`);
  }
  return doc as CrdManifest;
}

/**
 * Test support for the cluster layer: a custom resource kind that keeps an object's identity and its
 * spec as they came, so the cache can be tested without the rule domain (src/rules) above it.
 */
import type { CustomResourceKind } from './cache.js';
import type { KubeObject } from './kube-object.js';
import type { NamespacedObject } from './view.js';

export interface PlainObject extends NamespacedObject {
  spec: Record<string, unknown>;
}

export const PLAIN_RULE_KIND: CustomResourceKind<PlainObject> = {
  group: 'example.com',
  version: 'v1',
  plural: 'nodeloadrules',
  convert: (raw: KubeObject): PlainObject => ({
    namespace: raw.metadata?.namespace ?? '',
    name: raw.metadata?.name ?? '',
    resourceVersion: raw.metadata?.resourceVersion ?? '',
    spec: (raw as { spec?: Record<string, unknown> }).spec ?? {},
  }),
};

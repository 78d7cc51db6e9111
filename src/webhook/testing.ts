/** Test support for the webhook: nodes as the cache holds them and AdmissionReview requests as parsed. */
import type { NodeInfo } from '../cluster/model.js';
import { type AdmissionRequest, parseReview } from './review.js';

/** A ready node of 4 CPU and 110 pods; the webhook reads only its name and labels. */
export function webhookNode(name: string, labels: Record<string, string> = {}): NodeInfo {
  return {
    name,
    uid: name,
    resourceVersion: '1',
    labels,
    taints: [],
    unschedulable: false,
    ready: true,
    capacity: { cpuMilli: 4000, memoryBytes: 1, pods: 110 },
    allocatable: { cpuMilli: 4000, memoryBytes: 1, pods: 110 },
    allocatableResources: {},
    images: [],
    declaredFeatures: [],
    creationTimestamp: '',
  };
}

/** The AdmissionReview the API server sends when a pod is created in `team` (fields overridable). */
export function podReview(uid: string, object: unknown, over: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'team',
      operation: 'CREATE',
      object,
      ...over,
    },
  };
}

/** podReview's request, parsed as the routes parse it. */
export function podRequest(
  uid: string,
  object: unknown,
  over: Record<string, unknown> = {},
): AdmissionRequest {
  const parsed = parseReview(podReview(uid, object, over));
  if (parsed.kind !== 'ok') throw new Error(`fixture: ${JSON.stringify(parsed)}`);
  return parsed.request;
}

/**
 * Who created a pod naming a DaemonSet as its controller, from the AdmissionReview's userInfo — the
 * webhook's half of the DaemonSet exemption (see src/rules/daemonset.ts for the whole design).
 *
 * kube-controller-manager builds the DaemonSet controller's client with ClientOrDie("daemon-set-controller")
 * (cmd/kube-controller-manager/app/apps.go). With --use-service-account-credentials (kubeadm's
 * default, and CIS 1.3.3) that client authenticates as the ServiceAccount kube-system/daemon-set-controller;
 * without it every controller uses the manager's own credentials, conventionally the user
 * system:kube-controller-manager. Trusting the latter trusts the whole manager, which is the
 * control plane anyway; the DaemonSet ownerReference is required in both cases, so other controllers'
 * pods gain nothing from it.
 */
import { DAEMONSET_ANNOTATION, DAEMONSET_ANNOTATION_VALUE } from '../rules/daemonset.js';
import type { AdmissionRequest, PodObject } from './review.js';

export const DAEMONSET_CONTROLLER_USERS: ReadonlySet<string> = new Set([
  'system:serviceaccount:kube-system:daemon-set-controller',
  'system:kube-controller-manager',
]);

/**
 * - `none`: no DaemonSet controller reference;
 * - `controller`: one, and the request comes from the DaemonSet controller;
 * - `claimed`: one, written by someone else — the pod is treated like any pod.
 */
export type DaemonSetClaim = 'none' | 'controller' | 'claimed';

/** The apps/v1 DaemonSet the pod names as its controller, if any. */
export function daemonSetOwner(pod: PodObject): string | undefined {
  const owner = (pod.metadata.ownerReferences ?? []).find(
    (o) => o.controller === true && o.kind === 'DaemonSet' && o.apiVersion === 'apps/v1',
  );
  return owner ? (owner.name ?? '') : undefined;
}

export function daemonSetClaim(pod: PodObject, request: Pick<AdmissionRequest, 'userInfo'>): DaemonSetClaim {
  if (daemonSetOwner(pod) === undefined) return 'none';
  return DAEMONSET_CONTROLLER_USERS.has(request.userInfo?.username ?? '') ? 'controller' : 'claimed';
}

function annotation(pod: PodObject | undefined): string | undefined {
  return pod?.metadata.annotations?.[DAEMONSET_ANNOTATION] ?? undefined;
}

/**
 * Why the request may not carry DAEMONSET_ANNOTATION (undefined: it may). On CREATE only the
 * DaemonSet controller's own pods may have it (our mutating webhook put it there); an UPDATE may
 * remove it (that only loses the exemption) but never add or change it.
 */
export function daemonSetAnnotationRefusal(
  request: Pick<AdmissionRequest, 'operation' | 'userInfo'>,
  pod: PodObject,
  oldPod: PodObject | undefined,
): string | undefined {
  const value = annotation(pod);
  if (value === undefined) return undefined;
  const user = request.userInfo?.username || 'unknown';
  if (request.operation === 'CREATE') {
    if (value === DAEMONSET_ANNOTATION_VALUE && daemonSetClaim(pod, request) === 'controller')
      return undefined;
    return `annotation ${DAEMONSET_ANNOTATION} is set by nodeload's webhook only, on pods the DaemonSet controller creates; user "${user}" may not set it`;
  }
  if (request.operation === 'UPDATE' && annotation(oldPod) !== value) {
    return `annotation ${DAEMONSET_ANNOTATION} cannot be added or changed after the pod is created (user "${user}")`;
  }
  return undefined;
}

/**
 * The one exemption from NodeLoadRules' load thresholds and burst limits: a DaemonSet's pods, which
 * must run on the node their controller chose (allowedNodes still holds for them).
 *
 * A pod's ownerReferences are no proof of that: whoever creates a pod writes them. Only the
 * admission webhook sees who sends the request (AdmissionReview request.userInfo), so it vouches for
 * the pods the DaemonSet controller creates by setting DAEMONSET_ANNOTATION, and refuses the
 * annotation on any other request (on CREATE, and whenever an UPDATE adds or changes it). The
 * scheduler, which never sees userInfo, trusts only pods carrying both the annotation and a DaemonSet
 * controller reference. Anything else is scheduled like any pod.
 */
import type { PodInfo } from '../cluster/model.js';

/** Written by nodeload's mutating webhook only, on pods the DaemonSet controller creates. */
export const DAEMONSET_ANNOTATION = 'nodeload.example.com/daemonset-verified';
export const DAEMONSET_ANNOTATION_VALUE = 'true';

/** Whether the pod skips the rules' load thresholds and burst limits. */
export function exemptFromLoadLimits(pod: Pick<PodInfo, 'isDaemonSetPod' | 'annotations'>): boolean {
  return pod.isDaemonSetPod && pod.annotations[DAEMONSET_ANNOTATION] === DAEMONSET_ANNOTATION_VALUE;
}

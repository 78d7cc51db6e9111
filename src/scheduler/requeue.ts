/**
 * Which cluster changes send unschedulable pods back to the queue (kube-scheduler's queueing hints):
 * only those that can make room or make a node acceptable.
 */
import type { DeviceClassInfo, NodeInfo, PodInfo } from '../cluster/model.js';
import type { NodeLoad } from '../load/types.js';
import type { NodeLoadRule } from '../rules/types.js';

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Node changes that can make a pod fit where it did not (kube-scheduler's NodeUpdate hints). */
export function nodeChangeMatters(old: NodeInfo | undefined, next: NodeInfo | undefined): boolean {
  if (!old || !next) return next !== undefined;
  return (
    old.ready !== next.ready ||
    old.unschedulable !== next.unschedulable ||
    !sameJson(old.taints, next.taints) ||
    !sameJson(old.labels, next.labels) ||
    // Every allocatable resource (an extended one or hugepages can make room too), and the features the
    // kubelet declares (NodeDeclaredFeatures: an upgraded kubelet can take pods it could not).
    !sameJson(old.allocatableResources, next.allocatableResources) ||
    !sameJson(old.declaredFeatures, next.declaredFeatures)
  );
}

/**
 * A DeviceClass change that can change where a pod with an extended resource fits (upstream's
 * isSchedulableAfterDeviceClassEvent, plus deletes): one added or removed, or its extendedResourceName
 * changed, moves that resource between NodeResourcesFit and DynamicResources.
 */
export function deviceClassChangeMatters(c: { old?: DeviceClassInfo; new?: DeviceClassInfo }): boolean {
  return !c.old || !c.new || c.old.extendedResourceName !== c.new.extendedResourceName;
}

/**
 * A load change that can make room: less load or fewer pods than before. A node's first figure is not
 * one: the node's own add event already retried the pods.
 */
export function loadDropped(prev: NodeLoad | undefined, next: NodeLoad | undefined): boolean {
  if (!next || !prev) return false;
  return (
    next.cpuPercent < prev.cpuPercent ||
    next.memoryPercent < prev.memoryPercent ||
    next.podCount < prev.podCount ||
    next.requested.cpuMilli < prev.requested.cpuMilli ||
    next.requested.memoryBytes < prev.requested.memoryBytes ||
    (prev.unavailable && !next.unavailable)
  );
}

/** A rule added, removed or re-specified; the operator's status writes alone change nothing for placement. */
export function ruleChangeMatters(old: NodeLoadRule | undefined, next: NodeLoadRule | undefined): boolean {
  if (!old || !next) return true;
  return !sameJson(old.spec, next.spec);
}

/**
 * Whether a pod update can change where the pod fits (kube-scheduler's isPodUpdated): anything but
 * its status and resourceVersion. Our own PodScheduled patch then does not re-arm the backoff.
 */
export function podSpecChanged(old: PodInfo, next: PodInfo): boolean {
  const strip = (p: PodInfo) => {
    const {
      resourceVersion,
      generation,
      phase,
      scheduledCondition,
      scheduledAt,
      nominatedNodeName,
      ...rest
    } = p;
    return JSON.stringify(rest);
  };
  return strip(old) !== strip(next);
}

/**
 * Preemption's writes, as kube-scheduler makes them: a victim's eviction (DisruptionTarget condition,
 * DELETE, `Preempted` Event), and the shape of a preemptor's pending status write (condition +
 * nominatedNodeName). KubeSchedulerApi (binder.ts) queues them.
 */
import {
  ApiException,
  type CoreV1Api,
  type EventsV1Api,
  type EventsV1Event,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
} from '@kubernetes/client-node';
import type { PodInfo } from '../cluster/model.js';

// biome-ignore lint/suspicious/noExplicitAny: patch bodies are plain JSON.
type Json = any;

/** One pod's pending status write: its PodScheduled condition and/or its nominatedNodeName (null = clear). */
export interface StatusIntent {
  pod: PodInfo;
  condition?: { pod: PodInfo; message: string };
  nominated?: string | null;
}

/** The DisruptionTarget condition kube-scheduler sets on a victim before deleting it. */
export function disruptionTargetPatch(victim: PodInfo, preemptor: PodInfo, now: Date): Json {
  return {
    status: {
      conditions: [
        {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'PreemptionByScheduler',
          message: `${preemptor.schedulerName}: preempting to accommodate a higher priority pod`,
          lastTransitionTime: now.toISOString().replace(/\.\d+Z$/, 'Z'),
          ...(victim.generation ? { observedGeneration: victim.generation } : {}),
        },
      ],
    },
  };
}

const podRef = (p: PodInfo) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: p.namespace,
  name: p.name,
  uid: p.uid,
});

/** kube-scheduler's Event on a victim: Normal, Preempted, "Preempted by pod <uid> on node <node>". */
export function preemptedEvent(
  victim: PodInfo,
  preemptor: PodInfo,
  node: string,
  o: { name: string; controller: string; instance: string },
): Omit<EventsV1Event, 'eventTime'> {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: o.name, namespace: victim.namespace },
    reportingController: o.controller,
    reportingInstance: o.instance.slice(0, 128),
    action: 'Preempting',
    reason: 'Preempted',
    type: 'Normal',
    note: `Preempted by pod ${preemptor.uid} on node ${node}`,
    regarding: podRef(victim),
    related: podRef(preemptor),
  };
}

/**
 * Evicts a victim as kube-scheduler's PreemptPod: the DisruptionTarget condition, a DELETE without a
 * grace period of its own (the pod's terminationGracePeriodSeconds applies) and with the victim's UID as
 * precondition (a pod recreated under that name is not deleted by an old decision), then the Event.
 */
export async function evictVictim(
  core: CoreV1Api,
  events: EventsV1Api,
  victim: PodInfo,
  preemptor: PodInfo,
  event: Omit<EventsV1Event, 'eventTime'>,
): Promise<void> {
  const target = { name: victim.name, namespace: victim.namespace };
  try {
    await core.patchNamespacedPodStatus(
      { ...target, body: disruptionTargetPatch(victim, preemptor, new Date()) },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    await core.deleteNamespacedPod({ ...target, body: { preconditions: { uid: victim.uid } } });
  } catch (err) {
    // Gone already, or replaced by another pod of that name: nothing to evict.
    if (err instanceof ApiException && (err.code === 404 || err.code === 409)) return;
    throw err;
  }
  await events.createNamespacedEvent({
    namespace: victim.namespace,
    body: { ...event, eventTime: new V1MicroTime() },
  });
}

/**
 * What cluster changes do to the scheduler (kube-scheduler's event handlers): the snapshot follows the
 * cache's nodes and pods, preemption follows its nominations and victims, and the queue follows the
 * pods — a pending pod of ours is added or updated, one bound, gone or done leaves it — while any change
 * that can make room or make a node acceptable (the queueing hints of requeue.ts and storage-events.ts)
 * sends the unschedulable pods back to be tried again.
 */
import { type PodInfo, podKey } from '../cluster/model.js';
import type { RuleClusterTopics as ClusterTopics } from '../rules/kind.js';
import type { BindingCycle } from './bind-cycle.js';
import type { DecisionRecorder } from './decision-recorder.js';
import type { Snapshot } from './framework/snapshot.js';
import type { Preemption } from './preemption.js';
import type { SchedulingQueue } from './queue.js';
import {
  deviceClassChangeMatters,
  loadDropped,
  nodeChangeMatters,
  podSpecChanged,
  ruleChangeMatters,
} from './requeue.js';
import {
  claimChangeMatters,
  csiDriverChangeMatters,
  csiNodeChangeMatters,
  storageCapacityChangeMatters,
  storageClassChangeMatters,
  volumeAttachmentChangeMatters,
  volumeChangeMatters,
} from './storage-events.js';
import type { SchedulerDeps } from './types.js';

export interface ClusterReactionsDeps {
  cache: Pick<SchedulerDeps['cache'], 'bus' | 'nodes' | 'pods'>;
  loads: Pick<SchedulerDeps['loads'], 'bus'>;
  snapshot: Snapshot;
  preemption: Pick<Preemption, 'onPod' | 'victimGone'>;
  queue: SchedulingQueue;
  binding: Pick<BindingCycle, 'confirmed'>;
  recorder: Pick<DecisionRecorder, 'forgetFailedEvent'>;
  leading(): boolean;
  /** Ours, unbound, alive, and let through by the PreEnqueue plugins. */
  isPendingOurs(pod: PodInfo): boolean;
  /** Wakes the loop if it waits for work. */
  wake(): void;
  /** A rule was added, changed or removed: the rule list the scheduler keeps is stale. */
  rulesChanged(): void;
}

/** Fills the snapshot and preemption's view from the cache, then follows its changes; returns the unsubscribers. */
export function addAllEventHandlers(deps: ClusterReactionsDeps): (() => void)[] {
  const { cache, loads, snapshot, preemption } = deps;
  const moveAll = () => moveAllToActiveOrBackoff(deps);
  /** A topic's changes that `matters` says may make room send the unschedulable pods back. */
  const requeueOn = <K extends keyof ClusterTopics>(topic: K, matters: (c: ClusterTopics[K]) => boolean) =>
    cache.bus.on(topic, (c) => {
      if (matters(c)) moveAll();
    });
  // The snapshot hears every change first, so a pod event's handlers below see it applied.
  for (const node of cache.nodes.values()) snapshot.setNode(node);
  for (const pod of cache.pods.values()) snapshot.upsertPod(pod);
  for (const pod of cache.pods.values()) preemption.onPod({ type: 'add', new: pod });
  return [
    cache.bus.on('node', (c) => {
      if (c.new) snapshot.setNode(c.new);
      else if (c.old) snapshot.deleteNode(c.old.name);
    }),
    cache.bus.on('pod', (c) => {
      if (c.new) snapshot.upsertPod(c.new);
      else if (c.old) snapshot.deletePod(c.old);
    }),
    cache.bus.on('pod', (c) => preemption.onPod(c)),
    cache.bus.on('pod', (c) => onPod(deps, c)),
    cache.bus.on('node', (c) => {
      if (nodeChangeMatters(c.old, c.new)) moveAll();
    }),
    cache.bus.on('rule', (c) => {
      deps.rulesChanged();
      if (ruleChangeMatters(c.old?.rule, c.new?.rule)) moveAll();
    }),
    // The storage objects the volume plugins wait for (storage-events.ts says which changes matter).
    requeueOn('claim', claimChangeMatters),
    requeueOn('volume', volumeChangeMatters),
    requeueOn('storageClass', storageClassChangeMatters),
    requeueOn('csiNode', csiNodeChangeMatters),
    requeueOn('volumeAttachment', volumeAttachmentChangeMatters),
    requeueOn('csiStorageCapacity', storageCapacityChangeMatters),
    requeueOn('csiDriver', csiDriverChangeMatters),
    requeueOn('deviceClass', deviceClassChangeMatters),
    loads.bus.on('load', (c) => {
      if (loadDropped(c.previous, c.load)) moveAll();
    }),
  ];
}

function onPod(deps: ClusterReactionsDeps, c: ClusterTopics['pod']): void {
  const { queue } = deps;
  const pod = c.new;
  if (pod) {
    const key = podKey(pod);
    if (deps.leading() && deps.isPendingOurs(pod)) {
      queue.add(pod, !c.old || podSpecChanged(c.old, pod));
      deps.wake();
    } else {
      queue.delete(key);
      if (pod.nodeName) deps.binding.confirmed(key);
      if (pod.nodeName || pod.deleting || pod.terminal) deps.recorder.forgetFailedEvent(key);
    }
  } else if (c.old) {
    const key = podKey(c.old);
    queue.delete(key);
    deps.recorder.forgetFailedEvent(key);
    // A bound pod going away frees room; so does a preemption victim (even one not bound yet).
    if (deps.preemption.victimGone(c.old) || c.old.nodeName) moveAllToActiveOrBackoff(deps);
  }
}

/** Sends every unschedulable pod back to be tried again (kube-scheduler's MoveAllToActiveOrBackoffQueue). */
function moveAllToActiveOrBackoff(deps: ClusterReactionsDeps): void {
  if (!deps.leading()) return;
  deps.queue.moveAllToActiveOrBackoff();
  deps.wake();
}

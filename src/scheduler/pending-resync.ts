/**
 * The queue checked against the cache, level-triggered: every pending pod of ours must be in the queue or
 * in its binding cycle (assumed, bind in flight or of unknown outcome). The queue is fed by the cache's
 * pod events, edge-triggered; a pod whose event was missed or mishandled would otherwise wait without a
 * word until its next change — for a Pending pod, maybe never. The scheduler runs this every
 * PENDING_RESYNC_MS and queues what it finds; each find is a bug somewhere upstream of the queue, so it
 * is logged and counted (nodeload_scheduler_resynced_pods_total should stay 0).
 */
import { type PodInfo, podKey } from '../cluster/model.js';

export const PENDING_RESYNC_MS = 30_000;

export interface PendingResyncView {
  /** Ours, unbound, alive, and let through by the PreEnqueue plugins. */
  isPendingOurs(pod: PodInfo): boolean;
  /** In the queue (any of its parts, in flight included) or in the binding cycle. */
  isTracked(key: string): boolean;
}

/** The pending pods of ours that neither the queue nor the binding cycle holds. */
export function untrackedPendingPods(unscheduled: Iterable<PodInfo>, view: PendingResyncView): PodInfo[] {
  const out: PodInfo[] = [];
  for (const pod of unscheduled) {
    if (!view.isPendingOurs(pod)) continue;
    if (!view.isTracked(podKey(pod))) out.push(pod);
  }
  return out;
}

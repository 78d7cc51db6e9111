/**
 * The queue checked against the cache, level-triggered: every pending pod of ours must be in the queue or
 * in its binding cycle (assumed, bind in flight or of unknown outcome). The queue is fed by the cache's
 * pod events, edge-triggered; a pod whose event was missed or mishandled would otherwise wait without a
 * word until its next change — for a Pending pod, maybe never. The scheduler runs this every
 * PENDING_RESYNC_MS and queues what it finds; each find is a bug somewhere upstream of the queue, so it
 * is logged and counted (nodeload_scheduler_resynced_pods_total should stay 0).
 *
 * A pod counts only when two checks in a row find it untracked (the same pod, by uid): between a bind
 * answered "already assigned" and the watch event that shows the pod bound, or a pod deleted and its
 * DELETED event, the cache briefly shows a pending pod nobody tracks, and that is no lost event.
 */
import { type PodInfo, podKey } from '../cluster/model.js';

export const PENDING_RESYNC_MS = 30_000;

export interface PendingResyncView {
  /** Ours, unbound, alive, and let through by the PreEnqueue plugins. */
  isPendingOurs(pod: PodInfo): boolean;
  /** In the queue (any of its parts, in flight included) or in the binding cycle. */
  isTracked(key: string): boolean;
}

export class PendingResync {
  /** Untracked at the last check: key → uid. */
  private suspects = new Map<string, string>();

  /** The pending pods of ours that neither the queue nor the binding cycle held at this check and the last. */
  check(unscheduled: Iterable<PodInfo>, view: PendingResyncView): PodInfo[] {
    const lost: PodInfo[] = [];
    const suspects = new Map<string, string>();
    for (const pod of unscheduled) {
      if (!view.isPendingOurs(pod)) continue;
      const key = podKey(pod);
      if (view.isTracked(key)) continue;
      if (this.suspects.get(key) === pod.uid) lost.push(pod);
      else suspects.set(key, pod.uid);
    }
    this.suspects = suspects;
    return lost;
  }

  /** Forgets the suspects (leadership lost: the next term starts from the cache). */
  reset(): void {
    this.suspects.clear();
  }
}

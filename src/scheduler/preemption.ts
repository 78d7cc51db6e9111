/**
 * What the scheduler does around PostFilter (DefaultPreemption), as kube-scheduler's scheduling cycle
 * and preemption executor do: keep the nominator from the informer, run PostFilter when no node fits,
 * and carry its result out — nominate the preemptor (status.nominatedNodeName), evict the victims
 * (DisruptionTarget, graceful DELETE, `Preempted` Event; terminating victims are left alone), clear the
 * nominations of lower-priority pods of ours on that node (they may no longer fit), or clear the
 * preemptor's own nomination when preemption cannot help anywhere. The preemptor is then requeued as
 * unschedulable by the caller; the deletion of a victim moves the unschedulable pods back.
 */

import { type PodInfo, podKey } from '../cluster/model.js';
import type { Change } from '../cluster/view.js';
import type { SchedulerApi } from './binder.js';
import type { DecisionPreemption } from './explain.js';
import { Nominator } from './framework/nominator.js';
import { type PreFiltered, type Profile, runPostFilter } from './framework/runtime.js';
import type { CycleContext } from './framework/types.js';
import type { NodeVerdict } from './framework/verdict.js';

/** Victims whose deletion is awaited, bounded (a victim that never goes away is forgotten eventually). */
const MAX_TRACKED_VICTIMS = 10_000;

export interface PreemptionOutcome {
  /** "preemption: …", appended to the FailedScheduling message (kube-scheduler's PostFilterMsg). */
  sentence?: string;
  record?: DecisionPreemption;
}

export class Preemption {
  readonly nominator = new Nominator();
  /** Pod key → uid of the victims evicted and not seen gone yet. */
  private readonly victims = new Map<string, string>();

  constructor(
    private readonly api: SchedulerApi,
    private readonly schedulerName: string,
  ) {}

  /** Every pod change from the shared cache (pods of every scheduler). */
  onPod(c: Change<PodInfo>): void {
    if (c.new) this.nominator.upsertPod(c.new);
    else if (c.old) this.nominator.delete(podKey(c.old));
  }

  /** Whether the deleted pod was a victim we evicted (the caller then moves unschedulable pods). */
  victimGone(pod: PodInfo): boolean {
    const key = podKey(pod);
    const uid = this.victims.get(key);
    if (uid === undefined) return false;
    this.victims.delete(key);
    return uid === pod.uid;
  }

  /** The node a pending pod is nominated to (here or by the API), if any. */
  nominatedNode(pod: PodInfo): string | undefined {
    return this.nominator.nodeOf(podKey(pod)) || pod.nominatedNodeName || undefined;
  }

  /** PostFilter for a pod no node fits, and its consequences. */
  run(
    profile: Profile,
    pre: PreFiltered,
    ctx: CycleContext,
    verdicts: readonly NodeVerdict[],
  ): PreemptionOutcome {
    const result = runPostFilter(profile, pre, ctx, verdicts);
    if (!result) return {};
    // Only a sentence (DynamicResources' alone, when the profile has no DefaultPreemption): no preemption ran.
    if (result.explanation === undefined && result.nominatedNode === undefined)
      return result.message ? { sentence: result.message } : {};
    const pod = ctx.pod;
    const node = result.nominatedNode;
    const victims = result.victims ?? [];
    const record: DecisionPreemption = {
      ...(node ? { node } : {}),
      victims: victims.map((v) => ({ namespace: v.namespace, name: v.name, priority: v.priority })),
      message: result.explanation ?? result.message ?? '',
    };
    if (node) {
      for (const v of victims) {
        if (v.deleting) continue;
        this.track(v);
        this.api.preempt(v, pod, node);
      }
      for (const other of [...this.nominator.forNode(node)]) {
        if (other.priority >= pod.priority || other.schedulerName !== this.schedulerName) continue;
        if (podKey(other) === podKey(pod)) continue;
        this.nominator.delete(podKey(other));
        this.api.clearNomination(other);
      }
      this.nominator.nominate(pod, node);
      this.api.nominate(pod, node);
    } else if (node === '' && this.nominatedNode(pod)) {
      this.nominator.delete(podKey(pod));
      this.api.clearNomination(pod);
    }
    return { ...(result.message ? { sentence: result.message } : {}), record };
  }

  private track(v: PodInfo): void {
    const key = podKey(v);
    this.victims.delete(key);
    this.victims.set(key, v.uid);
    while (this.victims.size > MAX_TRACKED_VICTIMS)
      this.victims.delete(this.victims.keys().next().value as string);
  }
}

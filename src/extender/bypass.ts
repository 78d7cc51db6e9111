/**
 * Noticing pods kube-scheduler placed without asking nodeload: with an `ignorable` extender it schedules
 * and binds by its own plugins alone whenever a call fails (gateway unreachable, TLS misconfigured, 503
 * before the cache synced), and says so only in its own log. nodeload sees the result in its pod watch: a
 * pod a rule covers goes from unbound to bound, and this front door did not bind it.
 */
import type { PodInfo } from '../cluster/model.js';
import { rulesForPod } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';

export interface BypassCheck {
  /** Rules in force now. */
  rules(): Iterable<NodeLoadRule>;
  /** The extender bound this pod itself. */
  boundHere(uid: string): boolean;
  /** Pods of this scheduler name are placed by nodeload's own loop (when it runs), not through the extender. */
  nativeSchedulerName?: string;
}

/** The rules a newly bound pod escaped, or none (not a new binding, bound by us, or uncovered). */
export function bypassedRules(change: { old?: PodInfo; new?: PodInfo }, check: BypassCheck): NodeLoadRule[] {
  const { old, new: pod } = change;
  if (!old || !pod || old.nodeName || !pod.nodeName) return [];
  if (pod.schedulerName === check.nativeSchedulerName || check.boundHere(pod.uid)) return [];
  return rulesForPod(check.rules(), pod);
}

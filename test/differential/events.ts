// The Events (events.k8s.io/v1) a scheduler writes about the run's pods — what `kubectl describe pod` and
// `kubectl events` show — in the run's logical names, and how the two engines' Events are compared.
//
// kube-scheduler writes, about the pod it decided (schedule_one.go): on a bind, Normal Scheduled/Binding
// "Successfully assigned <ns>/<pod> to <node>"; on a failed attempt, Warning FailedScheduling/Scheduling
// with the PodScheduled message. About each victim of a preemption (preemption/executor.go): Normal
// Preempted/Preempting "Preempted by pod <preemptor's UID> on node <node>", related to the preemptor.
// How many FailedScheduling Events a pod gets depends on how often it was retried (timing), so those are
// compared by their last note only. A pod created with spec.nodeName is never scheduled: no Event.
//
// One difference is kept on purpose: kube-scheduler 1.36 passes its preemptor wrapper (not the Pod) as the
// Preempted Event's related object, which the events library cannot reference, so it writes the Event
// without `related` (event_recorder.go drops it at log level 9). nodeload names the preemptor there, as
// kube-scheduler did before the wrapper; the comparison leaves `related` out and checks nodeload's.
import type { EventsV1Event, V1Pod } from '@kubernetes/client-node';
import { messageShape } from './compare.js';
import type { PodOutcome, Scenario } from './types.js';

/** One scheduler Event in the run's logical names. */
export interface EventRecord {
  /** The pod it is about (name). */
  regarding: string;
  type: string;
  reason: string;
  action: string;
  /** With the run's prefix taken out of names and pod UIDs replaced by `pod:<name>`. */
  note: string;
  /** The related pod (name), if any. */
  related?: string;
  /** When it was last observed (ms), for ordering a pod's FailedScheduling Events. */
  at: number;
}

const SCHEDULER_REASONS = new Set(['Scheduled', 'FailedScheduling', 'Preempted']);

function observedAt(e: EventsV1Event): number {
  const t =
    e.series?.lastObservedTime ?? e.eventTime ?? e.deprecatedLastTimestamp ?? e.metadata?.creationTimestamp;
  return t ? new Date(t as unknown as string).getTime() : 0;
}

/** The scheduler Events about pods, in logical names; `pods` gives each pod UID's name. */
export function eventRecords(events: EventsV1Event[], runId: string, pods: V1Pod[]): EventRecord[] {
  const nameOf = new Map(pods.map((p) => [p.metadata?.uid, p.metadata?.name]));
  const logical = (text: string) =>
    text
      .replaceAll(`${runId}-`, '')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (uid) =>
        nameOf.has(uid) ? `pod:${nameOf.get(uid)}` : 'pod:<unknown>',
      );
  return events
    .filter((e) => e.regarding?.kind === 'Pod' && SCHEDULER_REASONS.has(e.reason ?? ''))
    .map((e) => ({
      regarding: e.regarding?.name ?? '',
      type: e.type ?? '',
      reason: e.reason ?? '',
      action: e.action ?? '',
      note: logical(e.note ?? ''),
      ...(e.related?.name ? { related: e.related.name } : {}),
      at: observedAt(e),
    }));
}

/** What compareEvents reads of a run. */
export interface EventsOutcome {
  outcomes: PodOutcome[];
  victims: string[];
  events: EventRecord[];
}

const describe = (r: EventRecord, withRelated = true) =>
  `${r.type} ${r.reason}/${r.action} "${r.note}"${withRelated && r.related ? ` related ${r.related}` : ''}`;

/**
 * Each engine's Events against what kube-scheduler writes, for the pods whose outcome both engines share:
 * a pod bound by both has exactly one Scheduled Event naming its node; a pod both leave unschedulable (and
 * not nominated) has FailedScheduling Events, the last of them with its PodScheduled message; a pod both
 * preempted has the same Preempted Event from each (same preemptor, same node).
 */
export function compareEvents(s: Scenario, kube: EventsOutcome, nodeload: EventsOutcome): string[] {
  if (s.expectDifference) return [];
  const out: string[] = [];
  const engines = [
    ['kube-scheduler', kube],
    ['nodeload', nodeload],
  ] as const;
  const about = (run: EventsOutcome, pod: string, reason: string) =>
    run.events.filter((e) => e.regarding === pod && e.reason === reason).sort((a, b) => a.at - b.at);
  const nodeloadOutcome = new Map(nodeload.outcomes.map((o) => [o.pod, o]));
  const preBound = new Set(s.pods.filter((p) => p.spec.nodeName).map((p) => p.name));
  for (const k of kube.outcomes) {
    const n = nodeloadOutcome.get(k.pod);
    if (!n || preBound.has(k.pod)) continue;
    if (k.node && n.node) {
      for (const [engine, run] of engines) {
        const node = run === kube ? k.node : n.node;
        const got = about(run, k.pod, 'Scheduled');
        const want = (r: EventRecord) =>
          r.type === 'Normal' &&
          r.action === 'Binding' &&
          r.note.startsWith('Successfully assigned ') &&
          r.note.endsWith(`/${k.pod} to ${node}`);
        if (got.length !== 1 || !want(got[0] as EventRecord))
          out.push(
            `${engine}: ${k.pod} bound to ${node} should have one Scheduled Event "Successfully assigned <ns>/${k.pod} to ${node}", has [${got.map((e) => describe(e)).join('; ')}]`,
          );
      }
    }
    if (k.unschedulable && n.unschedulable && !k.nominated && !n.nominated) {
      for (const [engine, run] of engines) {
        const message = (run === kube ? k : n).unschedulable?.message ?? '';
        const last = about(run, k.pod, 'FailedScheduling').at(-1);
        if (
          last?.type !== 'Warning' ||
          last.action !== 'Scheduling' ||
          messageShape(last.note) !== messageShape(message)
        )
          out.push(
            `${engine}: ${k.pod}'s last FailedScheduling Event should be Warning FailedScheduling/Scheduling with its PodScheduled message "${message}", is ${last ? describe(last) : 'missing'}`,
          );
      }
    }
  }
  for (const victim of kube.victims.filter((v) => nodeload.victims.includes(v))) {
    const shown = (run: EventsOutcome) =>
      [...new Set(about(run, victim, 'Preempted').map((e) => describe(e, false)))].sort().join('; ') ||
      'none';
    const [kv, nv] = [shown(kube), shown(nodeload)];
    if (kv !== nv) out.push(`Preempted Events of ${victim} differ: kube-scheduler [${kv}], nodeload [${nv}]`);
  }
  for (const e of nodeload.events.filter((e) => e.reason === 'Preempted')) {
    const preemptor = /^Preempted by pod pod:(\S+) on node /.exec(e.note)?.[1];
    if (!preemptor || e.related !== preemptor)
      out.push(
        `nodeload: the Preempted Event of ${e.regarding} should be related to its preemptor: ${describe(e)}`,
      );
  }
  return out;
}

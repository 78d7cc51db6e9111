/**
 * One pod's scheduling cycle (kube-scheduler's scheduleOne and schedulingCycle), run synchronously by
 * the loop: filter and score the nodes over the snapshot (cycle.ts), pick the best — the nominated node
 * when it fits — and assume the pod onto it at once, so the next cycle already counts it; Reserve, then
 * hand the pod to the binding cycle (bind-cycle.ts). When no node fits, PostFilter (preemption) may
 * make room for a later attempt, and the pod waits among the unschedulable ones.
 */
import { randomUUID } from 'node:crypto';
import type { PodInfo } from '../cluster/model.js';
import { rulesForPod } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import type { BindingCycle } from './bind-cycle.js';
import type { SchedulerApi } from './binder.js';
import { type CycleSources, runCycle } from './cycle.js';
import type { DecisionBase, DecisionRecorder } from './decision-recorder.js';
import { buildCandidates, decisionRules, unschedulableMessage, withKeyCandidates } from './explain.js';
import { runReserve } from './framework/runtime-bind.js';
import type { SchedulerMetrics } from './metrics.js';
import { addVerdictFigures } from './plugins/verdict-figures.js';
import type { Preemption } from './preemption.js';
import type { QueuedPod, SchedulingQueue } from './queue.js';
import { threadRunDelayReader } from './run-delay.js';

export interface SchedulingCycleDeps extends CycleSources {
  api: Pick<SchedulerApi, 'markUnschedulable' | 'recordDecision'>;
  queue: SchedulingQueue;
  /** Nominations and evictions around PostFilter (DefaultPreemption). */
  preemption: Pick<Preemption, 'nominatedNode' | 'nominator' | 'run'>;
  binding: Pick<BindingCycle, 'awaitingBind' | 'assume' | 'unassume' | 'run'>;
  recorder: Pick<DecisionRecorder, 'counters' | 'finish' | 'failedEventDue'>;
  /** Every NodeLoadRule the cache holds. */
  rules(): readonly NodeLoadRule[];
  /** Ours, unbound, alive, and let through by the PreEnqueue plugins. */
  isPendingOurs(pod: PodInfo): boolean;
  /** The decisions' reportingInstance. */
  instance: string;
  metrics: Pick<SchedulerMetrics, 'algorithmCpu'>;
  now(): number;
}

export class SchedulingCycle {
  /** Where the next sampled cycle starts filtering (kube-scheduler's nextStartNodeIndex). */
  private nextStartNodeIndex = 0;
  /** The scheduler thread's time waiting for a CPU, ms (run-delay.ts), where the OS reports it. */
  private readonly runDelayMs = threadRunDelayReader();

  constructor(private readonly deps: SchedulingCycleDeps) {}

  /** Schedules the popped pod; its bind, if any, goes on in the background under this `generation`. */
  scheduleOne(entry: QueuedPod, generation: number, signal: AbortSignal): void {
    const { profile, snapshot, cache, loads, queue, preemption, binding } = this.deps;
    const started = this.deps.now();
    // The algorithm's own time on the monotonic clock, to the microsecond: most cycles take less than the
    // millisecond `now()` resolves (a decision's algorithmMs, the algorithm-duration metric).
    const clockStart = performance.now();
    const waitedBefore = this.runDelayMs?.();
    const key = entry.key;
    const pod = cache.pods.get(key);
    // Never place a pod the cache shows bound (or gone, or someone else's).
    if (!pod || !this.deps.isPendingOurs(pod)) {
      queue.delete(key);
      return;
    }
    if (binding.awaitingBind(key, started)) {
      // A bind for it is still in flight (or its outcome unknown): look again after a backoff rather
      // than dropping the entry — if that bind fails, the pod must still be in the queue.
      queue.requeueAfterError(key, 'waiting for the outcome of a previous bind');
      return;
    }
    const rules = rulesForPod(this.deps.rules(), pod);
    // A nominated pod goes to its nominated node when that fits (upstream's evaluateNominatedNode):
    // every node is filtered for it, so the nominated one is never left out of a sample.
    const nominated = preemption.nominatedNode(pod);
    const { ctx, state, pre, verdicts, ranked, examined, nextStart } = runCycle({
      profile,
      pod,
      snapshot,
      rules,
      loads: loads.all(),
      loadOptions: loads.options,
      namespaces: cache.namespaces,
      nominated: preemption.nominator,
      ...(nominated ? {} : { sampleFrom: this.nextStartNodeIndex }),
      // Load figures and rule checks are built below for the candidates the decision keeps: ~10 of the
      // 420–1,000 verdicts at 1,000 nodes.
      deferVerdictFigures: true,
      now: started,
    });
    if (!nominated) this.nextStartNodeIndex = nextStart;
    const totalNodes = snapshot.size;
    const algorithmMs = performance.now() - clockStart;
    if (waitedBefore !== undefined && this.runDelayMs) {
      const waited = this.runDelayMs() - waitedBefore;
      this.deps.metrics.algorithmCpu(Math.max(0, algorithmMs - waited) / 1000);
    }
    const base: DecisionBase = {
      id: randomUUID(),
      namespace: pod.namespace,
      pod: pod.name,
      podUid: pod.uid,
      time: new Date(started).toISOString(),
      algorithmMs,
      attempts: entry.attempts,
      rules: decisionRules(rules),
      totalNodes,
      examinedNodes: examined,
      feasibleNodes: ranked.length,
      candidates: buildCandidates(verdicts, ranked),
      reportingInstance: this.deps.instance,
      engine: 'native',
    };
    const best = (nominated && ranked.find((r) => r.node === nominated)) || ranked[0];
    if (!best) {
      // An unschedulable pod's decision keeps every verdict: each node's numbers are its explanation.
      addVerdictFigures(verdicts, ctx);
      const message = unschedulableMessage(totalNodes, verdicts);
      const { sentence, record } = preemption.run(profile, pre, ctx, verdicts);
      const failed = record ? { ...base, preemption: record } : base;
      this.failUnschedulable(entry, pod, failed, sentence ? `${message} ${sentence}` : message);
      return;
    }
    const decided = withKeyCandidates({ ...base, node: best.node });
    // Before the pod is assumed: the rule checks read the node's labels from the cycle's snapshot.
    addVerdictFigures(decided.candidates, ctx);
    binding.assume(pod, best.node, rules);
    const refused = runReserve(profile, state, ctx, best.node);
    if (refused) {
      binding.unassume(key);
      addVerdictFigures(base.candidates, ctx);
      this.failUnschedulable(entry, pod, { ...base, node: best.node }, `Reserve failed: ${refused}`);
      return;
    }
    binding.run({ entry, pod, base: decided, cycle: { ctx, state } }, generation, signal);
  }

  /** kube-scheduler's handleSchedulingFailure: back among the unschedulable pods, PodScheduled=False, an Event. */
  private failUnschedulable(entry: QueuedPod, pod: PodInfo, base: DecisionBase, message: string): void {
    const { api, recorder } = this.deps;
    const key = entry.key;
    this.deps.queue.requeueUnschedulable(key, message);
    recorder.counters.unschedulable++;
    const d = recorder.finish(base, 'unschedulable', message, entry);
    api.markUnschedulable(pod, message);
    if (recorder.failedEventDue(key, message)) api.recordDecision(d);
  }
}

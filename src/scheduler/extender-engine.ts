/**
 * The scheduler's second front door: kube-scheduler's extender calls (src/extender speaks their wire
 * format) decided by the loop's own cycle (runCycle) over the same snapshot, loads, rules and placement
 * log, with nodeload's own plugins only — kube-scheduler has run upstream's before it asks. A bind
 * assumes the pod exactly as the loop does (snapshot, load tracker, burst log), so in-flight estimates
 * stay exact whichever engine placed a pod, and its decision goes to the same history and subscribers,
 * marked engine 'extender'.
 *
 * kube-scheduler calls filter, then prioritize, then bind for one attempt, naming the pod only by
 * name and UID at bind: the attempt's verdicts are kept per pod (bounded) until then, so the decision
 * carries the same explanation a native one does.
 */
import { randomUUID } from 'node:crypto';
import { type PodInfo, podKey } from '../cluster/model.js';
import { withPod } from '../load/model.js';
import type { NodeLoad } from '../load/types.js';
import { rulesForPod } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import { AwaitedBinds, type PendingBind } from './awaited-binds.js';
import type { SchedulerApi } from './binder.js';
import { type CycleSources, runCycle } from './cycle.js';
import {
  buildCandidates,
  type Decision,
  type DecisionResult,
  decisionRules,
  scheduledMessage,
  unschedulableMessage,
} from './explain.js';
import type { RankedNode } from './framework/runtime-score.js';
import type { NodeVerdict } from './framework/verdict.js';
import { acquireToken, type TokenBucket } from './ratelimit.js';

/** A pod as kube-scheduler's binding names it. */
export interface PodRef {
  namespace: string;
  name: string;
  uid: string;
}

export type ExtenderFilterOutcome =
  /** No rule covers the pod: every node passes, nothing is recorded. */
  | { kind: 'pass-through' }
  /** One verdict per node named (unknown nodes included), in the order given. */
  | { kind: 'decided'; verdicts: NodeVerdict[] };

export type ExtenderScoresOutcome =
  | { kind: 'pass-through' }
  /** Per node named: the profile's weighted mean score, 0–100 (0 for a node that no longer fits). */
  | { kind: 'decided'; scores: { node: string; score: number }[] };

export interface ExtenderEngineDeps extends CycleSources {
  api: Pick<SchedulerApi, 'bind' | 'recordDecision'>;
  /** The gateway's API rate limiter for binds (the loop's). */
  bindBucket: TokenBucket;
  rules(): readonly NodeLoadRule[];
  /** The loop's assume: snapshot, load tracker and burst log at once. */
  assume(pod: PodInfo, node: string, rules: readonly NodeLoadRule[]): void;
  unassume(key: string): void;
  isAssumed(key: string): boolean;
  /** Into the history and to every decision subscriber. */
  publish(decision: Decision): void;
  /** The decisions' reportingInstance. */
  instance: string;
  now(): number;
  /** Attempts remembered between filter and bind (default 5000; the oldest go first). */
  maxAttempts?: number;
  /** How long a bind of unknown outcome (timeout, 5xx) keeps its assumption (default 10 s). */
  unconfirmedBindMs?: number;
  /**
   * How long a covered pod's filter waits for the binds of pods let through before it (default 1 s;
   * kube-scheduler's extender httpTimeout is 5 s by default).
   */
  maxBindWaitMs?: number;
}

/** One kube-scheduler attempt for a pod covered by a rule, from its filter call to its bind. */
interface Attempt {
  pod: PodInfo;
  rules: NodeLoadRule[];
  /** The first filter call for this pod: the e2e latency starts here. */
  firstSeen: number;
  attempts: number;
  /** This attempt's filter call. */
  started: number;
  algorithmMs: number;
  verdicts: NodeVerdict[];
  /** Scores of the feasible nodes (the filter cycle's, or prioritize's over the same nodes). */
  ranked: RankedNode[];
}

const DEFAULT_MAX_ATTEMPTS = 5000;
const DEFAULT_UNCONFIRMED_BIND_MS = 10_000;
const DEFAULT_MAX_BIND_WAIT_MS = 1000;

function sameNodes(ranked: readonly RankedNode[], feasible: ReadonlySet<string>): boolean {
  return ranked.length === feasible.size && ranked.every((r) => feasible.has(r.node));
}

export class ExtenderEngine {
  /** By pod UID, oldest first. */
  private readonly attempts = new Map<string, Attempt>();
  private readonly maxAttempts: number;
  private readonly scoreWeights: number;
  private readonly awaited: AwaitedBinds<PodInfo>;
  /** UIDs this front door bound recently (bounded, oldest first): see boundHere(). */
  private readonly bound = new Set<string>();

  constructor(private readonly deps: ExtenderEngineDeps) {
    this.maxAttempts = Math.max(1, deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    this.awaited = new AwaitedBinds<PodInfo>(deps.now, this.maxAttempts);
    const total = deps.profile.score.reduce((sum, s) => sum + s.weight, 0);
    this.scoreWeights = total > 0 ? total : 1;
  }

  /**
   * Every pod let through is expected to bind next (its load counts for the rules, covered or not); a
   * covered pod is judged only once the binds of the pods let through before it have arrived (or were
   * given up on after maxBindWaitMs): see AwaitedBinds — unless they cannot change its answer.
   */
  async filter(pod: PodInfo, nodeNames: readonly string[]): Promise<ExtenderFilterOutcome> {
    const rules = rulesForPod(this.deps.rules(), pod);
    if (rules.length === 0) {
      if (nodeNames.length > 0) this.awaited.expect(pod.uid, pod, nodeNames);
      return { kind: 'pass-through' };
    }
    this.awaited.arrived(pod.uid);
    const key = podKey(pod);
    // kube-scheduler asks again only when its bind failed: an assumption we still hold is stale.
    if (this.deps.isAssumed(key)) this.deps.unassume(key);
    let started = this.deps.now();
    let result = this.cycle(pod, rules, nodeNames, started);
    const maxWaitMs = this.deps.maxBindWaitMs ?? DEFAULT_MAX_BIND_WAIT_MS;
    const earlier = this.awaited.pendingExcept(pod.uid, maxWaitMs);
    if (earlier.length > 0 && !this.unaffectedBy(earlier, pod, rules, result.verdicts, started)) {
      await this.awaited.waitForEarlier(pod.uid, maxWaitMs);
      started = this.deps.now();
      result = this.cycle(pod, rules, nodeNames, started);
    }
    const { verdicts, ranked } = result;
    const previous = this.attempts.get(pod.uid);
    const attempt: Attempt = {
      pod,
      rules,
      firstSeen: previous?.firstSeen ?? started,
      attempts: (previous?.attempts ?? 0) + 1,
      started,
      algorithmMs: this.deps.now() - started,
      verdicts,
      ranked,
    };
    this.remember(pod.uid, attempt);
    if (ranked.length > 0) {
      this.awaited.expect(
        pod.uid,
        pod,
        verdicts.filter((v) => v.feasible).map((v) => v.node),
      );
    }
    if (ranked.length === 0) {
      // kube-scheduler reports the FailedScheduling itself (its message counts our reasons with its
      // own); the history still gets the attempt with every node's numbers.
      const message = unschedulableMessage(verdicts.length, verdicts);
      this.deps.publish(this.decision(attempt, pod, 'unschedulable', message));
    }
    return { kind: 'decided', verdicts };
  }

  prioritize(pod: PodInfo, nodeNames: readonly string[]): ExtenderScoresOutcome {
    const rules = rulesForPod(this.deps.rules(), pod);
    if (rules.length === 0) return { kind: 'pass-through' };
    const started = this.deps.now();
    const { ranked } = this.cycle(pod, rules, nodeNames, started);
    const attempt = this.attempts.get(pod.uid);
    if (attempt) {
      attempt.algorithmMs += this.deps.now() - started;
      const feasible = new Set(attempt.verdicts.filter((v) => v.feasible).map((v) => v.node));
      if (sameNodes(ranked, feasible)) attempt.ranked = ranked;
    }
    const byNode = new Map(ranked.map((r) => [r.node, r.score / this.scoreWeights]));
    return {
      kind: 'decided',
      scores: nodeNames.map((node) => ({ node, score: byNode.get(node) ?? 0 })),
    };
  }

  /**
   * Binds through pods/binding (with the UID precondition), assuming the pod first; resolves with the
   * error kube-scheduler should see, or undefined when bound.
   */
  async bind(ref: PodRef, node: string, signal?: AbortSignal): Promise<string | undefined> {
    try {
      return await this.bindAssumed(ref, node, signal);
    } finally {
      // Normally the pod is assumed by now: filters waiting for it may judge with it counted.
      this.awaited.arrived(ref.uid);
    }
  }

  private async bindAssumed(ref: PodRef, node: string, signal?: AbortSignal): Promise<string | undefined> {
    const key = podKey(ref);
    const cached = this.deps.cache.pods.get(key);
    if (cached && ref.uid && cached.uid !== ref.uid) {
      return `pod ${key} has UID ${cached.uid}, not ${ref.uid}: it was replaced`;
    }
    if (cached?.nodeName) return `pod ${key} is already bound to ${cached.nodeName}`;
    const attempt = this.attempts.get(ref.uid);
    this.attempts.delete(ref.uid);
    const pod = cached ?? attempt?.pod;
    const rules = attempt?.rules ?? (pod ? rulesForPod(this.deps.rules(), pod) : []);
    try {
      await acquireToken(this.deps.bindBucket, signal);
    } catch {
      return 'binding aborted while waiting for the rate limiter';
    }
    // Without the pod's spec (neither cache nor filter has seen it) there is nothing to assume.
    if (pod) this.deps.assume(pod, node, rules);
    this.awaited.arrived(ref.uid);
    // Before the call: the watch may show the pod bound before the bind's response reaches us.
    this.rememberBound(ref.uid);
    const outcome = await this.deps.api.bind(pod ?? ref, node);
    if (outcome.kind === 'bound') {
      if (rules.length > 0) {
        const d = this.decision(
          attempt ?? this.bareAttempt(rules),
          ref,
          'scheduled',
          scheduledMessage(ref.namespace, ref.name, node),
          node,
        );
        this.deps.publish(d);
        this.deps.api.recordDecision(d);
      }
      return undefined;
    }
    const unknownOutcome =
      outcome.kind === 'failed' && (outcome.status === undefined || outcome.status >= 500);
    // A bind of unknown outcome may have been ours; any other failure was not.
    if (!unknownOutcome) this.bound.delete(ref.uid);
    if (!pod) {
      // nothing assumed
    } else if (unknownOutcome) {
      // The bind may have committed with its response lost: keep the headroom taken until the watch
      // shows the pod (which settles the assumption) or the deadline passes.
      const timer = setTimeout(() => {
        if (this.deps.isAssumed(key)) this.deps.unassume(key);
      }, this.deps.unconfirmedBindMs ?? DEFAULT_UNCONFIRMED_BIND_MS);
      timer.unref();
    } else {
      this.deps.unassume(key);
    }
    const message = `Binding rejected: ${outcome.message}`;
    if (rules.length > 0 && outcome.kind === 'failed') {
      this.deps.publish(this.decision(attempt ?? this.bareAttempt(rules), ref, 'error', message, node));
    }
    return message;
  }

  /**
   * Whether this front door bound the pod (recently: the last maxAttempts binds). A covered pod bound
   * otherwise while kube-scheduler is meant to call nodeload was placed without its rules: kube-scheduler
   * skipped the extender (an ignorable one that failed or could not be reached) or another scheduler did it.
   */
  boundHere(uid: string): boolean {
    return this.bound.has(uid);
  }

  private rememberBound(uid: string): void {
    this.bound.add(uid);
    for (const oldest of this.bound) {
      if (this.bound.size <= this.maxAttempts) break;
      this.bound.delete(oldest);
    }
  }

  /** Attempts remembered (for tests and status). */
  get trackedAttempts(): number {
    return this.attempts.size;
  }

  /**
   * Whether the pods let through before this one, whose binds have not arrived, cannot change its
   * feasible nodes: those stay the same with each of them counted on every node it may bind to. The
   * extender's filters are NodeLoadRules, which more load only narrows, and BurstGuard, which reads the
   * placement log instead of the loads — so with a burst limit checked, the answer always waits. A node
   * infeasible without them stays infeasible with them, so only the feasible ones are judged again.
   */
  private unaffectedBy(
    earlier: readonly PendingBind<PodInfo>[],
    pod: PodInfo,
    rules: readonly NodeLoadRule[],
    verdicts: readonly NodeVerdict[],
    now: number,
  ): boolean {
    const feasible = verdicts.filter((v) => v.feasible);
    if (feasible.length === 0) return true;
    if (feasible.some((v) => v.burst || v.rules.some((r) => r.burst))) return false;
    // Only the judged nodes' loads: a cycle reads the loads of the nodes it examines alone.
    const { loads } = this.deps;
    const current = loads.all();
    const pessimistic = new Map<string, NodeLoad>();
    for (const { node } of feasible) {
      const load = current.get(node);
      if (load) pessimistic.set(node, load);
    }
    for (const e of earlier) {
      for (const node of e.nodes) {
        const load = pessimistic.get(node);
        if (load) pessimistic.set(node, withPod(load, e.pod, loads.options));
      }
    }
    const judged = feasible.map((v) => v.node);
    const again = this.cycle(pod, rules, judged, now, pessimistic);
    return again.verdicts.every((v) => v.feasible);
  }

  private cycle(
    pod: PodInfo,
    rules: readonly NodeLoadRule[],
    nodeNames: readonly string[],
    now: number,
    loadsOverride?: ReadonlyMap<string, NodeLoad>,
  ) {
    const { cache, loads } = this.deps;
    return runCycle({
      profile: this.deps.profile,
      pod,
      snapshot: this.deps.snapshot,
      rules,
      loads: loadsOverride ?? loads.all(),
      loadOptions: loads.options,
      namespaces: cache.namespaces,
      nodeNames,
      now,
    });
  }

  private remember(uid: string, attempt: Attempt): void {
    this.attempts.delete(uid);
    this.attempts.set(uid, attempt);
    for (const oldest of this.attempts.keys()) {
      if (this.attempts.size <= this.maxAttempts) break;
      this.attempts.delete(oldest);
    }
  }

  /** A bind with no filter call before it (kube-scheduler configured without filterVerb, or we restarted). */
  private bareAttempt(rules: NodeLoadRule[]): Omit<Attempt, 'pod'> {
    const now = this.deps.now();
    return {
      rules,
      firstSeen: now,
      attempts: 1,
      started: now,
      algorithmMs: 0,
      verdicts: [],
      ranked: [],
    };
  }

  private decision(
    attempt: Omit<Attempt, 'pod'>,
    pod: PodRef,
    result: DecisionResult,
    message: string,
    node?: string,
  ): Decision {
    const end = this.deps.now();
    return {
      id: randomUUID(),
      namespace: pod.namespace,
      pod: pod.name,
      podUid: pod.uid,
      result,
      ...(node ? { node } : {}),
      time: new Date(attempt.started).toISOString(),
      algorithmMs: attempt.algorithmMs,
      latencyMs: Math.max(attempt.algorithmMs, end - attempt.started),
      e2eLatencyMs: end - attempt.firstSeen,
      attempts: attempt.attempts,
      message,
      rules: decisionRules(attempt.rules),
      totalNodes: attempt.verdicts.length,
      feasibleNodes: attempt.verdicts.filter((v) => v.feasible).length,
      // The verdicts are this attempt's own: buildCandidates extends them in place, once.
      candidates: buildCandidates(attempt.verdicts, attempt.ranked),
      reportingInstance: this.deps.instance,
      engine: 'extender',
    };
  }
}

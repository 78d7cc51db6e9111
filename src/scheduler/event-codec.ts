/**
 * Decisions ↔ the Events the scheduler writes, so the history survives a restart. The Event's note is
 * the human text (kube-scheduler's wording, ≤ 1 KB as the API requires); the full decision travels as a
 * compact JSON annotation on the Event with what the history keeps of an old decision: the best feasible
 * candidates and one node per distinct reason (keyCandidates), within a byte cap. Every Scheduled Event
 * is written to etcd: at 1,000 nodes carrying ~100 candidates made each one 16 KB, and the API server's
 * and etcd's share of the box went to storing explanations nobody reads in full after a restart. Even
 * the 10 best feasible nodes the in-memory history keeps made a Scheduled Event 3.7 KB against
 * kube-scheduler's ~1 KB, and at 5,000 nodes the 2-core API server could not store them as fast as pods
 * were bound; the Event keeps the chosen node and its two runners-up (EVENT_FEASIBLE_CANDIDATES).
 */

import {
  type Candidate,
  type Decision,
  type DecisionPreemption,
  type DecisionResult,
  type DecisionRule,
  keyCandidates,
} from './explain.js';
import type { FilterReason } from './framework/types.js';
import type { CandidateLoad, RuleCheck, ScoreContribution } from './framework/verdict.js';

export const DECISION_ANNOTATION = 'scheduling.nodeload.example.com/decision';
export const MAX_NOTE_BYTES = 1024;
export const MAX_DECISION_ANNOTATION_BYTES = 16 * 1024;
/** Feasible nodes an Event keeps: the one chosen and the two it beat most narrowly. */
export const EVENT_FEASIBLE_CANDIDATES = 3;

// biome-ignore lint/suspicious/noExplicitAny: Events read back are untyped JSON.
type Json = any;

/** The parts of an events.k8s.io/v1 Event that carry a decision (eventTime is added at the I/O edge). */
export interface DecisionEvent {
  namespace: string;
  reason: 'Scheduled' | 'FailedScheduling';
  action: 'Binding' | 'Scheduling';
  type: 'Normal' | 'Warning';
  note: string;
  regarding: { apiVersion: 'v1'; kind: 'Pod'; namespace: string; name: string; uid: string };
  annotations: Record<string, string>;
}

const LOAD_FIELDS = [
  'cpuPercent',
  'memoryPercent',
  'cpuPercentAfter',
  'memoryPercentAfter',
  'estimatedCpuMilli',
  'estimatedMemoryBytes',
  'estimatedPods',
  'requestedCpuMilli',
  'requestedMemoryBytes',
  'allocatableCpuMilli',
  'allocatableMemoryBytes',
  'podCount',
  'allocatablePods',
] as const;

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Cuts a string to at most `max` UTF-8 bytes, ending with an ellipsis when cut. */
export function truncateBytes(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  let out = s.slice(0, max);
  while (Buffer.byteLength(`${out}…`) > max) out = out.slice(0, -1);
  return `${out}…`;
}

type CompactBurst = [number, number, number];
/** code, reason, detail, plugin, then 1 when unresolvable. */
type CompactReason = [string, string, string, string, 1?];
type CompactRule = [string, number, number, number, number, CompactBurst?];
type CompactCandidate = [
  string,
  number,
  number | null,
  [string, number, number][] | null,
  number | null,
  (string | number)[] | null,
  CompactReason[],
  CompactRule[],
  CompactBurst?,
];

function compactBurst(b: { placements: number; maxPlacements: number; windowSeconds: number }): CompactBurst {
  return [b.placements, b.maxPlacements, b.windowSeconds];
}

function compactLoad(l: CandidateLoad): (string | number)[] {
  return [l.source, l.metricsStale ? 1 : 0, l.unavailable ? 1 : 0, ...LOAD_FIELDS.map((f) => round2(l[f]))];
}

function compactCandidate(c: Candidate): CompactCandidate {
  const out: CompactCandidate = [
    c.node,
    c.feasible ? 1 : 0,
    c.score === undefined ? null : round2(c.score),
    c.scoreParts ? c.scoreParts.scores.map((x) => [x.plugin, x.weight, round2(x.score)]) : null,
    c.rank ?? null,
    c.load ? compactLoad(c.load) : null,
    c.reasons.map((r): CompactReason => {
      const out: CompactReason = [r.code, r.reason, r.detail, r.plugin];
      if (r.unresolvable) out.push(1);
      return out;
    }),
    c.rules.map((r) => {
      const rule: CompactRule = [
        r.rule,
        r.allowed ? 1 : 0,
        r.bypassed ? 1 : 0,
        round2(r.cpuMargin),
        round2(r.memoryMargin),
      ];
      if (r.burst) rule.push(compactBurst(r.burst));
      return rule;
    }),
  ];
  if (c.burst) out.push(compactBurst(c.burst));
  return out;
}

/** Victims a decision's Event carries at most (a preemption evicts a few; its message says the rest). */
const MAX_EVENT_VICTIMS = 50;

/** What preemption did: [node ('' for none), [[namespace, name, priority]…], message]. */
function compactPreemption(p: DecisionPreemption): [string, [string, string, number][], string] {
  const victims = p.victims
    .slice(0, MAX_EVENT_VICTIMS)
    .map((v): [string, string, number] => [v.namespace, v.name, v.priority]);
  return [p.node ?? '', victims, truncateBytes(p.message, MAX_NOTE_BYTES)];
}

function decodePreemption(v: Json): DecisionPreemption | undefined {
  if (!Array.isArray(v)) return undefined;
  const victims = (Array.isArray(v[1]) ? v[1] : [])
    .filter((x: Json) => Array.isArray(x))
    .map((x: Json) => ({ namespace: str(x[0]), name: str(x[1]), priority: num(x[2]) }));
  return { ...(str(v[0]) ? { node: str(v[0]) } : {}), victims, message: str(v[2]) };
}

/**
 * The decision as compact JSON of at most maxBytes with its key candidates (the best
 * EVENT_FEASIBLE_CANDIDATES feasible first, then one per distinct reason), dropping the least important
 * of those if they do not fit.
 */
export function encodeDecision(d: Decision, maxBytes = MAX_DECISION_ANNOTATION_BYTES): string {
  const ordered = keyCandidates(d.candidates, EVENT_FEASIBLE_CANDIDATES);
  const base = {
    v: 2,
    id: d.id,
    r: d.result,
    n: d.node,
    t: d.time,
    am: round2(d.algorithmMs),
    lm: round2(d.latencyMs),
    em: round2(d.e2eLatencyMs),
    a: d.attempts,
    ri: d.reportingInstance,
    // Native is the default: only the extender's decisions carry the engine.
    en: d.engine === 'extender' ? 'x' : undefined,
    tn: d.totalNodes,
    xn: d.examinedNodes,
    fn: d.feasibleNodes,
    ru: d.rules.map((r) => [
      r.namespace,
      r.name,
      r.maxCPU,
      r.maxMemory,
      r.burst?.maxPlacements,
      r.burst?.windowSeconds,
    ]),
    m: Buffer.byteLength(d.message) > MAX_NOTE_BYTES ? truncateBytes(d.message, 4096) : undefined,
    p: d.preemption ? compactPreemption(d.preemption) : undefined,
  };
  // Candidates are compacted one at a time, most important first, until the budget is spent: the others
  // are never serialised (this runs for every decision on the scheduler's hot path).
  const frame = (om: number, items: string) => {
    const json = JSON.stringify({ ...base, om: om || undefined, c: [] });
    return `${json.slice(0, -3)}[${items}]}`; // "c":[] is the last member
  };
  const prior = d.candidatesOmitted ?? 0;
  const budget = maxBytes - Buffer.byteLength(frame(d.candidates.length + prior, ''));
  const items: string[] = [];
  let used = 0;
  for (const c of ordered) {
    const item = JSON.stringify(compactCandidate(c));
    const size = Buffer.byteLength(item) + (items.length > 0 ? 1 : 0);
    if (used + size > budget) break;
    items.push(item);
    used += size;
  }
  return frame(d.candidates.length - items.length + prior, items.join(','));
}

export function decisionEvent(d: Decision): DecisionEvent {
  const scheduled = d.result === 'scheduled';
  return {
    namespace: d.namespace,
    reason: scheduled ? 'Scheduled' : 'FailedScheduling',
    action: scheduled ? 'Binding' : 'Scheduling',
    type: scheduled ? 'Normal' : 'Warning',
    note: truncateBytes(d.message, MAX_NOTE_BYTES),
    regarding: { apiVersion: 'v1', kind: 'Pod', namespace: d.namespace, name: d.pod, uid: d.podUid },
    annotations: { [DECISION_ANNOTATION]: encodeDecision(d) },
  };
}

const num = (v: unknown, fallback = 0): number =>
  typeof v === 'number' && Number.isFinite(v) ? v : fallback;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function decodeBurst(
  v: Json,
): { placements: number; maxPlacements: number; windowSeconds: number } | undefined {
  return Array.isArray(v)
    ? { placements: num(v[0]), maxPlacements: num(v[1]), windowSeconds: num(v[2]) }
    : undefined;
}

function decodeLoad(v: Json): CandidateLoad | undefined {
  if (!Array.isArray(v)) return undefined;
  const load = {
    source: str(v[0]) || 'requests',
    metricsStale: v[1] === 1,
    unavailable: v[2] === 1,
  } as CandidateLoad;
  LOAD_FIELDS.forEach((f, i) => {
    load[f] = num(v[3 + i]);
  });
  return load;
}

function decodeCandidate(
  v: Json,
  rules: Map<string, DecisionRule>,
  namespace: string,
): Candidate | undefined {
  if (!Array.isArray(v) || typeof v[0] !== 'string') return undefined;
  const reasons: FilterReason[] = (Array.isArray(v[6]) ? v[6] : []).map((r: Json) => {
    // Decisions written before plugins were named (v1) carry no plugin.
    const reason: FilterReason = {
      code: str(r?.[0]),
      plugin: str(r?.[3]) || 'unknown',
      reason: str(r?.[1]),
      detail: str(r?.[2]),
    };
    if (r?.[4] === 1) reason.unresolvable = true;
    return reason;
  });
  for (const r of reasons) {
    const m = /rule (\S+)/.exec(r.reason);
    if (m?.[1] && (r.plugin === 'NodeLoadRules' || r.plugin === 'BurstGuard')) r.rule = m[1];
  }
  const ruleChecks: RuleCheck[] = (Array.isArray(v[7]) ? v[7] : []).map((r: Json) => {
    const def = rules.get(str(r?.[0]));
    const check: RuleCheck = {
      rule: str(r?.[0]),
      namespace: def?.namespace ?? namespace,
      allowed: r?.[1] === 1,
      bypassed: r?.[2] === 1,
      maxCPU: def?.maxCPU ?? 0,
      maxMemory: def?.maxMemory ?? 0,
      cpuMargin: num(r?.[3]),
      memoryMargin: num(r?.[4]),
    };
    const burst = decodeBurst(r?.[5]);
    if (burst) check.burst = burst;
    return check;
  });
  const c: Candidate = { node: v[0], feasible: v[1] === 1, reasons, rules: ruleChecks };
  const load = decodeLoad(v[5]);
  if (load) c.load = load;
  if (typeof v[2] === 'number') c.score = v[2];
  if (Array.isArray(v[3])) {
    const scores = (v[3] as Json[]).map(
      (x): ScoreContribution => ({ plugin: str(x?.[0]), weight: num(x?.[1]), score: num(x?.[2]) }),
    );
    c.scoreParts = { scores };
  }
  if (typeof v[4] === 'number') c.rank = v[4];
  const burst = decodeBurst(v[8]);
  if (burst) c.burst = burst;
  return c;
}

function eventTimeOf(ev: Json): string {
  for (const t of [ev?.eventTime, ev?.deprecatedFirstTimestamp, ev?.metadata?.creationTimestamp]) {
    if (t instanceof Date) return t.toISOString();
    if (typeof t === 'string' && t) return t;
  }
  return new Date(0).toISOString();
}

/**
 * A decision back from an Event this scheduler wrote (events.k8s.io/v1 shape, raw or deserialised).
 * Without the annotation (written by an older version, or stripped) only the outline is recovered.
 */
export function decisionFromEvent(ev: Json): Decision | undefined {
  const reason = str(ev?.reason);
  if (reason !== 'Scheduled' && reason !== 'FailedScheduling') return undefined;
  const regarding = ev?.regarding ?? ev?.involvedObject ?? {};
  const namespace = str(regarding.namespace) || str(ev?.metadata?.namespace);
  const note = str(ev?.note ?? ev?.message);
  let c: Json;
  try {
    c = JSON.parse(str(ev?.metadata?.annotations?.[DECISION_ANNOTATION]) || 'null');
  } catch {
    c = null;
  }
  const result: DecisionResult =
    reason === 'Scheduled' ? 'scheduled' : c?.r === 'error' ? 'error' : 'unschedulable';
  const rules: DecisionRule[] = (Array.isArray(c?.ru) ? c.ru : []).map((r: Json) => {
    const rule: DecisionRule = {
      namespace: str(r?.[0]),
      name: str(r?.[1]),
      maxCPU: num(r?.[2]),
      maxMemory: num(r?.[3]),
    };
    if (typeof r?.[4] === 'number') rule.burst = { maxPlacements: r[4], windowSeconds: num(r?.[5]) };
    return rule;
  });
  const ruleMap = new Map(rules.map((r) => [r.name, r]));
  const candidates = (Array.isArray(c?.c) ? c.c : [])
    .map((x: Json) => decodeCandidate(x, ruleMap, namespace))
    .filter((x: Candidate | undefined): x is Candidate => x !== undefined);
  const assigned = /^Successfully assigned \S+ to (\S+)$/.exec(note)?.[1];
  const d: Decision = {
    id: str(c?.id) || `event-${str(ev?.metadata?.uid) || str(ev?.metadata?.name)}`,
    namespace,
    pod: str(regarding.name),
    podUid: str(regarding.uid),
    result,
    time: str(c?.t) || eventTimeOf(ev),
    algorithmMs: num(c?.am),
    latencyMs: num(c?.lm),
    e2eLatencyMs: num(c?.em),
    attempts: num(c?.a, 1),
    message: str(c?.m) || note,
    rules,
    totalNodes: num(c?.tn, candidates.length),
    ...(c?.xn !== undefined ? { examinedNodes: num(c.xn) } : {}),
    feasibleNodes: num(c?.fn),
    candidates,
    reportingInstance: str(c?.ri) || str(ev?.reportingInstance),
    rebuilt: true,
  };
  if (c?.en === 'x') d.engine = 'extender';
  const node = str(c?.n) || assigned;
  if (node) d.node = node;
  if (typeof c?.om === 'number') d.candidatesOmitted = c.om;
  const preemption = decodePreemption(c?.p);
  if (preemption) d.preemption = preemption;
  return d;
}

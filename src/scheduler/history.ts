/**
 * The bounded in-memory history of decisions, newest first, with filters and cursor pagination.
 * Bounded twice: by the number of decisions and by the bytes their candidates hold (estimated; see
 * candidateBytes), since one decision on a large cluster carries hundreds of verdicts with their load
 * figures. Over the byte budget, older decisions first lose their detail (keeping the best feasible
 * nodes and one node per distinct reason; see candidatesOmitted) and only then are evicted, so a large
 * cluster still has a long history.
 */
import { type Candidate, type Decision, type DecisionResult, withKeyCandidates } from './explain.js';

export interface HistoryQuery {
  namespace?: string;
  pod?: string;
  /** Decisions that chose (or tried to bind to) this node. */
  node?: string;
  result?: DecisionResult;
  /** ISO time or ms since the epoch: decisions at or after it. */
  since?: string | number;
  /** Page size (default 50, at most 500). */
  limit?: number;
  /** The cursor of the previous page: continue after it. */
  after?: string;
  /** Only decisions of namespaces it accepts (what the asking user may read), filling the page with them. */
  acceptNamespace?: (namespace: string) => boolean;
}

export interface HistoryPage {
  items: Decision[];
  /** Present when more (older) decisions match. */
  nextCursor?: string;
}

export interface HistoryLimits {
  maxDecisions?: number;
  /** What the decisions' candidates may hold, in (estimated) bytes. */
  maxBytes?: number;
  /**
   * What the decisions still holding every candidate may hold (estimated bytes): older ones keep their
   * key candidates only. Kept small because a detailed decision outlives the young generation: at 1,000
   * nodes every examined node's verdict was promoted and later collected by full GCs, a quarter of the
   * scheduler's CPU at 30 pods/s with the whole 64 MiB detailed.
   */
  maxDetailedBytes?: number;
}

interface Entry {
  seq: number;
  timeMs: number;
  decision: Decision;
  /** Estimated bytes of its candidates. */
  bytes: number;
  summarized?: boolean;
}

export const DEFAULT_MAX_DECISIONS = 2000;
/** 64 MiB: ~100,000 candidates with their load figures (~240 full decisions at 1,000 nodes). */
export const DEFAULT_MAX_BYTES = 64 * 2 ** 20;
/** 8 MiB: the newest ~30 decisions at 1,000 nodes keep every node examined (with few pods, minutes of them). */
export const DEFAULT_MAX_DETAILED_BYTES = 8 * 2 ** 20;

/**
 * A candidate's retained size, estimated: measured in heap snapshots of the scheduler at 1,000 nodes,
 * a feasible node with its load figures and score row holds ~670 bytes; each reason adds its object
 * and its detail string, each rule check its object and margins.
 */
export function candidateBytes(c: Candidate): number {
  let bytes = 400 + (c.load ? 280 : 0);
  for (const r of c.reasons) bytes += 80 + 2 * r.detail.length;
  bytes += 120 * c.rules.length;
  return bytes;
}

function decisionBytes(d: Decision): number {
  let bytes = 0;
  for (const c of d.candidates) bytes += candidateBytes(c);
  return bytes;
}
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;

function encodeCursor(seq: number): string {
  return seq.toString(36);
}

function decodeCursor(cursor: string): number | undefined {
  if (!/^[0-9a-z]+$/.test(cursor)) return undefined;
  const n = Number.parseInt(cursor, 36);
  return Number.isSafeInteger(n) ? n : undefined;
}

function sinceMs(since: string | number | undefined): number | undefined {
  if (since === undefined) return undefined;
  if (typeof since === 'number') return since;
  const t = Date.parse(since);
  return Number.isNaN(t) ? undefined : t;
}

export class InvalidCursorError extends Error {
  constructor(cursor: string) {
    super(`invalid cursor "${cursor}"`);
  }
}

export class DecisionHistory {
  /** Oldest first; `start` skips evicted entries until the array is compacted. */
  private entries: Entry[] = [];
  private start = 0;
  /** Entries before this index are summarized already. */
  private summarizeFrom = 0;
  private readonly byId = new Map<string, Entry>();
  /** The estimated bytes held by the candidates of the decisions kept. */
  private held = 0;
  /** The part of `held` in decisions not summarized yet. */
  private detailed = 0;
  private seq = 0;
  readonly maxDecisions: number;
  readonly maxBytes: number;
  readonly maxDetailedBytes: number;

  constructor(limits: HistoryLimits = {}) {
    this.maxDecisions = Math.max(1, limits.maxDecisions ?? DEFAULT_MAX_DECISIONS);
    this.maxBytes = Math.max(1, limits.maxBytes ?? DEFAULT_MAX_BYTES);
    this.maxDetailedBytes = Math.max(
      1,
      Math.min(this.maxBytes, limits.maxDetailedBytes ?? DEFAULT_MAX_DETAILED_BYTES),
    );
  }

  /** The estimated bytes the kept decisions' candidates hold. */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.length - this.start;
  }

  add(decision: Decision): void {
    if (this.byId.has(decision.id)) return;
    const entry: Entry = {
      seq: this.seq++,
      timeMs: Date.parse(decision.time) || 0,
      decision,
      bytes: decisionBytes(decision),
    };
    this.entries.push(entry);
    this.byId.set(decision.id, entry);
    this.held += entry.bytes;
    this.detailed += entry.bytes;
    this.evict();
  }

  /**
   * Merges decisions rebuilt after a restart (any order) with what is already recorded, by time.
   * Cursors handed out before are invalidated; this runs once, at start.
   */
  restore(decisions: Iterable<Decision>): void {
    const all = this.entries.slice(this.start);
    for (const d of decisions) {
      if (this.byId.has(d.id)) continue;
      const entry: Entry = { seq: 0, timeMs: Date.parse(d.time) || 0, decision: d, bytes: decisionBytes(d) };
      this.byId.set(d.id, entry);
      this.held += entry.bytes;
      this.detailed += entry.bytes;
      all.push(entry);
    }
    all.sort((a, b) => a.timeMs - b.timeMs);
    this.seq = 0;
    for (const e of all) e.seq = this.seq++;
    this.entries = all;
    this.start = 0;
    this.summarizeFrom = 0;
    this.evict();
  }

  get(id: string): Decision | undefined {
    return this.byId.get(id)?.decision;
  }

  /** Newest first. Throws InvalidCursorError on a malformed cursor. */
  query(q: HistoryQuery = {}): HistoryPage {
    const limit = Math.min(MAX_PAGE, Math.max(1, Math.floor(q.limit ?? DEFAULT_PAGE)));
    let below = Number.POSITIVE_INFINITY;
    if (q.after !== undefined) {
      const seq = decodeCursor(q.after);
      if (seq === undefined) throw new InvalidCursorError(q.after);
      below = seq;
    }
    const since = sinceMs(q.since);
    const items: Decision[] = [];
    let last: Entry | undefined;
    for (let i = this.entries.length - 1; i >= this.start; i--) {
      const e = this.entries[i] as Entry;
      if (e.seq >= below) continue;
      if (since !== undefined && e.timeMs < since) continue;
      const d = e.decision;
      if (q.namespace !== undefined && d.namespace !== q.namespace) continue;
      if (q.pod !== undefined && d.pod !== q.pod) continue;
      if (q.node !== undefined && d.node !== q.node) continue;
      if (q.result !== undefined && d.result !== q.result) continue;
      if (q.acceptNamespace && !q.acceptNamespace(d.namespace)) continue;
      if (items.length === limit) return { items, nextCursor: encodeCursor((last as Entry).seq) };
      items.push(d);
      last = e;
    }
    return { items };
  }

  private evict(): void {
    // Summarize the oldest decisions (never the newest) until the candidates fit both budgets.
    this.summarizeFrom = Math.max(this.summarizeFrom, this.start);
    while (
      (this.held > this.maxBytes || this.detailed > this.maxDetailedBytes) &&
      this.summarizeFrom < this.entries.length - 1
    ) {
      this.summarize(this.entries[this.summarizeFrom++] as Entry);
    }
    while (this.size > this.maxDecisions || (this.held > this.maxBytes && this.size > 1)) {
      const e = this.entries[this.start++] as Entry;
      this.byId.delete(e.decision.id);
      this.held -= e.bytes;
      if (!e.summarized) this.detailed -= e.bytes;
    }
    if (this.start > 1024 && this.start * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.start);
      this.summarizeFrom = Math.max(0, this.summarizeFrom - this.start);
      this.start = 0;
    }
  }

  /** Replaces the stored decision by a copy with only its key candidates (subscribers keep the full one). */
  private summarize(e: Entry): void {
    if (e.summarized) return;
    e.summarized = true;
    this.detailed -= e.bytes;
    const d = e.decision;
    // As a pod on its way to be bound keeps them: the key ones, with their scores settled.
    const summarized = withKeyCandidates(d, 0);
    if (summarized.candidates.length === d.candidates.length) return;
    e.decision = summarized;
    const bytes = decisionBytes(e.decision);
    this.held -= e.bytes - bytes;
    e.bytes = bytes;
  }
}

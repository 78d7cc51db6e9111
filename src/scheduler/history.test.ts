import { describe, expect, it } from 'vitest';
import type { Candidate, Decision } from './explain.js';
import { candidateBytes, DecisionHistory, InvalidCursorError } from './history.js';
import { NOW } from './testing.js';

function decision(i: number, o: Partial<Decision> = {}, candidates = 1): Decision {
  return {
    id: `d${i}`,
    namespace: i % 2 ? 'odd' : 'even',
    pod: `p${i}`,
    podUid: `u${i}`,
    result: 'scheduled',
    node: `n${i % 3}`,
    time: new Date(NOW + i * 1000).toISOString(),
    algorithmMs: 1,
    latencyMs: 2,
    e2eLatencyMs: 3,
    attempts: 1,
    message: '',
    rules: [],
    totalNodes: candidates,
    feasibleNodes: candidates,
    candidates: Array.from(
      { length: candidates },
      (_, k) => ({ node: `n${k}`, feasible: true, reasons: [], rules: [] }) as Candidate,
    ),
    reportingInstance: 'x',
    ...o,
  };
}

function filled(n: number, limits = {}): DecisionHistory {
  const h = new DecisionHistory(limits);
  for (let i = 0; i < n; i++) h.add(decision(i));
  return h;
}

describe('DecisionHistory', () => {
  it('pages newest first with a cursor until the end', () => {
    const h = filled(7);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = h.query({ limit: 3, ...(cursor ? { after: cursor } : {}) });
      seen.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(['d6', 'd5', 'd4', 'd3', 'd2', 'd1', 'd0']);
    expect(pages).toBe(3);
  });

  it('gives no cursor when the page ends exactly at the last match', () => {
    const page = filled(3).query({ limit: 3 });
    expect(page.items).toHaveLength(3);
    expect(page.nextCursor).toBeUndefined();
  });

  it('keeps a cursor valid while new decisions arrive', () => {
    const h = filled(5);
    const first = h.query({ limit: 2 });
    h.add(decision(5));
    h.add(decision(6));
    const second = h.query({ limit: 2, after: first.nextCursor as string });
    expect(second.items.map((d) => d.id)).toEqual(['d2', 'd1']);
  });

  it.each([
    [{ namespace: 'odd' }, ['d5', 'd3', 'd1']],
    [{ pod: 'p4' }, ['d4']],
    [{ node: 'n0' }, ['d3', 'd0']],
    [{ since: new Date(NOW + 4000).toISOString() }, ['d5', 'd4']],
    [{ since: NOW + 5000, namespace: 'odd' }, ['d5']],
    [{ result: 'unschedulable' as const }, []],
  ])('filters %j', (q, want) => {
    expect(
      filled(6)
        .query(q)
        .items.map((d) => d.id),
    ).toEqual(want);
  });

  it('paginates within a filter', () => {
    const h = filled(10);
    const p1 = h.query({ namespace: 'even', limit: 2 });
    const p2 = h.query({ namespace: 'even', limit: 2, after: p1.nextCursor as string });
    expect([...p1.items, ...p2.items].map((d) => d.id)).toEqual(['d8', 'd6', 'd4', 'd2']);
  });

  it('rejects a malformed cursor', () => {
    expect(() => filled(1).query({ after: 'not a cursor!' })).toThrow(InvalidCursorError);
  });

  it('evicts the oldest beyond maxDecisions', () => {
    const h = filled(10, { maxDecisions: 4 });
    expect(h.size).toBe(4);
    expect(h.get('d5')).toBeUndefined();
    expect(h.query().items.map((d) => d.id)).toEqual(['d9', 'd8', 'd7', 'd6']);
  });

  it('evicts the oldest beyond maxBytes, keeping at least the newest', () => {
    const one = candidateBytes(decision(0).candidates[0] as Candidate);
    const h = new DecisionHistory({ maxBytes: 10 * one });
    for (let i = 0; i < 5; i++) h.add(decision(i, {}, 4));
    expect(h.query().items.map((d) => d.id)).toEqual(['d4', 'd3']);
    h.add(decision(9, {}, 50));
    expect(h.query().items.map((d) => d.id)).toEqual(['d9']);
  });

  it('summarizes old decisions before evicting any, keeping the best nodes and one per reason', () => {
    const plain = candidateBytes(decision(0).candidates[0] as Candidate);
    const h = new DecisionHistory({ maxBytes: 300 * plain + 300 * (80 + plain) });
    const big = (i: number): Decision => {
      const d = decision(i, {}, 20);
      const infeasible = Array.from({ length: 100 }, (_, k) => ({
        node: `x${k}`,
        feasible: false,
        reasons: [
          {
            code: 'TooManyPods',
            plugin: 'NodeResourcesFit',
            reason: k % 2 ? 'Too many pods' : 'Insufficient cpu',
            detail: '',
          },
        ],
        rules: [],
      })) as Candidate[];
      return { ...d, candidates: [...d.candidates, ...infeasible] };
    };
    const first = big(0);
    h.add(first);
    for (let i = 1; i < 5; i++) h.add(big(i));
    expect(h.size).toBe(5);
    const newest = h.get('d4');
    expect(newest?.candidates).toHaveLength(120);
    const old = h.get('d0');
    expect(old?.candidates.map((c) => c.node)).toEqual([
      ...Array.from({ length: 10 }, (_, k) => `n${k}`),
      'x0',
      'x1',
    ]);
    expect(old?.candidatesOmitted).toBe(108);
    // Subscribers hold the original, untouched.
    expect(first.candidates).toHaveLength(120);
  });

  it('keeps every candidate only for the newest decisions within maxDetailedBytes, the key ones for older', () => {
    const one = candidateBytes(decision(0).candidates[0] as Candidate);
    // 20 feasible candidates each: two detailed decisions fit, the whole history easily does.
    const h = new DecisionHistory({ maxBytes: 1000 * one, maxDetailedBytes: 40 * one });
    for (let i = 0; i < 5; i++) h.add(decision(i, {}, 20));
    expect(h.size).toBe(5);
    expect([0, 1, 2, 3, 4].map((i) => h.get(`d${i}`)?.candidates.length)).toEqual([10, 10, 10, 20, 20]);
    expect(h.get('d2')?.candidatesOmitted).toBe(10);
    expect(h.get('d3')?.candidatesOmitted).toBeUndefined();
    // Evicting a detailed decision gives its bytes back to the detailed budget.
    const small = new DecisionHistory({ maxDecisions: 1, maxDetailedBytes: 40 * one });
    for (let i = 0; i < 3; i++) small.add(decision(i, {}, 20));
    small.add(decision(9, {}, 20));
    expect(small.get('d9')?.candidates).toHaveLength(20);
  });

  it('stays correct across array compaction', () => {
    const h = filled(5000, { maxDecisions: 10 });
    expect(h.query({ limit: 3 }).items.map((d) => d.id)).toEqual(['d4999', 'd4998', 'd4997']);
    expect(h.get('d4990')).toBeDefined();
    expect(h.get('d4989')).toBeUndefined();
  });

  it('merges restored decisions by time and skips known ids', () => {
    const h = new DecisionHistory();
    h.add(decision(5));
    h.restore([decision(1), decision(7), decision(5), decision(3)]);
    expect(h.query().items.map((d) => d.id)).toEqual(['d7', 'd5', 'd3', 'd1']);
    expect(h.size).toBe(4);
  });
});

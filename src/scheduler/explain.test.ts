import { describe, expect, it } from 'vitest';
import {
  buildCandidates,
  type Candidate,
  candidateScores,
  NO_NODES_MESSAGE,
  scheduledMessage,
  settleScores,
  unschedulableMessage,
  withKeyCandidates,
} from './explain.js';
import type { NodeVerdict } from './framework/verdict.js';
import { decide, node, pod, rule } from './testing.js';

describe('unschedulableMessage', () => {
  const rejectedBy = (plugin: string, reasons: string[]) =>
    reasons.map((reason) => ({ plugin, code: 'X', reason, detail: '', preFilter: true }));
  it.each<[string, NodeVerdict[], string]>([
    [
      'a PreFilter rejection, named once and uncounted (as kube-scheduler)',
      ['a', 'b', 'c'].map((n) => ({
        node: n,
        feasible: false,
        reasons: rejectedBy('VolumeBinding', ['pod has unbound immediate PersistentVolumeClaims']),
        rules: [],
      })),
      '0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.',
    ],
    [
      'only the first rejecting plugin, as its PreFilter loop stops there',
      ['a', 'b'].map((n) => ({
        node: n,
        feasible: false,
        reasons: [
          ...rejectedBy('VolumeBinding', ['persistentvolumeclaim "x" not found']),
          ...rejectedBy('VolumeRestrictions', [
            'node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod',
          ]),
        ],
        rules: [],
      })),
      '0/2 nodes are available: persistentvolumeclaim "x" not found.',
    ],
  ])('%s', (_, verdicts, want) => {
    expect(unschedulableMessage(verdicts.length, verdicts)).toBe(want);
  });

  it('counts each node under its first failing plugin, sorted like kube-scheduler', () => {
    const allowed = ['n01', 'n02', 'n03'];
    const nodes = Array.from({ length: 12 }, (_, i) =>
      node(`n${String(i + 1).padStart(2, '0')}`, { cpu: '4' }),
    );
    // The allowed nodes are busy: 3.5 of 4 cores requested.
    const bound = allowed.map((n, i) => pod(`busy-${i}`, { nodeName: n, cpu: '3' }));
    const { verdicts } = decide(pod('p', { cpu: '500m' }), {
      nodes,
      pods: bound,
      rules: [rule('web-tier', { maxCPU: 80, allowedNodes: allowed })],
    });
    expect(unschedulableMessage(nodes.length, verdicts)).toBe(
      '0/12 nodes are available: 3 node(s) exceed rule web-tier cpu 80%, 9 node(s) not allowed by rule web-tier.',
    );
  });

  it('lists several reasons of one plugin for the same node', () => {
    const nodes = [
      node('a', { cpu: '1', memory: '1Gi' }),
      node('b', { cpu: '1', memory: '8Gi' }),
      node('c', { unschedulable: true }),
    ];
    const { verdicts } = decide(pod('p', { cpu: '2', memory: '2Gi' }), { nodes });
    expect(unschedulableMessage(3, verdicts)).toBe(
      '0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, 2 Insufficient cpu.',
    );
  });

  it('sorts "<count> <reason>" as strings, as kube-scheduler does (10 before 2)', () => {
    const nodes = [
      ...Array.from({ length: 10 }, (_, i) =>
        node(`t${i}`, { taints: [{ key: 'x', effect: 'NoSchedule' }] }),
      ),
      node('c1', { unschedulable: true }),
      node('c2', { unschedulable: true }),
    ];
    const { verdicts } = decide(pod('p'), { nodes });
    expect(unschedulableMessage(nodes.length, verdicts)).toBe(
      '0/12 nodes are available: 10 node(s) had untolerated taint(s), 2 node(s) were unschedulable.',
    );
  });

  it('says so when there are no nodes at all', () => {
    expect(unschedulableMessage(0, [])).toBe(NO_NODES_MESSAGE);
  });
});

describe('scheduledMessage', () => {
  it('uses kube-scheduler wording', () => {
    expect(scheduledMessage('ns', 'web-1', 'n1')).toBe('Successfully assigned ns/web-1 to n1');
  });
});

describe('buildCandidates', () => {
  it('puts feasible nodes first in rank order with their scores, then the others by name', () => {
    const nodes = [node('z', { cpu: '1' }), node('b'), node('y', { cpu: '1' }), node('a', { cpu: '8' })];
    const { verdicts, ranked } = decide(pod('p', { cpu: '2' }), { nodes });
    const candidates = buildCandidates(verdicts, ranked);
    expect(candidates.map((c) => [c.node, c.rank, c.feasible])).toEqual([
      ['a', 1, true],
      ['b', 2, true],
      ['y', undefined, false],
      ['z', undefined, false],
    ]);
    const best = candidates[0];
    // LoadAware's part: 100 − (cpu 25% + memory 0%) / 2, weighed 5; the total is Σ weight × score.
    const scores = best ? candidateScores(best) : undefined;
    expect(scores?.find((s) => s.plugin === 'LoadAware')).toEqual({
      plugin: 'LoadAware',
      weight: 5,
      score: 100 - (25 + 0) / 2,
    });
    expect(best?.score).toBeCloseTo(scores?.reduce((t, s) => t + s.weight * s.score, 0) ?? Number.NaN, 9);
    expect(candidateScores(candidates[2] as Candidate)).toBeUndefined();
    expect(candidates[2]?.reasons.map((r) => r.plugin)).toEqual(['NodeResourcesFit']);
  });

  it('ranks by the entries’ rows when they line up with the feasible verdicts, by name when not', () => {
    const nodes = [node('d', { cpu: '2' }), node('c', { cpu: '4' }), node('b', { cpu: '8' }), node('a')];
    const ranks = (verdicts: NodeVerdict[], ranked: Parameters<typeof buildCandidates>[1]) =>
      buildCandidates(verdicts, ranked).map((c) => [c.node, c.rank]);
    const fresh = () => decide(pod('p', { cpu: '1' }), { nodes });
    // As the cycle hands them over: runScores' entries, rows in the feasible verdicts' order.
    const lined = fresh();
    const want = lined.ranked.map((r, i) => [r.node, i + 1]);
    expect(want).toHaveLength(4);
    expect(ranks(lined.verdicts, lined.ranked)).toEqual(want);
    // Verdicts in another order than the rows (their rows no longer name these nodes): by name.
    const shuffled = fresh();
    expect(ranks([...shuffled.verdicts].reverse(), shuffled.ranked)).toEqual(want);
    // Plain ranked nodes (no rows), one feasible verdict left unranked: by name, the unranked one dropped.
    const plain = fresh();
    const dropped = plain.ranked[2]?.node;
    const ranked = plain.ranked
      .filter((r) => r.node !== dropped)
      .map((r) => ({ node: r.node, score: r.score, scores: [] }));
    expect(ranks(plain.verdicts, ranked)).toEqual(
      want.filter(([n]) => n !== dropped).map(([n], i) => [n, i + 1]),
    );
  });

  it('settles a kept candidate: its score parts built, the cycle’s score table no longer referenced', () => {
    const nodes = [node('a', { cpu: '8' }), node('b')];
    const { verdicts, ranked } = decide(pod('p', { cpu: '1' }), { nodes });
    const best = buildCandidates(verdicts, ranked)[0] as Candidate;
    expect(best.scoreParts).toBe(ranked[0]);
    const parts = ranked[0]?.scores;
    settleScores(best);
    expect(best.scoreParts).not.toBe(ranked[0]);
    expect(Object.keys(best.scoreParts ?? {})).toEqual(['scores']);
    expect(candidateScores(best)).toBe(parts);
  });
});

describe('withKeyCandidates', () => {
  const feasible = (i: number): Candidate => ({
    node: `f${i}`,
    feasible: true,
    reasons: [],
    rules: [],
    rank: i + 1,
  });
  const infeasible = (i: number, reason: string): Candidate => ({
    node: `x${i}`,
    feasible: false,
    reasons: [{ plugin: 'NodeResourcesFit', code: 'Insufficient', reason, detail: '' }],
    rules: [],
  });
  const decisionOf = (n: number, omitted?: number) => ({
    candidates: [
      ...Array.from({ length: n }, (_, i) => feasible(i)),
      infeasible(0, 'Insufficient cpu'),
      infeasible(1, 'Insufficient cpu'),
      infeasible(2, 'Too many pods'),
    ],
    ...(omitted === undefined ? {} : { candidatesOmitted: omitted }),
  });

  it.each([
    ['at most max: the same object, every candidate', 7, 10, undefined, 10, undefined],
    ['above max: the 10 best feasible and one per reason', 200, 100, undefined, 12, 191],
    ['adds to what was omitted before', 200, 100, 5, 12, 196],
  ])('%s', (_, n, max, prior, kept, omitted) => {
    const d = decisionOf(n, prior);
    const out = withKeyCandidates(d, max);
    expect(out.candidates).toHaveLength(kept);
    expect(out.candidatesOmitted).toBe(omitted ?? prior);
    if (n + 3 <= max) expect(out).toBe(d);
    else expect(out.candidates.map((c) => c.node).slice(-2)).toEqual(['x0', 'x2']);
  });
});

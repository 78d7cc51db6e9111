import { describe, expect, it } from 'vitest';
import { DEFAULT_LOAD_OPTIONS } from '../load/types.js';
import { buildCandidates, NO_NODES_MESSAGE, scheduledMessage, unschedulableMessage } from './explain.js';
import { filterNodes } from './filter.js';
import { rankNodes } from './score.js';
import { loadsFor, node, pod, rule } from './testing.js';

describe('unschedulableMessage', () => {
  it('counts each node under its first failing stage, sorted like kube-scheduler', () => {
    const allowed = ['n01', 'n02', 'n03'];
    const nodes = Array.from({ length: 12 }, (_, i) =>
      node(`n${String(i + 1).padStart(2, '0')}`, { cpu: '4' }),
    );
    // The allowed nodes are busy: 3.5 of 4 cores requested.
    const bound = allowed.map((n, i) => pod(`busy-${i}`, { nodeName: n, cpu: '3' }));
    const verdicts = filterNodes(
      {
        pod: pod('p', { cpu: '500m' }),
        rules: [rule('web-tier', { maxCPU: 80, allowedNodes: allowed })],
        loadOptions: DEFAULT_LOAD_OPTIONS,
      },
      nodes,
      loadsFor(nodes, bound),
    );
    expect(unschedulableMessage(nodes.length, verdicts)).toBe(
      '0/12 nodes are available: 3 node(s) exceed rule web-tier cpu 80%, 9 node(s) not allowed by rule web-tier.',
    );
  });

  it('lists several reasons of one stage for the same node', () => {
    const nodes = [
      node('a', { cpu: '1', memory: '1Gi' }),
      node('b', { cpu: '1', memory: '8Gi' }),
      node('c', { unschedulable: true }),
    ];
    const verdicts = filterNodes(
      { pod: pod('p', { cpu: '2', memory: '2Gi' }), rules: [], loadOptions: DEFAULT_LOAD_OPTIONS },
      nodes,
      loadsFor(nodes),
    );
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
    const verdicts = filterNodes(
      { pod: pod('p'), rules: [], loadOptions: DEFAULT_LOAD_OPTIONS },
      nodes,
      loadsFor(nodes),
    );
    expect(unschedulableMessage(nodes.length, verdicts)).toBe(
      '0/12 nodes are available: 10 node(s) had untolerated taint {x: }, 2 node(s) were unschedulable.',
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
    const verdicts = filterNodes(
      { pod: pod('p', { cpu: '2' }), rules: [], loadOptions: DEFAULT_LOAD_OPTIONS },
      nodes,
      loadsFor(nodes),
    );
    const candidates = buildCandidates(verdicts, rankNodes(verdicts));
    expect(candidates.map((c) => [c.node, c.rank, c.feasible])).toEqual([
      ['a', 1, true],
      ['b', 2, true],
      ['y', undefined, false],
      ['z', undefined, false],
    ]);
    expect(candidates[0]?.score).toBeCloseTo(100 - (25 + 0) / 2, 9);
  });
});

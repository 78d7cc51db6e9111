import { describe, expect, it } from 'vitest';
import type { NodeSelectorTerm } from '../../cluster/model.js';
import { unschedulableMessage } from '../explain.js';
import { node, pod } from '../testing.js';
import { ERR_TERMS_CONFLICT, nodeAffinity } from './node-affinity.js';
import { cycleOf, type Json, scoresOf, specPod, verdictOn } from './plugin.testing.js';

const MISMATCH = 'NodeAffinityMismatch';
const expr = (key: string, operator: string, values?: string[]) => ({
  matchExpressions: [{ key, operator, ...(values ? { values } : {}) }],
});

/**
 * PreFilter: required terms that all name nodes by metadata.name leave every other node unfiltered, with
 * upstream's PreFilterResult status; names no term shares reject the pod.
 */
describe('NodeAffinity PreFilter: nodes named by metadata.name', () => {
  const named = (...values: string[]) => ({ key: 'metadata.name', operator: 'In', values });
  const NOT_NAMED = "node(s) didn't satisfy plugin(s) [NodeAffinity]";
  it.each<{ name: string; terms: Json[]; want: Record<string, string | undefined>; message?: string }>([
    {
      name: 'one named node: the others are not filtered at all',
      terms: [{ matchFields: [named('n1')] }],
      want: { n1: undefined, n2: NOT_NAMED, n3: NOT_NAMED },
    },
    {
      name: 'the named node still has to match the term’s expressions',
      terms: [
        { matchFields: [named('n1')], matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
      ],
      want: { n1: "node(s) didn't match Pod's node affinity/selector", n2: NOT_NAMED, n3: NOT_NAMED },
      message:
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
    },
    {
      name: 'terms are ORed: the union of their names',
      terms: [{ matchFields: [named('n1')] }, { matchFields: [named('n2', 'n9')] }],
      want: { n1: undefined, n2: undefined, n3: NOT_NAMED },
    },
    {
      name: 'a term naming no node admits every node',
      terms: [{ matchFields: [named('n1')] }, expr('zone', 'In', ['a'])],
      want: { n1: undefined, n2: undefined, n3: undefined },
    },
    {
      name: 'a name that is no node: every node is left out',
      terms: [{ matchFields: [named('missing')] }],
      want: { n1: NOT_NAMED, n2: NOT_NAMED, n3: NOT_NAMED },
      message: "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity].",
    },
    {
      name: 'a term whose lists share no name: the pod is rejected',
      terms: [{ matchFields: [named('n1'), named('n2')] }],
      want: { n1: ERR_TERMS_CONFLICT, n2: ERR_TERMS_CONFLICT, n3: ERR_TERMS_CONFLICT },
      message: `0/3 nodes are available: ${ERR_TERMS_CONFLICT}.`,
    },
  ])('$name', ({ terms, want, message }) => {
    const nodes = ['n1', 'n2', 'n3'].map((n) => node(n, { labels: { zone: 'a' } }));
    const cycle = cycleOf(nodeAffinity(), pod('p', { affinityTerms: terms }), { nodes });
    const got = Object.fromEntries(cycle.verdicts.map((v) => [v.node, v.reasons[0]?.reason]));
    expect(got).toEqual(want);
    for (const v of cycle.verdicts) for (const r of v.reasons) expect(r.unresolvable).toBe(true);
    if (message) expect(unschedulableMessage(3, cycle.verdicts)).toBe(message);
  });

  it('skips Filter for a pod without nodeSelector and required terms', () => {
    const cycle = cycleOf(nodeAffinity(), pod('p'), { nodes: [node('n1')] });
    expect(cycle.pre.state.skipFilter.has('NodeAffinity')).toBe(true);
  });
});

describe('NodeAffinity filter', () => {
  it.each<{
    name: string;
    labels?: Record<string, string>;
    nodeName?: string;
    nodeSelector?: Record<string, string>;
    terms?: Json[];
    fails: boolean;
  }>([
    { name: 'no selector, no affinity', fails: false },
    { name: 'nodeSelector match', labels: { zone: 'a' }, nodeSelector: { zone: 'a' }, fails: false },
    { name: 'nodeSelector mismatch', labels: { zone: 'a' }, nodeSelector: { zone: 'b' }, fails: true },
    { name: 'nodeSelector label missing', nodeSelector: { zone: 'a' }, fails: true },
    { name: 'nodeSelector with an empty value needs the label', nodeSelector: { gpu: '' }, fails: true },
    {
      name: 'nodeSelector empty value present',
      labels: { gpu: '' },
      nodeSelector: { gpu: '' },
      fails: false,
    },
    { name: 'In', labels: { zone: 'a' }, terms: [expr('zone', 'In', ['a', 'b'])], fails: false },
    { name: 'In, other value', labels: { zone: 'c' }, terms: [expr('zone', 'In', ['a', 'b'])], fails: true },
    { name: 'In, label missing', terms: [expr('zone', 'In', ['a'])], fails: true },
    {
      name: 'NotIn, other value',
      labels: { zone: 'c' },
      terms: [expr('zone', 'NotIn', ['a'])],
      fails: false,
    },
    {
      name: 'NotIn, listed value',
      labels: { zone: 'a' },
      terms: [expr('zone', 'NotIn', ['a'])],
      fails: true,
    },
    { name: 'NotIn, label missing matches', terms: [expr('zone', 'NotIn', ['a'])], fails: false },
    { name: 'Exists', labels: { disk: 'ssd' }, terms: [expr('disk', 'Exists')], fails: false },
    { name: 'Exists, missing', terms: [expr('disk', 'Exists')], fails: true },
    { name: 'DoesNotExist, missing', terms: [expr('disk', 'DoesNotExist')], fails: false },
    {
      name: 'DoesNotExist, present',
      labels: { disk: '' },
      terms: [expr('disk', 'DoesNotExist')],
      fails: true,
    },
    { name: 'Gt', labels: { cores: '16' }, terms: [expr('cores', 'Gt', ['8'])], fails: false },
    {
      name: 'Gt, equal is not greater',
      labels: { cores: '8' },
      terms: [expr('cores', 'Gt', ['8'])],
      fails: true,
    },
    {
      name: 'Gt, non-integer label',
      labels: { cores: 'many' },
      terms: [expr('cores', 'Gt', ['8'])],
      fails: true,
    },
    {
      name: 'Gt, two values is invalid',
      labels: { cores: '16' },
      terms: [expr('cores', 'Gt', ['8', '9'])],
      fails: true,
    },
    { name: 'Lt', labels: { cores: '4' }, terms: [expr('cores', 'Lt', ['8'])], fails: false },
    { name: 'Lt fails', labels: { cores: '16' }, terms: [expr('cores', 'Lt', ['8'])], fails: true },
    { name: 'Lt, negative', labels: { temp: '-3' }, terms: [expr('temp', 'Lt', ['0'])], fails: false },
    {
      name: 'unknown operator matches nothing',
      labels: { a: 'b' },
      terms: [expr('a', 'Like', ['b'])],
      fails: true,
    },
    {
      name: 'requirements of a term are ANDed',
      labels: { zone: 'a' },
      terms: [
        {
          matchExpressions: [
            { key: 'zone', operator: 'In', values: ['a'] },
            { key: 'disk', operator: 'Exists' },
          ],
        },
      ],
      fails: true,
    },
    {
      name: 'terms are ORed',
      labels: { zone: 'c' },
      terms: [expr('zone', 'In', ['a']), expr('zone', 'Exists')],
      fails: false,
    },
    {
      name: 'terms are ORed, none matches',
      labels: { zone: 'c' },
      terms: [expr('zone', 'In', ['a']), expr('disk', 'Exists')],
      fails: true,
    },
    { name: 'an empty term matches nothing', terms: [{}], fails: true },
    {
      name: 'an empty term beside a matching one',
      labels: { zone: 'a' },
      terms: [{}, expr('zone', 'Exists')],
      fails: false,
    },
    {
      name: 'matchFields metadata.name In (DaemonSet pinning)',
      nodeName: 'n1',
      terms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }],
      fails: false,
    },
    {
      name: 'matchFields metadata.name NotIn',
      nodeName: 'n2',
      terms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] }],
      fails: false,
    },
    {
      name: 'matchFields on another field matches nothing',
      nodeName: 'n1',
      labels: { 'metadata.uid': 'x' },
      terms: [{ matchFields: [{ key: 'metadata.uid', operator: 'In', values: ['x'] }] }],
      fails: true,
    },
    {
      name: 'matchFields and matchExpressions in one term are ANDed',
      nodeName: 'n1',
      labels: { zone: 'a' },
      terms: [
        {
          matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }],
          matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }],
        },
      ],
      fails: true,
    },
    {
      name: 'nodeSelector and affinity are both required',
      labels: { zone: 'a' },
      nodeSelector: { zone: 'b' },
      terms: [expr('zone', 'In', ['a'])],
      fails: true,
    },
  ])('$name', ({ labels, nodeName, nodeSelector, terms, fails }) => {
    const p = pod('p', { nodeSelector, ...(terms ? { affinityTerms: terms } : {}) });
    const v = verdictOn(nodeAffinity(), p, node(nodeName ?? 'n', { labels }));
    expect(v.reasons.map((r) => r.code)).toEqual(fails ? [MISMATCH] : []);
    if (fails) {
      expect(v.reasons[0]).toMatchObject({
        plugin: 'NodeAffinity',
        reason: "node(s) didn't match Pod's node affinity/selector",
        unresolvable: true,
      });
    }
  });

  describe('addedAffinity (the profile’s, applied to every pod)', () => {
    const added: NodeSelectorTerm[] = [expr('pool', 'In', ['batch'])];
    it.each([
      { name: 'matching node', labels: { pool: 'batch' }, terms: undefined, want: [] },
      {
        name: 'node outside it',
        labels: { pool: 'web' },
        terms: undefined,
        want: ['EnforcedNodeAffinityMismatch'],
      },
      {
        name: 'both the profile’s and the pod’s fail: both reported, profile first',
        labels: { pool: 'web' },
        terms: [expr('zone', 'Exists')],
        want: ['EnforcedNodeAffinityMismatch', MISMATCH],
      },
      {
        name: 'the pod’s own affinity must still match',
        labels: { pool: 'batch' },
        terms: [expr('zone', 'Exists')],
        want: [MISMATCH],
      },
    ])('$name', ({ labels, terms, want }) => {
      const p = pod('p', terms ? { affinityTerms: terms } : {});
      const v = verdictOn(nodeAffinity({ addedAffinity: { required: added } }), p, node('n', { labels }));
      expect(v.reasons.map((r) => r.code)).toEqual(want);
      if (want[0] === 'EnforcedNodeAffinityMismatch') {
        expect(v.reasons[0]?.reason).toBe("node(s) didn't match scheduler-enforced node affinity");
      }
    });
  });
});

describe('NodeAffinity score (preferred terms)', () => {
  const nodes = [
    node('a', { labels: { zone: 'a', disk: 'ssd' } }),
    node('b', { labels: { zone: 'b', disk: 'ssd' } }),
    node('c', { labels: { zone: 'c' } }),
  ];
  const preferring = (preferred: Json[]) =>
    specPod('p', {
      affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred } },
    });

  it.each<{ name: string; preferred: Json[]; want: Record<string, number> | 'skip' }>([
    { name: 'no preferred terms: PreScore skips', preferred: [], want: 'skip' },
    {
      name: 'Σ weights of matching terms, normalized to the max',
      preferred: [
        { weight: 10, preference: expr('disk', 'In', ['ssd']) },
        { weight: 30, preference: expr('zone', 'In', ['a']) },
      ],
      want: { a: 100, b: 25, c: 0 },
    },
    {
      name: 'a single matching term gives 100',
      preferred: [{ weight: 3, preference: expr('zone', 'In', ['c']) }],
      want: { a: 0, b: 0, c: 100 },
    },
    {
      name: 'no node matches: all 0',
      preferred: [{ weight: 5, preference: expr('zone', 'In', ['x']) }],
      want: { a: 0, b: 0, c: 0 },
    },
    {
      name: 'an empty preference matches nothing',
      preferred: [
        { weight: 50, preference: {} },
        { weight: 1, preference: expr('zone', 'In', ['b']) },
      ],
      want: { a: 0, b: 100, c: 0 },
    },
    {
      name: 'matchFields in a preference',
      preferred: [
        { weight: 1, preference: { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['c'] }] } },
      ],
      want: { a: 0, b: 0, c: 100 },
    },
  ])('$name', ({ preferred, want }) => {
    const scores = scoresOf(nodeAffinity(), preferring(preferred), { nodes });
    if (want === 'skip') expect(scores).toEqual({ a: undefined, b: undefined, c: undefined });
    else expect(scores).toEqual(want);
  });

  it('adds the profile’s preferred terms to the pod’s (and scores them without pod terms)', () => {
    const plugin = nodeAffinity({
      addedAffinity: { preferred: [{ weight: 20, preference: expr('zone', 'In', ['b']) }] },
    });
    expect(scoresOf(plugin, pod('p'), { nodes })).toEqual({ a: 0, b: 100, c: 0 });
    const both = preferring([{ weight: 20, preference: expr('disk', 'Exists') }]);
    // a: 20, b: 20 + 20, c: 0.
    expect(scoresOf(plugin, both, { nodes })).toEqual({ a: 50, b: 100, c: 0 });
  });

  it('ranks the preferred node first', () => {
    const p = preferring([{ weight: 1, preference: expr('zone', 'In', ['c']) }]);
    expect(cycleOf(nodeAffinity(), p, { nodes }).ranked[0]?.node).toBe('c');
  });
});

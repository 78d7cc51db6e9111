import { describe, expect, it } from 'vitest';
import type { NodeVerdict } from '../scheduler/framework/verdict.js';
import {
  BadRequest,
  extenderScore,
  failureMessage,
  filterResult,
  parseBindingArgs,
  parseExtenderArgs,
  passThroughFilter,
  priorityList,
} from './wire.js';

const POD = { metadata: { name: 'p', namespace: 'shop', uid: 'u1', labels: { tier: 'web' } }, spec: {} };

const verdict = (node: string, reasons: [string, string, boolean?][] = []): NodeVerdict => ({
  node,
  feasible: reasons.length === 0,
  reasons: reasons.map(([plugin, reason, unresolvable]) => ({
    plugin,
    code: 'X',
    reason,
    detail: '',
    ...(unresolvable ? { unresolvable } : {}),
  })),
  rules: [],
});

describe('parseExtenderArgs', () => {
  it.each([
    ['Go field names (nodeCacheCapable)', { Pod: POD, Nodes: null, NodeNames: ['a', 'b'] }],
    ['any letter case, as Go decodes', { pod: POD, nodenames: ['a', 'b'] }],
  ])('reads %s', (_name, body) => {
    const args = parseExtenderArgs(body);
    expect(args.nodeNames).toEqual(['a', 'b']);
    expect(args.pod).toMatchObject({ namespace: 'shop', name: 'p', uid: 'u1', labels: { tier: 'web' } });
    expect(args.nodeObjects).toBeUndefined();
  });

  it('takes the node names from a NodeList when kube-scheduler is not nodeCacheCapable', () => {
    const items = [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }];
    expect(parseExtenderArgs({ Pod: POD, Nodes: { items }, NodeNames: null })).toMatchObject({
      nodeNames: ['a', 'b'],
      nodeObjects: items,
    });
  });

  it.each([
    ['not an object', [], 'expected a JSON object (ExtenderArgs)'],
    ['no pod', { NodeNames: [] }, 'expected a JSON object (ExtenderArgs.Pod)'],
    [
      'a pod without namespace',
      { Pod: { metadata: { name: 'p' } }, NodeNames: [] },
      'Pod.metadata.namespace must be a non-empty string',
    ],
    ['no nodes at all', { Pod: POD }, 'ExtenderArgs needs NodeNames (nodeCacheCapable: true) or Nodes'],
    [
      'a node name that is not a string',
      { Pod: POD, NodeNames: ['a', 3] },
      'NodeNames[1] must be a non-empty string',
    ],
  ])('refuses %s with a clear message', (_name, body, message) => {
    expect(() => parseExtenderArgs(body)).toThrow(new BadRequest(message));
  });
});

describe('parseBindingArgs', () => {
  it('reads ExtenderBindingArgs', () => {
    expect(parseBindingArgs({ PodName: 'p', PodNamespace: 'shop', PodUID: 'u1', Node: 'n1' })).toEqual({
      name: 'p',
      namespace: 'shop',
      uid: 'u1',
      node: 'n1',
    });
  });

  it.each([
    [{ PodNamespace: 'shop', Node: 'n1' }, 'PodName must be a non-empty string'],
    [{ PodName: 'p', PodNamespace: 'shop', Node: '' }, 'Node must be a non-empty string'],
    [{ PodName: 'p', PodNamespace: 'shop', Node: 'n', PodUID: 7 }, 'PodUID must be a string'],
  ])('refuses %j', (body, message) => {
    expect(() => parseBindingArgs(body)).toThrow(message);
  });
});

describe('filter results', () => {
  it.each<[string, NodeVerdict, string]>([
    [
      'one reason',
      verdict('n', [['NodeLoadRules', 'node(s) exceed rule web cpu 80%']]),
      'node(s) exceed rule web cpu 80%',
    ],
    [
      'the first plugin’s distinct reasons only, as kube-scheduler counts them',
      verdict('n', [
        ['NodeLoadRules', 'node(s) exceed rule web cpu 80%'],
        ['NodeLoadRules', 'node(s) exceed rule web memory 70%'],
        ['NodeLoadRules', 'node(s) exceed rule web cpu 80%'],
        ['BurstGuard', 'node(s) hit burst limit of rule web'],
      ]),
      'node(s) exceed rule web cpu 80%, node(s) exceed rule web memory 70%',
    ],
  ])('words a failed node with %s', (_name, v, message) => {
    expect(failureMessage(v)).toBe(message);
  });

  it('splits failed nodes by whether preemption could help, in the request’s own shape', () => {
    const verdicts = [
      verdict('a'),
      verdict('b', [['NodeLoadRules', 'node(s) exceed rule web cpu 80%']]),
      verdict('c', [['NodeLoadRules', 'node(s) not allowed by rule web', true]]),
    ];
    const byName = { pod: {} as never, nodeNames: ['a', 'b', 'c'] };
    expect(filterResult(byName, verdicts)).toEqual({
      Nodes: null,
      NodeNames: ['a'],
      FailedNodes: { b: 'node(s) exceed rule web cpu 80%' },
      FailedAndUnresolvableNodes: { c: 'node(s) not allowed by rule web' },
      Error: '',
    });
    const items = ['a', 'b', 'c'].map((name) => ({ metadata: { name } }));
    expect(filterResult({ ...byName, nodeObjects: items }, verdicts)).toMatchObject({
      Nodes: { items: [items[0]] },
      NodeNames: null,
    });
    expect(passThroughFilter(byName)).toEqual({
      Nodes: null,
      NodeNames: ['a', 'b', 'c'],
      FailedNodes: {},
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
  });
});

describe('priorities', () => {
  it.each([
    [0, 0],
    [4.9, 0],
    [5, 1],
    [73.4, 7],
    [100, 10],
    [120, 10],
    [-3, 0],
    [Number.NaN, 0],
  ])('maps %d to the integer %d of 0–10', (score, expected) => {
    expect(extenderScore(score)).toBe(expected);
  });

  it('names each host as kube-scheduler decodes it', () => {
    expect(priorityList([{ node: 'a', score: 88 }])).toEqual([{ Host: 'a', Score: 9 }]);
  });
});

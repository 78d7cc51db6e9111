import { describe, expect, it } from 'vitest';
import { toRule } from '../rules/rule.js';
import { type AdmitOptions, admitMutation, type WebhookState } from './admit.js';
import { NOT_STEERED_ANNOTATION } from './gate.js';
import { RULES_ANNOTATION } from './mutate.js';
import { PatchMemo, type SteeringInputs, steeringKey, withUid } from './patch-memo.js';
import { allow } from './review.js';
import { podRequest, webhookNode } from './testing.js';

const OPTS: AdmitOptions = {
  schedulerName: 'nodeload-scheduler',
  overrideExplicitScheduler: false,
  excludedNamespaces: new Set(['kube-system']),
};

const RULES = [
  toRule({ metadata: { namespace: 'team', name: 'pool' }, spec: { allowedNodes: ['n1', 'n2', 'n3'] } }),
  toRule({
    metadata: { namespace: 'team', name: 'zones' },
    spec: { podSelector: { matchLabels: { app: 'web' } }, nodeSelector: { matchLabels: { zone: 'a' } } },
  }),
  toRule({
    metadata: { namespace: 'team', name: 'nowhere' },
    spec: { podSelector: { matchLabels: { app: 'lost' } }, allowedNodes: ['gone'] },
  }),
];
const NODES = new Map(['n1', 'n2', 'n3'].map((n) => [n, webhookNode(n, { zone: 'a' })]));

function state(memo?: PatchMemo<string[]>): WebhookState {
  return { ready: () => true, rules: () => RULES, nodes: () => NODES, ...(memo ? { patchMemo: memo } : {}) };
}

const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const term = (key: string, value: string) => ({
  matchExpressions: [{ key, operator: 'In', values: [value] }],
});

/** Pods that differ in every input the answer depends on; each must get its own answer. */
const PODS: Record<string, unknown> = {
  plain: { metadata: { name: 'p', labels: { app: 'web' } }, spec: { containers: [] } },
  otherLabels: { metadata: { name: 'p', labels: { app: 'db' } }, spec: { containers: [] } },
  noLabels: { metadata: { name: 'p' }, spec: { containers: [] } },
  lost: { metadata: { name: 'p', labels: { app: 'lost' } }, spec: { containers: [] } },
  ownScheduler: { metadata: { labels: { app: 'web' } }, spec: { schedulerName: 'other', containers: [] } },
  ourScheduler: {
    metadata: { labels: { app: 'web' } },
    spec: { schedulerName: 'nodeload-scheduler', containers: [] },
  },
  emptyAffinity: { metadata: { labels: { app: 'web' } }, spec: { affinity: {}, containers: [] } },
  emptyNodeAffinity: {
    metadata: { labels: { app: 'web' } },
    spec: { affinity: { nodeAffinity: {} }, containers: [] },
  },
  requiredTerm: {
    metadata: { labels: { app: 'web' } },
    spec: {
      affinity: { nodeAffinity: { [REQUIRED]: { nodeSelectorTerms: [term('disk', 'ssd')] } } },
      containers: [],
    },
  },
  otherTerm: {
    metadata: { labels: { app: 'web' } },
    spec: {
      affinity: { nodeAffinity: { [REQUIRED]: { nodeSelectorTerms: [term('disk', 'hdd')] } } },
      containers: [],
    },
  },
  annotated: { metadata: { labels: { app: 'web' }, annotations: { note: 'x' } }, spec: { containers: [] } },
  alreadyRuled: {
    metadata: { labels: { app: 'web' }, annotations: { [RULES_ANNOTATION]: 'pool,zones' } },
    spec: { schedulerName: 'nodeload-scheduler', containers: [] },
  },
  staleNotSteered: {
    metadata: { labels: { app: 'web' }, annotations: { [NOT_STEERED_ANNOTATION]: 'old' } },
    spec: { containers: [] },
  },
  gated: {
    metadata: { labels: { app: 'web' } },
    spec: { containers: [], resourceClaims: [{ name: 'gpu', resourceClaimName: 'c' }] },
  },
  daemonSetClaimed: {
    metadata: {
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'd', uid: 'u', controller: true }],
    },
    spec: { containers: [] },
  },
};

describe('admitMutation with the patch memo', () => {
  it.each(Object.keys(PODS))('%s: the memo answers exactly what computing it again does', (name) => {
    const memo = new PatchMemo<string[]>();
    // Warm the memo with every pod, so a wrong key would hand this one another pod's answer.
    for (const [other, object] of Object.entries(PODS))
      admitMutation(podRequest(`warm-${other}`, object), state(memo), OPTS);
    const fresh = admitMutation(podRequest('uid-9', PODS[name]), state(), OPTS);
    const memoed = admitMutation(podRequest('uid-9', PODS[name]), state(memo), OPTS);
    expect(memo.hits).toBeGreaterThan(0);
    expect(memoed.review).toEqual(fresh.review);
    expect(JSON.parse(memoed.text?.toString() ?? '')).toEqual(fresh.review);
    expect({ ...memoed, text: undefined }).toEqual({ ...fresh, text: undefined });
  });

  it('every pod above has an answer of its own', () => {
    const memo = new PatchMemo<string[]>();
    for (const [name, object] of Object.entries(PODS))
      admitMutation(podRequest(name, object), state(memo), OPTS);
    expect(memo.size).toBe(Object.keys(PODS).length);
  });
});

describe('steeringKey', () => {
  const pod = { metadata: { labels: { app: 'web' } }, spec: {} };
  const base: SteeringInputs = {
    namespace: 'team',
    pod,
    notSteered: [],
    claim: 'none',
    noNodeAllowed: false,
  };
  it.each<[string, Partial<SteeringInputs>]>([
    ['namespace', { namespace: 'other' }],
    ['labels', { pod: { metadata: { labels: { app: 'db' } }, spec: {} } }],
    ['scheduler', { pod: { metadata: pod.metadata, spec: { schedulerName: 'x' } } }],
    ['gate reasons', { notSteered: ['VolumeBinding: x'] }],
    ['claim', { claim: 'claimed' }],
    ['no node allowed', { noNodeAllowed: true }],
    ['affinity present', { pod: { metadata: pod.metadata, spec: { affinity: {} } } }],
    ['nodeAffinity present', { pod: { metadata: pod.metadata, spec: { affinity: { nodeAffinity: {} } } } }],
    ['annotations present', { pod: { metadata: { ...pod.metadata, annotations: {} }, spec: {} } }],
    [
      'a steering annotation',
      { pod: { metadata: { ...pod.metadata, annotations: { [RULES_ANNOTATION]: 'a' } }, spec: {} } },
    ],
  ])('%s changes the key', (_what, over) => {
    expect(steeringKey({ ...base, ...over })).not.toBe(steeringKey(base));
  });

  it('ignores what the answer does not depend on', () => {
    const other = {
      metadata: { name: 'x', labels: { app: 'web' }, annotations: undefined },
      spec: { containers: [] },
    };
    expect(steeringKey({ ...base, pod: other as never })).toBe(steeringKey(base));
  });
});

describe('PatchMemo', () => {
  it('keeps the least recently used out past its capacity', () => {
    const memo = new PatchMemo<number>(2);
    const compute = (n: number) => () => ({ value: n, review: allow(`u${n}`) });
    memo.get('a', compute(1));
    memo.get('b', compute(2));
    memo.get('a', compute(99)); // a is now the most recent
    memo.get('c', compute(3)); // evicts b
    expect(memo.get('a', compute(99)).value).toBe(1);
    expect(memo.get('b', compute(22)).value).toBe(22);
    expect(memo.size).toBe(2);
  });

  it.each(['a"b', 'ü-é-✓'])('serves another uid (%s), escaped as JSON', (uid) => {
    const memo = new PatchMemo<number>();
    const answer = memo.get('k', () => ({ value: 0, review: allow('first', ['w "quoted" ✓']) }));
    const { review, text } = withUid(answer, uid);
    expect(review.response.uid).toBe(uid);
    expect(JSON.parse(text)).toEqual(allow(uid, ['w "quoted" ✓']));
    expect(answer.review.response.uid).toBe('first');
  });
});

import { describe, expect, it } from 'vitest';
import {
  type AuthorizationDecision,
  CachedAccessReviewer,
  decisionKey,
  type RequestAttributes,
  subjectAccessReview,
  TtlCache,
  type UserInfo,
} from './authz.js';
import { recordingReviewer } from './testing.js';

const alice: UserInfo = { name: 'alice', groups: ['dev', 'system:authenticated'], extra: {} };
const list: RequestAttributes = {
  kind: 'resource',
  verb: 'list',
  group: 'nodeload.example.com',
  version: 'v1alpha1',
  resource: 'nodeloads',
};

describe('subjectAccessReview', () => {
  it('asks about the user and the resource', () => {
    const sar = subjectAccessReview({ ...alice, uid: 'u1', extra: { scopes: ['x'] } }, list);
    expect(sar).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'alice',
        uid: 'u1',
        groups: ['dev', 'system:authenticated'],
        extra: { scopes: ['x'] },
        resourceAttributes: {
          verb: 'list',
          group: 'nodeload.example.com',
          version: 'v1alpha1',
          resource: 'nodeloads',
        },
      },
    });
  });

  it('asks about the path for non-resource URLs', () => {
    expect(subjectAccessReview(alice, { kind: 'nonResource', verb: 'get', path: '/metrics' }).spec).toEqual({
      user: 'alice',
      groups: ['dev', 'system:authenticated'],
      nonResourceAttributes: { verb: 'get', path: '/metrics' },
    });
  });
});

describe('TtlCache', () => {
  it('keeps a value for its TTL, keyed regardless of group order', () => {
    const cache = new TtlCache<AuthorizationDecision>();
    const key = decisionKey(alice, list);
    cache.set(key, { allowed: true, reason: '' }, 10_000, 0);
    expect(cache.get(decisionKey({ ...alice, groups: [...alice.groups].reverse() }, list), 9_999)).toEqual({
      allowed: true,
      reason: '',
    });
    expect(cache.get(key, 10_000)).toBeUndefined();
    expect(cache.get(decisionKey(alice, { ...list, verb: 'watch' }), 0)).toBeUndefined();
  });

  it('evicts the oldest entries beyond its size, and keeps nothing for a TTL of 0', () => {
    const cache = new TtlCache<number>(2);
    for (const k of ['a', 'b', 'c']) cache.set(k, 1, 10_000, 0);
    expect(cache.size).toBe(2);
    expect(cache.get('a', 0)).toBeUndefined();
    expect(cache.get('c', 0)).toBeDefined();
    cache.set('c', 2, 0, 0);
    expect(cache.get('c', 0)).toBeUndefined();
  });
});

describe('CachedAccessReviewer', () => {
  const reviewer = recordingReviewer;

  it('asks once for concurrent identical questions and caches allowed and denied answers for their TTLs', async () => {
    const { calls, review } = reviewer((b) => ({
      allowed: b.spec.resourceAttributes?.namespace === 'shop',
      reason: '',
    }));
    let now = 0;
    const r = new CachedAccessReviewer(review, { allowedTtlMs: 10_000, deniedTtlMs: 2_000, now: () => now });
    const shop = { ...list, namespace: 'shop' };
    const other = { ...list, namespace: 'other' };
    const answers = await Promise.all([r.check(alice, shop), r.check(alice, shop), r.check(alice, other)]);
    expect(answers.map((a) => a.allowed)).toEqual([true, true, false]);
    expect(calls).toHaveLength(2);
    expect(r.peek(alice, shop)?.allowed).toBe(true);
    now = 2_000;
    expect(r.peek(alice, other)).toBeUndefined();
    expect(r.peek(alice, shop)?.allowed).toBe(true);
    await r.check(alice, other);
    expect(calls).toHaveLength(3);
  });

  it('does not cache a failed review', async () => {
    let fail = true;
    const { calls, review } = reviewer(() => (fail ? new Error('down') : { allowed: true, reason: '' }));
    const r = new CachedAccessReviewer(review);
    await expect(r.check(alice, list)).rejects.toThrow('down');
    fail = false;
    expect((await r.check(alice, list)).allowed).toBe(true);
    expect(calls).toHaveLength(2);
  });
});

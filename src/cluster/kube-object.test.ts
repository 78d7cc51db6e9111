import { describe, expect, it } from 'vitest';
import { httpStatusOf, identityOf, type KubeObject, objectKey, toPlainJson } from './kube-object.js';

describe('identityOf', () => {
  it.each([
    [
      'a namespaced object',
      {
        kind: 'Pod',
        metadata: { namespace: 'ns', name: 'p', uid: 'u', resourceVersion: '7', labels: { a: 'b' } },
        spec: {},
      },
      { metadata: { namespace: 'ns', name: 'p', uid: 'u', resourceVersion: '7' } },
    ],
    [
      'a cluster-scoped object',
      { metadata: { name: 'n1', resourceVersion: '3' }, status: {} },
      { metadata: { name: 'n1', resourceVersion: '3' } },
    ],
    ['an object without metadata', { kind: 'Node' }, { metadata: {} }],
  ])('keeps only the identity of %s', (_what, obj, want) => {
    expect(identityOf(obj as KubeObject)).toEqual(want);
  });
});

describe('objectKey', () => {
  it.each([
    ['namespace/name for a namespaced object', { metadata: { namespace: 'ns', name: 'p' } }, 'ns/p'],
    ['the name for a cluster-scoped one', { metadata: { name: 'n1' } }, 'n1'],
    ['empty without metadata', {}, ''],
  ])('is %s', (_what, obj, want) => {
    expect(objectKey(obj as KubeObject)).toBe(want);
  });
});

describe('toPlainJson', () => {
  it.each([
    [
      'whole-second Dates as the API server writes them',
      new Date('2026-01-02T03:04:05Z'),
      '2026-01-02T03:04:05Z',
    ],
    ['other Dates with their milliseconds', new Date('2026-01-02T03:04:05.250Z'), '2026-01-02T03:04:05.250Z'],
    [
      'undefined fields dropped, deeply',
      { a: 1, b: undefined, c: [{ d: undefined, e: 'x' }] },
      { a: 1, c: [{ e: 'x' }] },
    ],
    ['scalars as they are', 'text', 'text'],
  ])('keeps %s', (_what, value, want) => {
    expect(toPlainJson(value)).toEqual(want);
  });
});

describe('httpStatusOf', () => {
  it.each([
    ["a refused watch's statusCode", { statusCode: 410 }, 410],
    ["client-node's ApiException code", { code: 403 }, 403],
    ['statusCode before code', { statusCode: 404, code: 500 }, 404],
    ['nothing for a string code (a socket error)', { code: 'ECONNRESET' }, undefined],
    ['nothing for a non-object', 'boom', undefined],
  ])('reads %s', (_what, err, want) => {
    expect(httpStatusOf(err)).toBe(want);
  });
});

import { describe, expect, it } from 'vitest';
import { deny, escapePointer, isPod, parsePod, parseReview, patched } from './review.js';

const request = {
  uid: 'u-1',
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  namespace: 'team',
  operation: 'CREATE',
  object: { metadata: {}, spec: {} },
};
const review = (req: unknown, over: Record<string, unknown> = {}) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: req,
  ...over,
});

describe('parseReview', () => {
  it.each([
    { what: 'not an object', body: [1, 2], want: /expected a JSON AdmissionReview object/ },
    { what: 'null', body: null, want: /expected a JSON AdmissionReview object/ },
    {
      what: 'v1beta1',
      body: review(request, { apiVersion: 'admission.k8s.io/v1beta1' }),
      want: /got admission.k8s.io\/v1beta1/,
    },
    { what: 'another kind', body: review(request, { kind: 'Pod' }), want: /Kind=Pod/ },
    { what: 'no request', body: review(undefined), want: /request: expected an object/ },
    { what: 'no uid', body: review({ ...request, uid: undefined }), want: /request.uid/ },
    { what: 'numeric uid', body: review({ ...request, uid: 7 }), want: /request.uid/ },
  ])('$what → 400', ({ body, want }) => {
    const p = parseReview(body);
    expect(p.kind).toBe('bad');
    if (p.kind === 'bad') {
      expect(p.status).toBe(400);
      expect(p.message).toMatch(want);
    }
  });

  it.each([
    { what: 'no kind', req: { ...request, kind: undefined }, want: /request.kind/ },
    { what: 'bad operation', req: { ...request, operation: 'PATCH' }, want: /request.operation/ },
    { what: 'resource of the wrong type', req: { ...request, resource: 'pods' }, want: /request.resource/ },
  ])('$what → malformed, uid kept', ({ req, want }) => {
    const p = parseReview(review(req));
    expect(p).toMatchObject({ kind: 'malformed', uid: 'u-1' });
    if (p.kind === 'malformed') expect(p.message).toMatch(want);
  });

  it.each([
    {
      what: 'a ServiceAccount',
      userInfo: { username: 'system:serviceaccount:kube-system:x', groups: ['a'] },
      want: { username: 'system:serviceaccount:kube-system:x', groups: ['a'] },
    },
    { what: 'none', userInfo: undefined, want: undefined },
    { what: 'a broken one (unknown user, not a failed request)', userInfo: { username: 7 }, want: undefined },
    { what: 'a string', userInfo: 'root', want: undefined },
  ])('userInfo: $what', ({ userInfo, want }) => {
    const p = parseReview(review({ ...request, userInfo }));
    expect(p.kind).toBe('ok');
    if (p.kind === 'ok') expect(p.request.userInfo).toEqual(want);
  });

  it('accepts a well-formed review and leaves the object untouched', () => {
    const p = parseReview(review(request));
    expect(p.kind).toBe('ok');
    if (p.kind === 'ok') {
      expect(p.request.object).toBe(request.object);
      expect(isPod(p.request)).toBe(true);
      expect(isPod({ ...p.request, subResource: 'binding' })).toBe(false);
    }
  });
});

describe('parsePod', () => {
  it.each([
    {
      what: 'labels not a map of strings',
      obj: { metadata: { labels: { a: 1 } }, spec: {} },
      path: 'request.object.metadata.labels.a',
    },
    { what: 'no spec', obj: { metadata: {} }, path: 'request.object.spec' },
    {
      what: 'terms not an array',
      obj: {
        metadata: {},
        spec: {
          affinity: {
            nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: {} } },
          },
        },
      },
      path: 'nodeSelectorTerms',
    },
    { what: 'a string', obj: 'pod', path: 'request.object' },
  ])('$what → message naming $path', ({ obj, path }) => {
    const p = parsePod(obj);
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.message).toContain(path);
  });

  it('tolerates garbage in fields the webhook does not read', () => {
    expect(parsePod({ metadata: {}, spec: { containers: 'nonsense', tolerations: 5 } }).ok).toBe(true);
  });

  it('ignores "__proto__" keys: nothing reaches the pod view through a prototype', () => {
    const p = parsePod(
      JSON.parse(
        '{"metadata":{"__proto__":{"labels":{"a":1}}},"spec":{"__proto__":{"affinity":{"nodeAffinity":5}}}}',
      ),
    );
    expect(p.ok).toBe(true);
    if (p.ok) {
      expect(p.pod.metadata.labels).toBeUndefined();
      expect(p.pod.spec.affinity).toBeUndefined();
    }
  });

  it('drops unknown fields from terms, so they never reach the patch', () => {
    const p = parsePod({
      metadata: {},
      spec: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [], junk: [[[1]]] }],
            },
          },
        },
      },
    });
    expect(
      p.ok &&
        p.pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    ).toEqual([{ matchFields: [] }]);
  });
});

describe('responses', () => {
  it('patched: base64 JSON Patch with patchType, uid echoed', () => {
    const r = patched('u-9', [{ op: 'add', path: '/spec/schedulerName', value: 'x' }], ['w']);
    expect(r).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(r.response).toMatchObject({ uid: 'u-9', allowed: true, patchType: 'JSONPatch', warnings: ['w'] });
    expect(JSON.parse(Buffer.from(r.response.patch ?? '', 'base64').toString())).toEqual([
      { op: 'add', path: '/spec/schedulerName', value: 'x' },
    ]);
  });

  it('an empty patch is a plain allow without patch fields or empty warnings', () => {
    expect(patched('u', []).response).toEqual({ uid: 'u', allowed: true });
  });

  it('deny carries code, reason and message', () => {
    expect(deny('u', 403, 'no').response).toEqual({
      uid: 'u',
      allowed: false,
      status: { code: 403, message: 'no', reason: 'Forbidden' },
    });
  });

  it.each([
    ['nodeload.example.com/rules', 'nodeload.example.com~1rules'],
    ['a~b/c', 'a~0b~1c'],
    ['~1', '~01'],
  ])('escapePointer(%s) = %s', (input, want) => {
    expect(escapePointer(input)).toBe(want);
  });
});

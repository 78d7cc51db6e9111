import { describe, expect, it } from 'vitest';
import { negotiateDiscovery, negotiateObject, parseAccept } from './media.js';

const KUBECTL_GET =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

describe('negotiateObject', () => {
  it.each([
    [undefined, { as: 'Object' }],
    ['', { as: 'Object' }],
    ['*/*', { as: 'Object' }],
    ['application/json', { as: 'Object' }],
    ['application/json, */*', { as: 'Object' }],
    [KUBECTL_GET, { as: 'Table', version: 'v1' }],
    ['application/json;as=Table;v=v1beta1;g=meta.k8s.io', { as: 'Table', version: 'v1beta1' }],
    [
      'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
      { as: 'PartialObjectMetadata', version: 'v1' },
    ],
    ['application/vnd.kubernetes.protobuf, application/json', { as: 'Object' }],
    ['application/json;as=Table;v=v2;g=meta.k8s.io,application/json', { as: 'Object' }],
    ['application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io', { as: 'Table', version: 'v1' }],
  ])('%j → %j', (accept, want) => {
    expect(negotiateObject(accept)).toEqual(want);
  });

  it.each([
    'application/vnd.kubernetes.protobuf',
    'application/yaml',
    'application/json;as=Table;v=v1;g=other.io',
    'application/json;q=0',
  ])('answers nothing acceptable for %j (406)', (accept) => {
    expect(negotiateObject(accept)).toBeUndefined();
  });
});

describe('negotiateDiscovery', () => {
  it.each([
    ['application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', 'v2'],
    [
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
      'v2',
    ],
    ['application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList', 'v2beta1'],
    ['application/json', 'legacy'],
    [undefined, 'legacy'],
    ['application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList', undefined],
    ['application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', undefined],
  ])('%j → %j', (accept, want) => {
    expect(negotiateDiscovery(accept)).toBe(want);
  });
});

describe('parseAccept', () => {
  it('orders by q, keeping header order for equal q, and reads parameters', () => {
    const ranges = parseAccept('text/plain;q=0.2, application/json;as=Table;v=v1;g=meta.k8s.io, */*;q=0.5');
    expect(ranges.map((r) => `${r.type}/${r.subtype}`)).toEqual(['application/json', '*/*', 'text/plain']);
    expect(ranges[0]?.params).toEqual({ as: 'Table', v: 'v1', g: 'meta.k8s.io' });
  });
});

import { describe, expect, it } from 'vitest';
import {
  exactName,
  fieldsMatch,
  labelsMatch,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from './selectors.js';

const labels = { zone: 'a', tier: 'gold', gpu: '', cores: '16' };

describe('parseLabelSelector', () => {
  it.each([
    ['zone=a', 'Equals', ['a']],
    ['zone==a', 'Equals', ['a']],
    ['zone!=a', 'NotEquals', ['a']],
    ['zone in (a, b)', 'In', ['a', 'b']],
    ['zone notin (a,b)', 'NotIn', ['a', 'b']],
    ['zone', 'Exists', []],
    ['!zone', 'DoesNotExist', []],
    ['cores>8', 'Gt', ['8']],
    ['cores<8', 'Lt', ['8']],
    ['gpu=', 'Equals', ['']],
  ])('parses %s', (text, operator, values) => {
    expect(parseLabelSelector(text)).toEqual([
      { key: text.replace(/^!/, '').split(/[\s!=<>]/)[0], operator, values },
    ]);
  });

  it('splits on commas outside value sets', () => {
    expect(parseLabelSelector('zone in (a,b),tier=gold,!gpu').map((r) => r.operator)).toEqual([
      'In',
      'Equals',
      'DoesNotExist',
    ]);
  });

  it.each(['', '   ', undefined])('selects everything when empty (%j)', (text) => {
    expect(parseLabelSelector(text)).toEqual([]);
  });

  it.each(['zone=a,', 'zone in ()', 'zone=a=b', '=a', 'cores>x'])('rejects %j', (text) => {
    expect(() => parseLabelSelector(text)).toThrow(SelectorError);
  });
});

describe('labelsMatch', () => {
  it.each([
    ['zone=a', true],
    ['zone=b', false],
    ['zone!=b', true],
    ['missing!=b', true],
    ['zone in (b,a)', true],
    ['zone notin (a)', false],
    ['missing notin (a)', true],
    ['gpu', true],
    ['!gpu', false],
    ['gpu=', true],
    ['cores>8', true],
    ['cores<8', false],
    ['zone>1', false],
    ['zone=a,tier=silver', false],
    ['', true],
  ])('%s → %s', (text, want) => {
    expect(labelsMatch(parseLabelSelector(text), labels)).toBe(want);
  });
});

describe('field selectors', () => {
  it.each([
    ['metadata.name=n1', { 'metadata.name': 'n1' }, true],
    ['metadata.name==n1', { 'metadata.name': 'n2' }, false],
    ['metadata.name!=n1', { 'metadata.name': 'n2' }, true],
    ['metadata.name=n1,metadata.namespace=', { 'metadata.name': 'n1', 'metadata.namespace': '' }, true],
    ['metadata.namespace=default', { 'metadata.name': 'n1', 'metadata.namespace': '' }, false],
  ])('%s on %j → %s', (text, fields, want) => {
    expect(fieldsMatch(parseFieldSelector(text), fields)).toBe(want);
  });

  it('rejects fields other than metadata.name and metadata.namespace, as the apiserver does', () => {
    expect(() => parseFieldSelector('spec.nodeName=a')).toThrow('field label not supported: spec.nodeName');
    expect(() => parseFieldSelector('metadata.name')).toThrow(SelectorError);
  });

  it('finds the one name an equality pins down', () => {
    expect(exactName(parseFieldSelector('metadata.name=n1'))).toBe('n1');
    expect(exactName(parseFieldSelector('metadata.name!=n1'))).toBeUndefined();
    expect(exactName([])).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { nodeLoadObject } from './nodeloads.js';
import { ageCell, humanDuration, nodeLoadTable, parseIncludeObject, percentCell } from './table.js';
import { loadOf, NOW, nodeInfo, rule } from './testing.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe('humanDuration (kubectl AGE)', () => {
  it.each([
    [-5 * s, '<invalid>'],
    [-1 * s, '0s'],
    [0, '0s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [3 * m + 20 * s, '3m20s'],
    [25 * m, '25m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [5 * h + 12 * m, '5h12m'],
    [47 * h, '47h'],
    [3 * d + 4 * h, '3d4h'],
    [400 * d, '400d'],
    [2 * 365 * d + 30 * d, '2y30d'],
    [9 * 365 * d, '9y'],
  ])('%d ms → %s', (ms, want) => {
    expect(humanDuration(ms)).toBe(want);
  });

  it('shows <unknown> for a missing creation time', () => {
    expect(ageCell('', NOW)).toBe('<unknown>');
  });
});

describe('percentCell', () => {
  it.each([
    [0, '0%'],
    [45, '45%'],
    [41.666, '41.7%'],
    [80.04, '80%'],
  ])('%d → %s', (n, want) => {
    expect(percentCell(n)).toBe(want);
  });
});

describe('nodeLoadTable', () => {
  const node = nodeInfo('n1', { cpu: '4', memory: '8Gi' });
  const obj = nodeLoadObject(node, loadOf(node, [{ cpu: '1', memory: '1Gi' }]), [rule('t', 'r')], '12');

  it('prints NAME CPU% MEMORY% SOURCE PODS AGE, then the -o wide columns', () => {
    const table = nodeLoadTable([obj], {
      version: 'v1',
      includeObject: 'Metadata',
      now: NOW,
      metadata: { resourceVersion: '12' },
    });
    expect(table.kind).toBe('Table');
    expect(table.apiVersion).toBe('meta.k8s.io/v1');
    expect(table.metadata).toEqual({ resourceVersion: '12' });
    expect(table.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name.toUpperCase())).toEqual([
      'NAME',
      'CPU%',
      'MEMORY%',
      'SOURCE',
      'PODS',
      'AGE',
    ]);
    expect(table.rows[0]?.cells).toEqual([
      'n1',
      '25%',
      '12.5%',
      'requests',
      1,
      '120m',
      '1/4',
      '1Gi/8Gi',
      '1/1',
    ]);
    expect(table.rows[0]?.cells).toHaveLength(table.columnDefinitions.length);
  });

  it.each([
    ['None', undefined],
    [
      'Metadata',
      { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1beta1', metadata: obj.metadata },
    ],
    ['Object', obj],
  ] as const)('includeObject=%s', (include, want) => {
    const table = nodeLoadTable([obj], { version: 'v1beta1', includeObject: include, now: NOW });
    expect(table.rows[0]?.object).toEqual(want);
  });

  it('marks stale and unavailable figures in SOURCE', () => {
    const stale = { ...obj, status: { ...obj.status, metricsStale: true } };
    const unavailable = { ...obj, status: { ...obj.status, metricsStale: true, unavailable: true } };
    const cells = nodeLoadTable([stale, unavailable], {
      version: 'v1',
      includeObject: 'None',
      now: NOW,
    }).rows.map((r) => r.cells[3]);
    expect(cells).toEqual(['requests (metrics stale)', 'unavailable']);
  });

  it('defaults includeObject to Metadata and rejects unknown values', () => {
    expect(parseIncludeObject(undefined)).toBe('Metadata');
    expect(parseIncludeObject('Object')).toBe('Object');
    expect(() => parseIncludeObject('All')).toThrow('Unsupported value');
  });
});

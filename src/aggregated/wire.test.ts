import { describe, expect, it } from 'vitest';
import { nodeLoadList, nodeLoadObject } from './nodeloads.js';
import { parseLabelSelector } from './selectors.js';
import { type IncludeObject, nodeLoadTable } from './table.js';
import { loadOf, NOW, nodeInfo, rule } from './testing.js';
import { listToJson, objectToJson, tableToJson } from './wire.js';

// Objects that exercise every optional part: labels or none, rules either way, a missing creation time.
const objects = [
  nodeLoadObject(
    nodeInfo('a', { labels: { zone: 'west', 'quote"d': 'é\n' } }),
    loadOf(nodeInfo('a'), [{ cpu: '3500m' }]),
    [rule('t', 'strict'), rule('t', 'loose', { maxCPU: 99 })],
    '41',
  ),
  nodeLoadObject(nodeInfo('b'), loadOf(nodeInfo('b')), [], '42'),
  nodeLoadObject(nodeInfo('c', { created: 'not a time' }), loadOf(nodeInfo('c')), [], '43'),
];

const text = (pieces: readonly Buffer[]) => Buffer.concat(pieces).toString('utf8');

describe('the kept JSON is exactly what JSON.stringify gives', () => {
  it('for an object, the same string on every call', () => {
    const [a] = objects as [(typeof objects)[0]];
    expect(objectToJson(a)).toBe(JSON.stringify(a));
    expect(objectToJson(a)).toBe(objectToJson(a));
  });

  it.each([
    ['every object', { labels: [], fields: [] }, {}],
    ['a selector and a page', { labels: parseLabelSelector('zone!=east'), fields: [] }, { limit: 1 }],
  ])('for a list: %s', (_what, filter, page) => {
    const list = nodeLoadList(objects, filter, '99', page);
    expect(text(listToJson(list))).toBe(JSON.stringify(list));
  });

  it.each(
    (['None', 'Metadata', 'Object'] as IncludeObject[]).flatMap((include) =>
      (['v1', 'v1beta1'] as const).map((version) => [include, version] as const),
    ),
  )('for a Table with includeObject=%s, %s', (includeObject, version) => {
    for (const metadata of [undefined, { resourceVersion: '99', continue: 'x', remainingItemCount: 2 }]) {
      const opts = { version, includeObject, now: NOW, ...(metadata ? { metadata } : {}) };
      expect(text(tableToJson(objects, opts))).toBe(JSON.stringify(nodeLoadTable(objects, opts)));
      // The kept parts serve a second answer unchanged.
      expect(text(tableToJson(objects, opts))).toBe(JSON.stringify(nodeLoadTable(objects, opts)));
    }
  });

  it('moves the AGE cell with the clock while the rest of the row is kept', () => {
    const opts = { version: 'v1' as const, includeObject: 'None' as const };
    const early = JSON.parse(text(tableToJson(objects, { ...opts, now: NOW }))).rows[1].cells;
    const later = JSON.parse(text(tableToJson(objects, { ...opts, now: NOW + 3_600_000 }))).rows[1].cells;
    expect(later[5]).not.toBe(early[5]);
    expect(later).toEqual(nodeLoadTable(objects, { ...opts, now: NOW + 3_600_000 }).rows[1]?.cells);
  });
});

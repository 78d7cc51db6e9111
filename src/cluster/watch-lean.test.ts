import { describe, expect, it } from 'vitest';
import { WatchLineDecoder } from './watch-decoder.js';
import { managedFieldsRange } from './watch-lean.js';

const MANAGED = [
  {
    manager: 'kwok',
    operation: 'Update',
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:status': {
        'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {} } },
        'f:message': { 'ünïcödé ] } [ {': {} },
      },
    },
    subresource: 'status',
  },
];

type Json = Record<string, unknown>;
const event = (object: Json) => ({ type: 'MODIFIED', object });
const withoutManaged = (e: { type: string; object: Json }) => {
  const copy = structuredClone(e);
  delete (copy.object['metadata'] as Json)['managedFields'];
  return copy;
};

/** The line with the range cut out, parsed; undefined when nothing is cut. */
function cutAndParse(line: string): unknown {
  const buf = Buffer.from(line);
  const range = managedFieldsRange(buf, 0, buf.length);
  if (!range) return undefined;
  return JSON.parse(buf.toString('utf8', 0, range[0]) + buf.toString('utf8', range[1]));
}

const pod = (metadata: Json, rest: Json = {}) =>
  event({ kind: 'Pod', apiVersion: 'v1', metadata, spec: { nodeName: 'n1' }, ...rest });

describe('managedFieldsRange', () => {
  it.each([
    { case: 'last key of metadata', e: pod({ name: 'a', labels: { x: 'y' }, managedFields: MANAGED }) },
    { case: 'first key of metadata', e: pod({ managedFields: MANAGED, name: 'a' }) },
    { case: 'the only key of metadata', e: pod({ managedFields: MANAGED }) },
    { case: 'an empty list', e: pod({ name: 'a', managedFields: [] }) },
    {
      case: 'strings with quotes, brackets, escapes and the word itself before it',
      e: pod({
        name: 'a',
        annotations: {
          note: 'a "quoted" ] } [ { \\ "managedFields":[ value',
          quote: 'he said "}" and left',
          managedFields: 'annotation',
        },
        managedFields: MANAGED,
      }),
    },
  ])('cuts it out: $case', ({ e }) => {
    expect(cutAndParse(JSON.stringify(e))).toEqual(withoutManaged(e));
  });

  it.each([
    { case: 'no managedFields', line: JSON.stringify(pod({ name: 'a' })) },
    {
      case: 'managedFields outside metadata',
      line: JSON.stringify(pod({ name: 'a' }, { spec: { managedFields: [1] } })),
    },
    {
      case: 'an object before metadata',
      line: JSON.stringify(event({ spec: { managedFields: [1] }, metadata: { managedFields: MANAGED } })),
    },
    {
      case: 'a BOOKMARK',
      line: '{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9"}}}',
    },
    { case: 'an ERROR', line: '{"type":"ERROR","object":{"kind":"Status","metadata":{},"code":410}}' },
    {
      case: 'a truncated line',
      line: JSON.stringify(pod({ name: 'a', managedFields: MANAGED })).slice(0, 120),
    },
    { case: 'not JSON', line: '{"type":"ADDED","object":{"metadata":{"managedFields":["unterminated' },
  ])('leaves it alone: $case', ({ line }) => {
    const buf = Buffer.from(line);
    expect(managedFieldsRange(buf, 0, buf.length)).toBeUndefined();
  });

  it('works within a larger buffer (start and end are honoured)', () => {
    const e = pod({ name: 'a', managedFields: MANAGED });
    const line = JSON.stringify(e);
    const buf = Buffer.from(`garbage]}"\n${line}\n{"more":`);
    const start = buf.indexOf('\n') + 1;
    const end = start + Buffer.byteLength(line);
    const range = managedFieldsRange(buf, start, end);
    expect(range).toBeDefined();
    const [from, to] = range as [number, number];
    expect(JSON.parse(buf.toString('utf8', start, from) + buf.toString('utf8', to, end))).toEqual(
      withoutManaged(e),
    );
  });
});

describe('WatchLineDecoder withoutManagedFields', () => {
  it('hands over objects without managedFields, other events unchanged, and still refuses a bad line', () => {
    const events: unknown[] = [];
    const decoder = new WatchLineDecoder((e) => events.push(e), { withoutManagedFields: true });
    const withFields = pod({ name: 'a', managedFields: MANAGED });
    const without = pod({ name: 'b' });
    decoder.write(Buffer.from(`${JSON.stringify(withFields)}\n${JSON.stringify(without)}\n`));
    expect(events).toEqual([withoutManaged(withFields), without]);
    expect(() =>
      decoder.write(Buffer.from('{"type":"ADDED","object":{"metadata":{"managedFields":[}}\n')),
    ).toThrow(/not JSON/);
  });
});

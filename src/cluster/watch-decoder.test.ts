import { describe, expect, it } from 'vitest';
import { WatchDecodeError, type WatchEvent, WatchLineDecoder } from './watch-decoder.js';

const pod = (name: string, rv: string) => ({
  type: 'MODIFIED',
  object: { kind: 'Pod', metadata: { name, resourceVersion: rv } },
});
const line = (event: unknown) => `${JSON.stringify(event)}\n`;

/** The stream's bytes cut at the given byte offsets. */
function cut(bytes: Buffer, at: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let start = 0;
  for (const end of [...at, bytes.length]) {
    chunks.push(bytes.subarray(start, end));
    start = end;
  }
  return chunks;
}

function decodeAll(chunks: Buffer[]): WatchEvent[] {
  const events: WatchEvent[] = [];
  const decoder = new WatchLineDecoder((e) => events.push(e));
  for (const chunk of chunks) decoder.write(chunk);
  decoder.end();
  return events;
}

const two = Buffer.from(line(pod('a', '1')) + line(pod('b', '2')));
// "é" is 0xc3 0xa9 and "日" 0xe6 0x97 0xa5 in UTF-8.
const accented = Buffer.from(line(pod('café-日本', '3')));
const secondByteOfE = accented.indexOf(Buffer.from('é')) + 1;
const insideNihon = accented.indexOf(Buffer.from('日')) + 2;

describe('WatchLineDecoder', () => {
  it.each([
    { case: 'one chunk, several events', chunks: [two], want: [pod('a', '1'), pod('b', '2')] },
    {
      case: 'one byte per chunk',
      chunks: cut(two, [...Array(two.length).keys()].slice(1)),
      want: [pod('a', '1'), pod('b', '2')],
    },
    { case: 'cut inside a line', chunks: cut(two, [10]), want: [pod('a', '1'), pod('b', '2')] },
    {
      case: 'cut right after a newline',
      chunks: cut(two, [two.indexOf(0x0a) + 1]),
      want: [pod('a', '1'), pod('b', '2')],
    },
    {
      case: 'cut right before a newline',
      chunks: cut(two, [two.indexOf(0x0a)]),
      want: [pod('a', '1'), pod('b', '2')],
    },
    { case: 'a line over three chunks', chunks: cut(two, [5, 20, 40]), want: [pod('a', '1'), pod('b', '2')] },
    {
      case: 'cut inside a 2-byte UTF-8 character',
      chunks: cut(accented, [secondByteOfE]),
      want: [pod('café-日本', '3')],
    },
    {
      case: 'cut inside a 3-byte UTF-8 character',
      chunks: cut(accented, [insideNihon]),
      want: [pod('café-日本', '3')],
    },
    {
      case: 'empty lines and CRLF',
      chunks: [Buffer.from(`\n\r\n${line(pod('a', '1')).replace('\n', '\r\n')}\n`)],
      want: [pod('a', '1')],
    },
    {
      case: 'a last line without its newline',
      chunks: [Buffer.from(line(pod('a', '1')) + JSON.stringify(pod('b', '2')))],
      want: [pod('a', '1'), pod('b', '2')],
    },
    { case: 'no bytes at all', chunks: [], want: [] },
    {
      case: 'ERROR and BOOKMARK events pass through',
      chunks: [
        Buffer.from(
          line({ type: 'ERROR', object: { kind: 'Status', code: 410 } }) +
            line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } }),
        ),
      ],
      want: [
        { type: 'ERROR', object: { kind: 'Status', code: 410 } },
        { type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } },
      ],
    },
  ])('$case', ({ chunks, want }) => {
    expect(decodeAll(chunks)).toEqual(want);
  });

  it.each([
    { case: 'a line that is not JSON', bytes: `${line(pod('a', '1'))}{"type":"ADDED","object":\n` },
    { case: 'JSON that is not an event', bytes: '[1,2]\n' },
    { case: 'a truncated last line', bytes: `${line(pod('a', '1'))}{"type":"MODIF` },
  ])('$case: a WatchDecodeError after the events before it', ({ bytes }) => {
    const events: WatchEvent[] = [];
    const decoder = new WatchLineDecoder((e) => events.push(e));
    expect(() => {
      decoder.write(Buffer.from(bytes));
      decoder.end();
    }).toThrow(WatchDecodeError);
    expect(events).toEqual(bytes.startsWith('[') ? [] : [pod('a', '1')]);
  });

  it('keeps no view of a chunk: the caller may reuse its buffer', () => {
    const events: WatchEvent[] = [];
    const decoder = new WatchLineDecoder((e) => events.push(e));
    const chunk = Buffer.from(line(pod('a', '1')));
    const head = Buffer.from(chunk.subarray(0, 12));
    const reused = Buffer.alloc(chunk.length, 0x20);
    head.copy(reused);
    decoder.write(reused.subarray(0, 12));
    reused.fill(0x20);
    decoder.write(chunk.subarray(12));
    expect(events).toEqual([pod('a', '1')]);
  });
});

import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

function parseAll(chunks: string[]) {
  const p = new SseParser();
  return chunks.flatMap((c) => p.push(c));
}

describe('SseParser', () => {
  it.each([
    ['one message in one chunk', ['event: next\ndata: {"a":1}\n\n']],
    ['split inside a field', ['event: ne', 'xt\ndata: {"a"', ':1}\n', '\n']],
    ['CRLF line ends split between \\r and \\n', ['event: next\r', '\ndata: {"a":1}\r\n\r', '\n']],
    ['lone CR line ends', ['event: next\rdata: {"a":1}\r\r']],
    ['comments and pings around it', [':\n\n', ': ping\n\nevent: next\n:x\ndata: {"a":1}\n\n']],
  ])('%s', (_name, chunks) => {
    expect(parseAll(chunks)).toEqual([{ event: 'next', data: '{"a":1}' }]);
  });

  it('joins multi-line data, defaults the event name, and reads several messages from one chunk', () => {
    expect(parseAll(['data: line 1\ndata: line 2\n\nevent: complete\ndata:\n\n'])).toEqual([
      { event: 'message', data: 'line 1\nline 2' },
      { event: 'complete', data: '' },
    ]);
  });

  it('holds an unterminated message until its blank line arrives', () => {
    const p = new SseParser();
    expect(p.push('event: next\ndata: {}\n')).toEqual([]);
    expect(p.push('\n')).toEqual([{ event: 'next', data: '{}' }]);
  });
});

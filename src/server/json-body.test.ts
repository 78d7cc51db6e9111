import { describe, expect, it } from 'vitest';
import { jsonRequestProblem, parseJsonText } from './json-body.js';

describe('jsonRequestProblem', () => {
  it.each([
    { headers: { 'content-type': 'application/json' }, want: undefined },
    { headers: { 'content-type': 'application/json; charset=utf-8' }, want: undefined },
    { headers: { 'content-type': 'Application/JSON; charset="UTF-8"' }, want: undefined },
    { headers: { 'content-type': 'application/json', 'content-encoding': 'identity' }, want: undefined },
    { headers: {}, want: 'UnsupportedMediaType' },
    { headers: { 'content-type': 'text/plain' }, want: 'UnsupportedMediaType' },
    { headers: { 'content-type': 'application/json-patch+json' }, want: 'UnsupportedMediaType' },
    { headers: { 'content-type': ';;' }, want: 'UnsupportedMediaType' },
    { headers: { 'content-type': 'application/json; charset=utf-16' }, want: 'charset.unsupported' },
    {
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      want: 'encoding.unsupported',
    },
  ])('$headers → $want', ({ headers, want }) => {
    const problem = jsonRequestProblem(headers);
    expect(problem && !problem.ok ? problem.type : undefined).toBe(want);
    if (problem && !problem.ok) expect(problem.status).toBe(415);
  });

  it('remembers only that a Content-Type was accepted, not that a request was', () => {
    const type = 'application/json; charset=UTF-8';
    expect(jsonRequestProblem({ 'content-type': type })).toBeUndefined();
    expect(jsonRequestProblem({ 'content-type': type })).toBeUndefined();
    const gzip = jsonRequestProblem({ 'content-type': type, 'content-encoding': 'gzip' });
    expect(gzip && !gzip.ok ? gzip.type : undefined).toBe('encoding.unsupported');
    const other = jsonRequestProblem({ 'content-type': 'application/json; charset=latin1' });
    expect(other && !other.ok ? other.type : undefined).toBe('charset.unsupported');
    expect(jsonRequestProblem({ 'content-type': type })).toBeUndefined();
  });
});

describe('parseJsonText', () => {
  it.each([
    { text: '{"a":1}', value: { a: 1 } },
    { text: ' \n[1,2]', value: [1, 2] },
    { text: '', value: {} },
    { text: '  \r\n', value: {} },
  ])('$text parses', ({ text, value }) => {
    expect(parseJsonText(text)).toEqual({ ok: true, value });
  });

  it.each(['"x"', '1', 'null', '{"a":', '{a:1}'])('%s → 400 entity.parse.failed with a message', (text) => {
    const r = parseJsonText(text);
    expect(r).toMatchObject({ ok: false, status: 400, type: 'entity.parse.failed' });
    expect(r.ok ? '' : r.message).toMatch(/^malformed JSON: /);
  });
});

import { describe, expect, it } from 'vitest';
import { decisionFields, NextEventSplitter, podIndex } from './fanout-parse.js';

const PAYLOAD =
  '{"data":{"schedulingEvents":{"pod":"fo-00042","node":"bench-node-007","result":"SCHEDULED",' +
  '"time":"2026-12-05T07:00:00.250Z","latencyMs":12.5}}}';

describe('NextEventSplitter', () => {
  it.each([
    { name: 'one message in one chunk', chunks: [`event: next\ndata: ${PAYLOAD}\n\n`], out: [PAYLOAD] },
    {
      name: 'a message cut inside its data and inside the blank line',
      chunks: [`event: next\ndata: ${PAYLOAD.slice(0, 30)}`, `${PAYLOAD.slice(30)}\n`, '\n'],
      out: [PAYLOAD],
    },
    {
      name: 'two messages and a keep-alive comment in one chunk',
      chunks: [`:\n\nevent: next\ndata: {"a":1}\n\nevent: next\ndata: {"b":2}\n\n`],
      out: ['{"a":1}', '{"b":2}'],
    },
    {
      name: 'complete and data-less messages are not next events',
      chunks: ['event: complete\ndata:\n\n', 'event: next\n\n', 'data: {"x":1}\n\n'],
      out: [],
    },
    {
      name: 'multi-line data joined by newlines',
      chunks: ['event: next\ndata: a\ndata: b\n\n'],
      out: ['a\nb'],
    },
    { name: 'data without the optional space', chunks: ['event:next\ndata:{"c":3}\n\n'], out: ['{"c":3}'] },
    { name: 'an unfinished message waits', chunks: ['event: next\ndata: {"d":4}\n'], out: [] },
  ])('$name', ({ chunks, out }) => {
    const s = new NextEventSplitter();
    expect(chunks.flatMap((c) => s.push(c))).toEqual(out);
  });
});

describe('decisionFields', () => {
  const start = Date.parse('2026-12-05T07:00:00.250Z');
  it.each([
    {
      name: 'the bench selection',
      json: PAYLOAD,
      want: { pod: 'fo-00042', result: 'SCHEDULED', startMs: start, publishedMs: start + 12.5 },
    },
    {
      name: 'an integer latency last before the closing braces',
      json: '{"data":{"schedulingEvents":{"pod":"p","result":"ERROR","time":"2026-12-05T07:00:00.250Z","latencyMs":7}}}',
      want: { pod: 'p', result: 'ERROR', startMs: start, publishedMs: start + 7 },
    },
    { name: 'an error payload', json: '{"errors":[{"message":"x"}]}', want: undefined },
    {
      name: 'a malformed time',
      json: '{"pod":"p","result":"SCHEDULED","time":"soon","latencyMs":1}',
      want: undefined,
    },
  ])('$name', ({ json, want }) => {
    expect(decisionFields(json)).toEqual(want);
  });
});

describe('podIndex', () => {
  it.each([
    ['fo-00042', 'fo-', 42],
    ['fo-00000', 'fo-', 0],
    ['fp-00000', 'fo-', -1],
    ['fo-', 'fo-', -1],
    ['fo-12a', 'fo-', -1],
  ])('%s with prefix %s → %d', (name, prefix, want) => {
    expect(podIndex(name, prefix)).toBe(want);
  });
});

import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { componentLogger, createLogger } from '../server/log.js';
import { yogaLogger } from './logging.js';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: yogaLogger(componentLogger(createLogger(level, sink), 'graphql')), lines };
}

describe('yogaLogger', () => {
  it.each([
    {
      call: 'info',
      args: ['GraphQL server ready', { port: 1 }],
      expected: { level: 30, msg: 'GraphQL server ready {"port":1}' },
    },
    { call: 'warn', args: ['slow operation'], expected: { level: 40, msg: 'slow operation' } },
    {
      call: 'error',
      args: [new Error('boom')],
      expected: { level: 50, msg: 'boom', err: expect.objectContaining({ message: 'boom', type: 'Error' }) },
    },
    {
      call: 'error',
      args: ['while executing', new Error('boom')],
      expected: { level: 50, msg: 'while executing', err: expect.objectContaining({ message: 'boom' }) },
    },
  ] as const)('maps $call($args.0) onto pino with component=graphql', ({ call, args, expected }) => {
    const { logger, lines } = capture('info');
    logger[call](...args);
    expect(lines).toEqual([expect.objectContaining({ ...expected, component: 'graphql' })]);
  });

  it('drops levels the logger is not enabled for', () => {
    const { logger, lines } = capture('info');
    logger.debug('noise');
    expect(lines).toEqual([]);
  });
});

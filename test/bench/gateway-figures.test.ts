import { describe, expect, it } from 'vitest';
import { failedBindsByError } from './gateway-figures.js';

describe('failedBindsByError', () => {
  it('counts the failed-bind lines by error, skipping other and cut lines', () => {
    const line = (err: string) =>
      JSON.stringify({ level: 40, component: 'scheduler', pod: 'a/b', err, msg: 'bind failed; requeued' });
    const log = [
      line('HTTP 429'),
      line('etcdserver: request timed out'),
      line('HTTP 429'),
      JSON.stringify({ level: 40, msg: 'PreBind failed; requeued', err: 'x' }),
      '{"level":40,"msg":"bind failed; requeued","err":"cut sh',
    ].join('\n');
    expect(failedBindsByError(log)).toEqual({ 'HTTP 429': 2, 'etcdserver: request timed out': 1 });
  });
});

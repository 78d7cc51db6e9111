import { describe, expect, it } from 'vitest';
import { failedBindsByError, metricSum } from './gateway-figures.js';

describe('metricSum', () => {
  const text = [
    '# HELP nodeload_rest_client_request_retries_total x',
    '# TYPE nodeload_rest_client_request_retries_total counter',
    'nodeload_rest_client_request_retries_total{code="429",verb="POST"} 3',
    'nodeload_rest_client_request_retries_total{code="503",verb="POST"} 2',
    'nodeload_scheduler_events_dropped_total 7',
    'nodeload_scheduler_events_dropped_total_other 100',
  ].join('\n');
  it.each([
    ['labelled series summed', 'nodeload_rest_client_request_retries_total', 5],
    ['an unlabelled one, not its longer-named neighbour', 'nodeload_scheduler_events_dropped_total', 7],
    ['absent: 0', 'nodeload_nothing_total', 0],
  ])('%s', (_, name, expected) => {
    expect(metricSum(text, name)).toBe(expected);
  });
});

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

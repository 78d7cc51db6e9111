import { describe, expect, it } from 'vitest';
import { metricSum } from './prom-text.js';

describe('metricSum', () => {
  const text = [
    '# HELP nodeload_rest_client_request_retries_total x',
    '# TYPE nodeload_rest_client_request_retries_total counter',
    'nodeload_rest_client_request_retries_total{code="429",verb="POST"} 3',
    'nodeload_rest_client_request_retries_total{code="503",verb="POST"} 2',
    'nodeload_scheduler_events_dropped_total 7',
    'nodeload_scheduler_events_dropped_total_other 100',
  ].join('\n');
  it.each<[string, string, Record<string, string>, number]>([
    ['labelled series summed', 'nodeload_rest_client_request_retries_total', {}, 5],
    ['only the series with the label', 'nodeload_rest_client_request_retries_total', { code: '503' }, 2],
    ['every label must match', 'nodeload_rest_client_request_retries_total', { code: '503', verb: 'GET' }, 0],
    ['an unlabelled one, not its longer-named neighbour', 'nodeload_scheduler_events_dropped_total', {}, 7],
    ['an unlabelled one asked for a label: 0', 'nodeload_scheduler_events_dropped_total', { kind: 'x' }, 0],
    ['absent: 0', 'nodeload_nothing_total', {}, 0],
  ])('%s', (_, name, labels, expected) => {
    expect(metricSum(text, name, labels)).toBe(expected);
  });
});

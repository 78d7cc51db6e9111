/**
 * The extender's Prometheus metrics. kube-scheduler names its extender calls by verb (filter,
 * prioritize, bind) and its outcomes as its attempts (unschedulable, error); nodeload adds the outcomes
 * only an extender has: a pod outside every rule passed through, a refused client, a gateway not ready.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

/** The verbs served, as the KubeSchedulerConfiguration names them (filterVerb, prioritizeVerb, bindVerb). */
export const EXTENDER_VERBS = ['filter', 'prioritize', 'bind'] as const;
export type ExtenderVerb = (typeof EXTENDER_VERBS)[number];

/**
 * success: decided (filter: some node passes; bind: bound) · unschedulable: filter left no node ·
 * pass-through: no rule covers the pod · error: our failure or a refused bind · invalid: a 4xx for the
 * request · unauthorized: no or an untrusted client certificate · unavailable: the cache is not synced.
 */
export type RequestResult =
  | 'success'
  | 'unschedulable'
  | 'pass-through'
  | 'error'
  | 'invalid'
  | 'unauthorized'
  | 'unavailable';

export interface ExtenderMetrics {
  observe(verb: ExtenderVerb, result: RequestResult, seconds: number): void;
  /** A pod a rule covers was bound without the extender's bind (bypass.ts). */
  bypassed(): void;
}

export function createExtenderMetrics(registry: Registry): ExtenderMetrics {
  const requests = new Counter({
    name: 'nodeload_extender_requests_total',
    help: 'kube-scheduler extender calls by verb (filter, prioritize, bind) and result (success, unschedulable, pass-through, error, invalid, unauthorized, unavailable).',
    labelNames: ['verb', 'result'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'nodeload_extender_request_duration_seconds',
    help: 'Time from request start to response of kube-scheduler extender calls, by verb.',
    labelNames: ['verb'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const bypassed = new Counter({
    name: 'nodeload_extender_bypassed_pods_total',
    help: 'Pods a NodeLoadRule covers that were bound without the extender (kube-scheduler skipped an ignorable extender that failed, or another scheduler bound them): placed without their rules.',
    registers: [registry],
  });
  for (const verb of EXTENDER_VERBS) requests.inc({ verb, result: 'success' }, 0);
  return {
    observe(verb, result, seconds) {
      requests.inc({ verb, result });
      duration.observe({ verb }, seconds);
    },
    bypassed() {
      bypassed.inc();
    },
  };
}

/**
 * The scheduler's Prometheus metrics in kube-scheduler's vocabulary (pkg/scheduler/metrics), prefixed
 * nodeload_, with the same buckets so dashboards and SLOs carry over.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DecisionResult } from './explain.js';
import type { QueueName } from './queue.js';

export interface SchedulerMetrics {
  /** A scheduling attempt ended: `seconds` from the pop to its outcome (bind included), `algorithmSeconds` the filter and score alone. */
  attempt(result: DecisionResult, seconds: number, algorithmSeconds: number): void;
  /**
   * One run of the algorithm's time on a CPU: its wall time less the time the scheduler thread waited
   * for a core meanwhile (run-delay.ts; GC pauses count as on a CPU). Beside the wall-clock histogram it
   * tells a slow cycle's own work from the OS running other processes in its middle.
   */
  algorithmCpu(seconds: number): void;
  /** Queue entry → bound: kube-scheduler's pod_scheduling_sli_duration_seconds. */
  scheduled(e2eSeconds: number, attempts: number): void;
  /** Pending pods the periodic resync found neither queued nor binding, and queued (pending-resync.ts). */
  resynced(pods: number): void;
}

function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i);
}

/** kube-scheduler caps its attempts label the same way, so the series stay bounded. */
function attemptsLabel(attempts: number): string {
  return attempts >= 16 ? '16+' : String(Math.max(1, attempts));
}

export function createSchedulerMetrics(
  registry: Registry,
  sources: { queueLengths: () => Record<QueueName, number>; bindsInFlight: () => number },
): SchedulerMetrics {
  const attempts = new Counter({
    name: 'nodeload_scheduler_schedule_attempts_total',
    help: 'Number of attempts to schedule pods, by the result. "unschedulable" means a pod could not be scheduled, while "error" means an internal scheduler problem (a failed bind).',
    labelNames: ['result'],
    registers: [registry],
  });
  const attemptDuration = new Histogram({
    name: 'nodeload_scheduler_scheduling_attempt_duration_seconds',
    help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding).',
    labelNames: ['result'],
    buckets: exponentialBuckets(0.001, 2, 15),
    registers: [registry],
  });
  // Upstream's buckets start at 1 ms; a cycle here usually takes less, so these start at 0.1 ms (the
  // issue's target, p99 < 5 ms at 1,000 nodes, needs the resolution) and reach as far (13 s).
  const algorithmDuration = new Histogram({
    name: 'nodeload_scheduler_scheduling_algorithm_duration_seconds',
    help: 'Scheduling algorithm latency in seconds (PreFilter through Score and the choice of a node, without binding).',
    buckets: exponentialBuckets(0.0001, 2, 18),
    registers: [registry],
  });
  // nodeload's own (upstream has no counterpart): on a busy node the algorithm's wall time also holds
  // whatever time the OS ran something else mid-cycle; this one leaves that out.
  const algorithmCpu = new Histogram({
    name: 'nodeload_scheduler_scheduling_algorithm_cpu_seconds',
    help: 'Scheduling algorithm latency in seconds less the time the scheduler thread waited for a CPU meanwhile (Linux schedstat run_delay); garbage collection pauses included.',
    buckets: exponentialBuckets(0.0001, 2, 18),
    registers: [registry],
  });
  const sli = new Histogram({
    name: 'nodeload_scheduler_pod_scheduling_sli_duration_seconds',
    help: 'E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue until it is bound.',
    labelNames: ['attempts'],
    buckets: exponentialBuckets(0.01, 2, 20),
    registers: [registry],
  });
  new Gauge({
    name: 'nodeload_scheduler_pending_pods',
    help: 'Number of pending pods, by the queue type. "active" means pods in activeQ; "backoff" means pods in backoffQ; "unschedulable" means pods waiting for a relevant cluster change.',
    labelNames: ['queue'],
    registers: [registry],
    collect() {
      const lengths = sources.queueLengths();
      for (const queue of ['active', 'backoff', 'unschedulable'] as const)
        this.set({ queue }, lengths[queue]);
    },
  });
  new Gauge({
    name: 'nodeload_scheduler_binds_in_flight',
    help: 'Number of binding requests issued or waiting for the rate limiter.',
    registers: [registry],
    collect() {
      this.set(sources.bindsInFlight());
    },
  });
  const resynced = new Counter({
    name: 'nodeload_scheduler_resynced_pods_total',
    help: "Pending pods the scheduler's periodic check found neither in its queue nor binding, and queued; each is a missed or mishandled pod event, so this should stay 0.",
    registers: [registry],
  });
  for (const result of ['scheduled', 'unschedulable', 'error']) attempts.inc({ result }, 0);
  return {
    attempt(result, seconds, algorithmSeconds) {
      attempts.inc({ result });
      attemptDuration.observe({ result }, seconds);
      algorithmDuration.observe(algorithmSeconds);
    },
    algorithmCpu(seconds) {
      algorithmCpu.observe(seconds);
    },
    scheduled(e2eSeconds, n) {
      sli.observe({ attempts: attemptsLabel(n) }, e2eSeconds);
    },
    resynced(pods) {
      resynced.inc(pods);
    },
  };
}

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface OperatorMetrics {
  reconciles: Counter<'result'>;
  duration: Histogram;
  eligible: Gauge<'namespace' | 'rule'>;
}

export function operatorMetrics(registry: Registry): OperatorMetrics {
  const registers = [registry];
  return {
    reconciles: new Counter({
      name: 'nodeload_operator_reconciles_total',
      help: 'Reconcile passes of the NodeLoadRule operator, by result (success; error: some status write failed).',
      labelNames: ['result'],
      registers,
    }),
    duration: new Histogram({
      name: 'nodeload_operator_reconcile_duration_seconds',
      help: 'Duration of a reconcile pass (evaluation plus status writes).',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    // One series per rule; removed when the rule is deleted.
    eligible: new Gauge({
      name: 'nodeload_rule_eligible_nodes',
      help: 'Nodes currently eligible for the rule.',
      labelNames: ['namespace', 'rule'],
      registers,
    }),
  };
}

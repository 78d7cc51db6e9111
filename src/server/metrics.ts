import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/** One registry per gateway instance (never prom-client's global one: tests start several gateways). */
export function createMetricsRegistry(version: string): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'nodeload_' });
  new Gauge({
    name: 'nodeload_build_info',
    help: 'Build information; always 1.',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version }, 1);
  return registry;
}

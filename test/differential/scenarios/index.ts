// Every scenario, by plugin area.
import type { Scenario } from '../types.js';
import { concurrencyScenarios } from './concurrency.js';
import { interPodAffinityScenarios } from './inter-pod-affinity.js';
import { loadAwareScenarios } from './load-aware.js';
import { nodeAffinityScenarios } from './node-affinity.js';
import { nodeBasicsScenarios } from './node-basics.js';
import { nodePortsScenarios } from './node-ports.js';
import { preemptionScenarios } from './preemption.js';
import { resourceScenarios } from './resources.js';
import { scoreScenarios } from './scores.js';
import { topologySpreadScenarios } from './topology-spread.js';
import { volumeScenarios } from './volumes.js';

export const scenarios: Scenario[] = [
  ...nodeBasicsScenarios,
  ...nodeAffinityScenarios,
  ...nodePortsScenarios,
  ...resourceScenarios,
  ...interPodAffinityScenarios,
  ...topologySpreadScenarios,
  ...scoreScenarios,
  ...volumeScenarios,
  ...preemptionScenarios,
  ...concurrencyScenarios,
  ...loadAwareScenarios,
];

const names = new Set<string>();
for (const s of scenarios) {
  if (names.has(s.name)) throw new Error(`duplicate scenario name: ${s.name}`);
  names.add(s.name);
}

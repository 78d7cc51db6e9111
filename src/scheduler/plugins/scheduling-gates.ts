/**
 * SchedulingGates (PreEnqueue): a pod with a non-empty spec.schedulingGates waits outside the active
 * queue until every gate is removed (the API server also refuses to bind it).
 */
import type { PreEnqueuePlugin } from '../framework/types.js';
import { PLUGIN } from './names.js';

export function schedulingGates(): PreEnqueuePlugin {
  return {
    name: PLUGIN.SchedulingGates,
    preEnqueue: (pod) => (pod.schedulingGated ? 'waiting for scheduling gates' : undefined),
  };
}

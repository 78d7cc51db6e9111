import { describe, expect, it } from 'vitest';
import { podResourceList } from './pod-requests.js';

// biome-ignore lint/suspicious/noExplicitAny: pod JSON as the API sends it.
type Json = any;

const c = (name: string, cpu: string, extra: Json = {}) => ({
  name,
  resources: { requests: { cpu } },
  ...extra,
});
/** A container status as the kubelet reports it: actuated requests and allocated resources. */
const status = (name: string, actuated: string | undefined, allocated: string | undefined) => ({
  name,
  ...(actuated ? { resources: { requests: { cpu: actuated } } } : { resources: {} }),
  ...(allocated ? { allocatedResources: { cpu: allocated } } : {}),
});
const infeasible = { type: 'PodResizePending', status: 'True', reason: 'Infeasible' };
const deferred = { type: 'PodResizePending', status: 'True', reason: 'Deferred' };

describe('podResourceList with the pod status (in-place resize)', () => {
  it.each<{ name: string; spec: Json; status?: Json; cpu: number | undefined }>([
    {
      name: 'no status: the spec',
      spec: { containers: [c('app', '1')] },
      cpu: 1000,
    },
    {
      name: 'statuses without resources (a pending pod, an older kubelet): the spec',
      spec: { containers: [c('app', '1')] },
      status: { containerStatuses: [{ name: 'app', ready: false }] },
      cpu: 1000,
    },
    {
      name: 'nothing resized: spec = actuated = allocated',
      spec: { containers: [c('app', '1')] },
      status: { containerStatuses: [status('app', '1', '1')] },
      cpu: 1000,
    },
    {
      name: 'a downsize not yet applied: the node still holds the larger figure',
      spec: { containers: [c('app', '500m')] },
      status: { containerStatuses: [status('app', '2', '2')] },
      cpu: 2000,
    },
    {
      name: 'allocated but not yet actuated: the larger of the two',
      spec: { containers: [c('app', '500m')] },
      status: { containerStatuses: [status('app', '1', '3')] },
      cpu: 3000,
    },
    {
      name: 'an upsize: the spec, larger, counts at once',
      spec: { containers: [c('app', '4')] },
      status: { containerStatuses: [status('app', '1', '1')], conditions: [deferred] },
      cpu: 4000,
    },
    {
      name: 'an Infeasible upsize: the spec will not be applied, actuated and allocated count',
      spec: { containers: [c('app', '4')] },
      status: { containerStatuses: [status('app', '1', '1')], conditions: [infeasible] },
      cpu: 1000,
    },
    {
      name: 'per container, summed: one resized, one not',
      spec: { containers: [c('a', '500m'), c('b', '1')] },
      status: { containerStatuses: [status('a', '2', '2'), status('b', '1', '1')] },
      cpu: 3000,
    },
    {
      name: 'a sidecar’s resize counts; a finished regular init container’s status does not',
      spec: {
        containers: [c('app', '1')],
        initContainers: [c('setup', '1'), c('proxy', '100m', { restartPolicy: 'Always' })],
      },
      status: {
        containerStatuses: [status('app', '1', '1')],
        initContainerStatuses: [status('setup', '5', '5'), status('proxy', '2', '2')],
      },
      // apps = 1 + 2 (the sidecar at its actuated 2); init peak: setup 1 alone, proxy 2: max(3, 1, 2).
      cpu: 3000,
    },
    {
      name: 'pod-level requests with status.resources: the larger figure',
      spec: { resources: { requests: { cpu: '1' } }, containers: [c('app', '100m')] },
      status: {
        containerStatuses: [status('app', '100m', '100m')],
        resources: { requests: { cpu: '2' } },
        allocatedResources: { cpu: '2' },
      },
      cpu: 2000,
    },
  ])('$name', ({ spec, status: podStatus, cpu }) => {
    expect(podResourceList(spec, 'requests', podStatus)['cpu']).toBe(cpu);
  });

  it('limits are the spec’s, whatever the status says', () => {
    const spec = { containers: [{ name: 'app', resources: { limits: { cpu: '1' } } }] };
    const podStatus = { containerStatuses: [status('app', '3', '3')] };
    expect(podResourceList(spec, 'limits', podStatus)).toEqual({ cpu: 1000 });
  });

  it('a resource only the status reports still counts (the allocation holds it)', () => {
    const spec = { containers: [{ name: 'app', resources: { requests: { cpu: '1' } } }] };
    const podStatus = {
      containerStatuses: [
        {
          name: 'app',
          resources: { requests: { cpu: '1' } },
          allocatedResources: { cpu: '1', memory: '1Gi' },
        },
      ],
    };
    expect(podResourceList(spec, 'requests', podStatus)).toEqual({ cpu: 1000, memory: 1024 ** 3 });
  });
});

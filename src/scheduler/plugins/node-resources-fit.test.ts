import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../cluster/model.js';
import { nodeResourcesFit } from './node-resources-fit.js';
import { container, type Json, specNode, specPod, verdictOn } from './plugin.testing.js';

const ALLOC = { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi', 'hugepages-2Mi': '1Gi' };
const nodeWith = (extra: Record<string, string> = {}) =>
  specNode('n', { allocatable: { ...ALLOC, ...extra } });
const requesting = (name: string, requests: Record<string, string>, spec: Json = {}) =>
  specPod(name, { containers: [container('c', requests)], ...spec });
const boundPod = (name: string, requests: Record<string, string>) =>
  requesting(name, requests, { nodeName: 'n' });

function fitOn(pod: PodInfo, o: { bound?: PodInfo[]; extra?: Record<string, string>; args?: Json } = {}) {
  return verdictOn(nodeResourcesFit(o.args), pod, nodeWith(o.extra), { pods: o.bound ?? [] });
}

describe('NodeResourcesFit', () => {
  it.each<{
    name: string;
    pod: PodInfo;
    bound?: PodInfo[];
    extra?: Record<string, string>;
    args?: Json;
    want: string[];
  }>([
    { name: 'fits', pod: requesting('p', { cpu: '1', memory: '1Gi' }), want: [] },
    {
      name: 'cpu: free = allocatable − Σ requests of the pods on the node',
      pod: requesting('p', { cpu: '600m' }),
      bound: [boundPod('b', { cpu: '3500m' })],
      want: ['Insufficient cpu'],
    },
    {
      name: 'cpu: exactly fits',
      pod: requesting('p', { cpu: '500m' }),
      bound: [boundPod('b', { cpu: '3500m' })],
      want: [],
    },
    {
      name: 'memory',
      pod: requesting('p', { memory: '5Gi' }),
      bound: [boundPod('b', { memory: '4Gi' })],
      want: ['Insufficient memory'],
    },
    {
      name: 'cpu and memory together',
      pod: requesting('p', { cpu: '5', memory: '9Gi' }),
      want: ['Insufficient cpu', 'Insufficient memory'],
    },
    {
      name: 'pods: the node is at its pod limit',
      pod: requesting('p', {}),
      bound: [boundPod('a', {}), boundPod('b', {})],
      extra: { pods: '2' },
      want: ['Too many pods'],
    },
    {
      name: 'pods: one slot left',
      pod: requesting('p', {}),
      bound: [boundPod('a', {})],
      extra: { pods: '2' },
      want: [],
    },
    {
      name: 'a pod without requests fits a full node',
      pod: requesting('p', {}),
      bound: [boundPod('b', { cpu: '4', memory: '8Gi' })],
      want: [],
    },
    {
      name: 'ephemeral-storage',
      pod: requesting('p', { 'ephemeral-storage': '60Gi' }),
      bound: [boundPod('b', { 'ephemeral-storage': '50Gi' })],
      want: ['Insufficient ephemeral-storage'],
    },
    {
      name: 'hugepages-2Mi',
      pod: requesting('p', { 'hugepages-2Mi': '600Mi' }),
      bound: [boundPod('b', { 'hugepages-2Mi': '512Mi' })],
      want: ['Insufficient hugepages-2Mi'],
    },
    {
      name: 'hugepages-1Gi the node does not list',
      pod: requesting('p', { 'hugepages-1Gi': '1Gi' }),
      want: ['Insufficient hugepages-1Gi'],
    },
    {
      name: 'extended resource absent on the node',
      pod: requesting('p', { 'example.com/gpu': '1' }),
      want: ['Insufficient example.com/gpu'],
    },
    {
      name: 'extended resource on the node, all taken',
      pod: requesting('p', { 'example.com/gpu': '1' }),
      bound: [boundPod('b', { 'example.com/gpu': '2' })],
      extra: { 'example.com/gpu': '2' },
      want: ['Insufficient example.com/gpu'],
    },
    {
      name: 'extended resource on the node, one free',
      pod: requesting('p', { 'example.com/gpu': '1' }),
      bound: [boundPod('b', { 'example.com/gpu': '1' })],
      extra: { 'example.com/gpu': '2' },
      want: [],
    },
    {
      name: 'ignoredResources skips an extended resource',
      pod: requesting('p', { 'example.com/gpu': '1' }),
      args: { ignoredResources: ['example.com/gpu'] },
      want: [],
    },
    {
      name: 'ignoredResourceGroups skips by the prefix before "/"',
      pod: requesting('p', { 'example.com/gpu': '1', 'other.io/fpga': '1' }),
      args: { ignoredResourceGroups: ['example.com'] },
      want: ['Insufficient other.io/fpga'],
    },
    {
      name: 'ignoredResources cannot ignore native resources (only extended ones)',
      pod: requesting('p', { cpu: '5', 'hugepages-2Mi': '2Gi' }),
      args: { ignoredResources: ['cpu', 'hugepages-2Mi'] },
      want: ['Insufficient cpu', 'Insufficient hugepages-2Mi'],
    },
    {
      name: 'init containers: the largest one counts when above the app containers',
      pod: specPod('p', {
        initContainers: [container('init', { cpu: '3' })],
        containers: [container('c', { cpu: '1' })],
      }),
      bound: [boundPod('b', { cpu: '1500m' })],
      want: ['Insufficient cpu'],
    },
    {
      name: 'init containers: not added to the app containers',
      pod: specPod('p', {
        initContainers: [container('init', { cpu: '2' })],
        containers: [container('c', { cpu: '2' })],
      }),
      bound: [boundPod('b', { cpu: '2' })],
      want: [],
    },
    {
      // sidecar 1 runs while init 2 does: peak 3 > app containers 1 + sidecar 1.
      name: 'a restartable sidecar declared before a regular init container runs beside it',
      pod: specPod('p', {
        initContainers: [
          container('side', { cpu: '1' }, { restartPolicy: 'Always' }),
          container('init', { cpu: '2' }),
        ],
        containers: [container('c', { cpu: '1' })],
      }),
      bound: [boundPod('b', { cpu: '1500m' })],
      want: ['Insufficient cpu'],
    },
    {
      // Declared after it, the sidecar does not overlap the init container: max(2, 1 + 1) = 2.
      name: 'the same sidecar declared after the init container',
      pod: specPod('p', {
        initContainers: [
          container('init', { cpu: '2' }),
          container('side', { cpu: '1' }, { restartPolicy: 'Always' }),
        ],
        containers: [container('c', { cpu: '1' })],
      }),
      bound: [boundPod('b', { cpu: '1500m' })],
      want: [],
    },
    {
      name: 'overhead is added to the requests',
      pod: requesting('p', { cpu: '1' }, { overhead: { cpu: '600m' } }),
      bound: [boundPod('b', { cpu: '2500m' })],
      want: ['Insufficient cpu'],
    },
    {
      name: 'pod-level resources replace the containers’ sum',
      pod: requesting('p', { cpu: '100m' }, { resources: { requests: { cpu: '2' } } }),
      bound: [boundPod('b', { cpu: '2500m' })],
      want: ['Insufficient cpu'],
    },
    {
      name: 'pod-level resources may be below the containers’ sum',
      pod: requesting('p', { memory: '6Gi' }, { resources: { requests: { memory: '1Gi' } } }),
      bound: [boundPod('b', { memory: '6Gi' })],
      want: [],
    },
    {
      name: 'terminal pods on the node no longer count',
      pod: requesting('p', { cpu: '2' }),
      bound: [
        specPod(
          'done',
          { nodeName: 'n', containers: [container('c', { cpu: '4' })] },
          { phase: 'Succeeded' },
        ),
      ],
      want: [],
    },
  ])('$name', ({ pod, bound, extra, args, want }) => {
    const v = fitOn(pod, { bound, extra, args });
    expect(v.reasons.map((r) => r.reason)).toEqual(want);
    expect(v.reasons.every((r) => r.plugin === 'NodeResourcesFit')).toBe(true);
  });

  it('codes cpu, memory and the rest apart, with the numbers in the detail', () => {
    const v = fitOn(requesting('p', { cpu: '3', memory: '5Gi', 'example.com/gpu': '1' }), {
      bound: [boundPod('b', { cpu: '2', memory: '4Gi' })],
    });
    expect(v.reasons.map((r) => [r.code, r.detail])).toEqual([
      ['InsufficientCPU', 'requests 3, free 2 of 4'],
      ['InsufficientMemory', 'requests 5Gi, free 4Gi of 8Gi'],
      ['InsufficientResource', 'requests 1, free 0 of 0'],
    ]);
  });

  it('is unresolvable only when the request exceeds the whole allocatable (preemption cannot help)', () => {
    const busy = fitOn(requesting('p', { cpu: '2' }), { bound: [boundPod('b', { cpu: '3' })] });
    expect(busy.reasons).toEqual([expect.objectContaining({ code: 'InsufficientCPU' })]);
    expect(busy.reasons[0]?.unresolvable).toBeUndefined();
    const tooBig = fitOn(requesting('p', { cpu: '5' }));
    expect(tooBig.reasons[0]?.unresolvable).toBe(true);
    const noGpu = fitOn(requesting('p', { 'example.com/gpu': '1' }));
    expect(noGpu.reasons[0]?.unresolvable).toBe(true);
    const tooMany = fitOn(requesting('p', {}), { bound: [boundPod('a', {})], extra: { pods: '1' } });
    expect(tooMany.reasons[0]).toMatchObject({ code: 'TooManyPods' });
    expect(tooMany.reasons[0]?.unresolvable).toBeUndefined();
  });
});

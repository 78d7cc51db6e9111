import { describe, expect, it } from 'vitest';
import type { DeviceClassInfo } from '../../cluster/model.js';
import { runPostFilter } from '../framework/runtime.js';
import type { PreFilterPlugin } from '../framework/types.js';
import { defaultPreemption } from './default-preemption.js';
import {
  dynamicResources,
  ERR_DRA_EXTENDED_RESOURCE,
  ERR_RESOURCE_CLAIMS,
  NO_CLAIMS_TO_DEALLOCATE,
  STATE_NOT_FOUND,
  STILL_NOT_SCHEDULABLE,
} from './dynamic-resources.js';
import { nodeResourcesFit } from './node-resources-fit.js';
import { container, cycleOf, profileOf, specNode, specPod, verdictOn } from './plugin.testing.js';

const gpuClass: DeviceClassInfo = {
  name: 'gpu.example.com',
  resourceVersion: '1',
  createdAt: 0,
  extendedResourceName: 'example.com/gpu',
};
const CLASSES = new Map([[gpuClass.name, gpuClass]]);
const wantsGpu = (resource = 'example.com/gpu') =>
  specPod('p', { containers: [container('c', { cpu: '100m', [resource]: '1' })] });
const withGpus = specNode('plugin', {
  allocatable: { cpu: '4', memory: '8Gi', pods: '110', 'example.com/gpu': '2' },
});
const without = specNode('dra');

describe('DynamicResources (nodeload refuses what it cannot allocate)', () => {
  it.each([
    { name: 'a pod without claims is not this plugin’s business', spec: {}, reasons: [] },
    { name: 'an empty resourceClaims list', spec: { resourceClaims: [] }, reasons: [] },
    {
      name: 'a pod with a ResourceClaim fits no node, unresolvably',
      spec: { resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }] },
      reasons: [ERR_RESOURCE_CLAIMS],
    },
  ])('$name', ({ spec, reasons }) => {
    const v = verdictOn(dynamicResources(), specPod('p', spec), specNode('n'));
    expect(v.reasons.map((r) => r.reason)).toEqual(reasons);
    expect(v.feasible).toBe(reasons.length === 0);
    if (reasons.length) expect(v.reasons[0]?.unresolvable).toBe(true);
  });
});

/**
 * DRA-backed extended resources (DRAExtendedResource): kube-scheduler's NodeResourcesFit leaves a resource
 * a DeviceClass backs to DynamicResources on a node whose allocatable lacks it; nodeload cannot allocate
 * it there, and says so instead of "Insufficient".
 */
describe('DynamicResources + NodeResourcesFit: an extended resource a DeviceClass backs', () => {
  const profile = (classes: ReadonlyMap<string, DeviceClassInfo>) =>
    profileOf(nodeResourcesFit({}, classes), dynamicResources(classes));
  it.each([
    {
      name: 'a node without the resource: Dynamic Resource Allocation would serve it (unresolvable here)',
      pod: wantsGpu(),
      node: without,
      classes: CLASSES,
      reasons: [ERR_DRA_EXTENDED_RESOURCE],
    },
    {
      name: 'a node whose device plugin has it: NodeResourcesFit counts it as any extended resource',
      pod: wantsGpu(),
      node: withGpus,
      classes: CLASSES,
      reasons: [],
    },
    {
      name: 'no DeviceClass backs it: "Insufficient" as before',
      pod: wantsGpu(),
      node: without,
      classes: new Map(),
      reasons: ['Insufficient example.com/gpu'],
    },
    {
      name: "the class's implicit name (deviceclass.resource.kubernetes.io/<class>)",
      pod: wantsGpu('deviceclass.resource.kubernetes.io/gpu.example.com'),
      node: without,
      classes: CLASSES,
      reasons: [ERR_DRA_EXTENDED_RESOURCE],
    },
  ])('$name', ({ pod, node, classes, reasons }) => {
    const v = cycleOf(profile(classes), pod, { nodes: [node] }).verdicts[0];
    expect(v?.reasons.map((r) => r.reason)).toEqual(reasons);
    if (reasons[0] === ERR_DRA_EXTENDED_RESOURCE) {
      expect(v?.reasons[0]?.unresolvable).toBe(true);
      expect(v?.reasons[0]?.detail).toMatch(/DeviceClass gpu\.example\.com/);
    }
  });
});

/**
 * PostFilter: nodeload has no claim to free, and says what upstream's plugin says then; the runtime joins
 * it with DefaultPreemption's sentence, in profile order, as upstream's RunPostFilterPlugins does.
 */
describe('DynamicResources PostFilter, joined with DefaultPreemption', () => {
  const huge = container('c', { cpu: '64' });
  it.each([
    {
      name: 'a pod without claims: nothing to deallocate',
      pod: specPod('p', { containers: [huge] }),
      preemption: true,
      want: `${NO_CLAIMS_TO_DEALLOCATE}, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.`,
    },
    {
      name: 'a DRA-backed extended resource: still not schedulable',
      pod: specPod('p', { containers: [container('c', { cpu: '64', 'example.com/gpu': '1' })] }),
      preemption: true,
      want: `${STILL_NOT_SCHEDULABLE}, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.`,
    },
    {
      name: 'a pod with claims: only preemption speaks',
      pod: specPod('p', {
        containers: [huge],
        resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'g' }],
      }),
      preemption: true,
      want: 'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    },
    {
      name: 'without DefaultPreemption the sentence stands alone',
      pod: specPod('p', { containers: [huge] }),
      preemption: false,
      want: NO_CLAIMS_TO_DEALLOCATE,
    },
    {
      name: "an earlier PreFilter's unresolvable rejection: upstream's state read fails, PostFilter ends",
      pod: specPod('p', { containers: [container('c', { cpu: '100m' })] }),
      preemption: true,
      rejectFirst: true,
      want: STATE_NOT_FOUND,
    },
  ])('$name', ({ pod, preemption, want, rejectFirst }) => {
    // A PreFilter before DynamicResources' that rejects every pod unresolvably (as VolumeBinding does a
    // missing claim).
    const rejecter: PreFilterPlugin = {
      name: 'Rejecter',
      preFilter: () => ({
        reject: {
          code: 'Gone',
          reason: 'persistentvolumeclaim "x" not found',
          detail: '',
          unresolvable: true,
        },
      }),
    };
    const profile = profileOf(
      ...(rejectFirst ? [rejecter] : []),
      nodeResourcesFit({}, CLASSES),
      dynamicResources(CLASSES),
      ...(preemption ? [defaultPreemption({}, { random: () => 0 })] : []),
    );
    const cycle = cycleOf(profile, pod, { nodes: [without] });
    expect(cycle.ranked).toEqual([]);
    const result = runPostFilter(profile, cycle.pre, cycle.ctx, cycle.verdicts);
    expect(result?.message).toBe(want);
    // An Error ends PostFilter: DefaultPreemption does not run after it, nothing else is said.
    if (rejectFirst) expect(result).toEqual({ message: STATE_NOT_FOUND, error: true });
  });
});

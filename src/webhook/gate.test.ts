import { describe, expect, it } from 'vitest';
import { OPT_OUT_LABEL, optedOut, UNSUPPORTED, unsupportedReasons } from './gate.js';

const pvc = (name: string, claimName: string) => ({ name, persistentVolumeClaim: { claimName } });
const ephemeral = (name: string) => ({
  name,
  ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } },
});

describe('unsupportedReasons', () => {
  it.each([
    { what: 'no volumes, no claims', spec: { containers: [{ name: 'c' }] }, reasons: [] },
    {
      what: 'volumes nodeload handles (emptyDir, configMap, secret, projected, hostPath)',
      spec: {
        volumes: [
          { name: 'a', emptyDir: {} },
          { name: 'b', configMap: { name: 'cm' } },
          { name: 'c', secret: { secretName: 's' } },
          { name: 'd', projected: { sources: [] } },
          { name: 'e', hostPath: { path: '/x' } },
        ],
      },
      reasons: [],
    },
    {
      what: 'PVCs: steered (the scheduler runs VolumeBinding)',
      spec: { volumes: [{ name: 'tmp', emptyDir: {} }, pvc('d', 'data'), pvc('e', 'more')] },
      reasons: [],
    },
    {
      what: 'a generic ephemeral volume: steered',
      spec: { volumes: [ephemeral('scratch')] },
      reasons: [],
    },
    {
      what: 'resource claims (DRA)',
      spec: { resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'gpu-t' }] },
      reasons: ['DynamicResources: pod uses ResourceClaim "gpu"'],
    },
    {
      what: 'several resource claims: three shown, the rest counted',
      spec: { resourceClaims: ['a', 'b', 'c', 'd', 'e'].map((n) => ({ name: `claim-${n}` })) },
      reasons: ['DynamicResources: pod uses ResourceClaims "claim-a", "claim-b", "claim-c" and 2 more'],
    },
    {
      what: 'volumes and resource claims: only DRA keeps the pod out',
      spec: {
        volumes: [pvc('d', 'data'), ephemeral('s1'), ephemeral('s2')],
        resourceClaims: [{ name: 'a' }, { name: 'b' }],
      },
      reasons: ['DynamicResources: pod uses ResourceClaims "a", "b"'],
    },
    { what: 'an empty resourceClaims list', spec: { resourceClaims: [] }, reasons: [] },
    {
      what: 'a resource claim without a name still counts',
      spec: { resourceClaims: [{}] },
      reasons: ['DynamicResources: pod uses ResourceClaim "?"'],
    },
    {
      what: 'strange shapes are ignored, never thrown on',
      spec: { volumes: [null, 3, 'x', { name: 'v', persistentVolumeClaim: null }], resourceClaims: 'x' },
      reasons: [],
    },
  ])('$what', ({ spec, reasons }) => {
    expect(unsupportedReasons({ metadata: { name: 'p' }, spec })).toEqual(reasons);
  });

  it.each([null, undefined, 'pod', [], { metadata: {} }, { spec: null }])(
    'no spec (%j): no reason',
    (raw) => {
      expect(unsupportedReasons(raw)).toEqual([]);
    },
  );

  it('only DynamicResources is left in the gate (volume binding is implemented)', () => {
    expect(UNSUPPORTED.map((c) => [c.plugin, c.permanent])).toEqual([
      ['DynamicResources', true],
      ['DynamicResources', true],
    ]);
    expect(unsupportedReasons({ spec: { resourceClaims: [{ name: 'gpu' }] } }, undefined, [])).toEqual([]);
  });
});

describe('unsupportedReasons: extended resources Dynamic Resource Allocation serves', () => {
  // What the cluster's DeviceClasses say (src/cluster/device-classes.ts resolves it).
  const backing: Record<string, string> = {
    'example.com/gpu': 'gpu',
    'deviceclass.resource.kubernetes.io/nic': 'nic',
    'example.com/fpga': 'fpga',
    'example.com/tpu': 'tpu',
  };
  const cluster = { deviceClassFor: (r: string) => backing[r] };
  const container = (resources: Record<string, Record<string, string>>) => ({ name: 'c', resources });

  it.each([
    {
      what: 'a container requesting a DRA-backed resource',
      spec: { containers: [container({ requests: { cpu: '1', 'example.com/gpu': '1' } })] },
      reasons: [
        'DynamicResources: pod requests extended resource "example.com/gpu" (DeviceClass "gpu") served by Dynamic Resource Allocation',
      ],
    },
    {
      what: 'limits alone name it too (requests default to them); the implicit class name',
      spec: { containers: [container({ limits: { 'deviceclass.resource.kubernetes.io/nic': '1' } })] },
      reasons: [
        'DynamicResources: pod requests extended resource "deviceclass.resource.kubernetes.io/nic" (DeviceClass "nic") served by Dynamic Resource Allocation',
      ],
    },
    {
      what: 'init containers count; each resource named once; three shown',
      spec: {
        initContainers: [
          container({ requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } }),
        ],
        containers: [
          container({ requests: { 'example.com/fpga': '1', 'example.com/tpu': '1' } }),
          container({ limits: { 'deviceclass.resource.kubernetes.io/nic': '2', 'example.com/gpu': '1' } }),
        ],
      },
      reasons: [
        'DynamicResources: pod requests extended resources "example.com/gpu" (DeviceClass "gpu"), "example.com/fpga" (DeviceClass "fpga"), "example.com/tpu" (DeviceClass "tpu") and 1 more served by Dynamic Resource Allocation',
      ],
    },
    {
      what: 'a device-plugin resource no DeviceClass backs, native resources, hugepages: steered',
      spec: {
        containers: [
          container({
            requests: { 'example.com/other': '1', cpu: '1', memory: '1Gi', 'hugepages-2Mi': '2Mi' },
          }),
        ],
      },
      reasons: [],
    },
    {
      what: 'a zero amount asks for nothing; RuntimeClass overhead counts',
      spec: {
        containers: [container({ requests: { 'example.com/gpu': '0' } })],
        overhead: { 'example.com/tpu': '1' },
      },
      reasons: [
        'DynamicResources: pod requests extended resource "example.com/tpu" (DeviceClass "tpu") served by Dynamic Resource Allocation',
      ],
    },
    {
      what: 'strange shapes are ignored',
      spec: { containers: [null, { resources: 'x' }, { resources: { requests: [] } }], initContainers: 3 },
      reasons: [],
    },
  ])('$what', ({ spec, reasons }) => {
    expect(unsupportedReasons({ spec }, cluster)).toEqual(reasons);
  });

  it('without cluster knowledge nothing is DRA-backed', () => {
    expect(
      unsupportedReasons({ spec: { containers: [container({ requests: { 'example.com/gpu': '1' } })] } }),
    ).toEqual([]);
  });
});

describe('optedOut', () => {
  it.each<{ labels: Record<string, string> | null | undefined; out: boolean }>([
    { labels: { [OPT_OUT_LABEL]: 'disabled' }, out: true },
    { labels: { [OPT_OUT_LABEL]: 'enabled' }, out: false },
    { labels: { [OPT_OUT_LABEL]: 'Disabled' }, out: false },
    { labels: { scheduling: 'disabled' }, out: false },
    { labels: {}, out: false },
    { labels: null, out: false },
    { labels: undefined, out: false },
  ])('$labels → $out', ({ labels, out }) => {
    expect(optedOut(labels)).toBe(out);
  });
});

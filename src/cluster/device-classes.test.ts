import { describe, expect, it } from 'vitest';
import { deviceClassBacking } from './device-classes.js';
import type { DeviceClassInfo } from './model.js';

const dc = (name: string, createdAt: number, extendedResourceName?: string): DeviceClassInfo => ({
  name,
  resourceVersion: '1',
  createdAt,
  ...(extendedResourceName ? { extendedResourceName } : {}),
});

const CLASSES = new Map(
  [
    dc('gpu', 100, 'example.com/gpu'),
    dc('gpu-v2', 200, 'example.com/gpu'),
    dc('fpga-a', 300, 'example.com/fpga'),
    dc('fpga-b', 300, 'example.com/fpga'),
    dc('nic', 100),
  ].map((c) => [c.name, c]),
);

describe('deviceClassBacking', () => {
  it.each([
    {
      what: 'the implicit name of an existing class',
      resource: 'deviceclass.resource.kubernetes.io/nic',
      want: 'nic',
    },
    {
      what: 'the implicit name of a class that does not exist',
      resource: 'deviceclass.resource.kubernetes.io/tpu',
      want: undefined,
    },
    { what: 'an explicit name: the newer of two classes wins', resource: 'example.com/gpu', want: 'gpu-v2' },
    { what: 'an explicit name: same age, the lower name wins', resource: 'example.com/fpga', want: 'fpga-a' },
    { what: 'a device-plugin resource no class names', resource: 'example.com/other', want: undefined },
    { what: 'a native resource', resource: 'cpu', want: undefined },
  ])('$what', ({ resource, want }) => {
    expect(deviceClassBacking(CLASSES, resource)).toBe(want);
  });

  it('no classes: nothing is backed', () => {
    expect(deviceClassBacking(new Map(), 'deviceclass.resource.kubernetes.io/nic')).toBeUndefined();
  });
});

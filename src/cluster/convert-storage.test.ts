import { describe, expect, it } from 'vitest';
import { toDeviceClassInfo, toDisruptionBudgetInfo, toVolumeAttachmentInfo } from './convert-storage.js';

describe('toVolumeAttachmentInfo', () => {
  it.each([
    {
      what: 'a CSI attachment of a PV',
      raw: {
        metadata: { name: 'csi-1', resourceVersion: '7' },
        spec: { attacher: 'ebs.csi.aws.com', nodeName: 'n1', source: { persistentVolumeName: 'pv-1' } },
      },
      want: {
        name: 'csi-1',
        resourceVersion: '7',
        nodeName: 'n1',
        attacher: 'ebs.csi.aws.com',
        persistentVolumeName: 'pv-1',
      },
    },
    {
      what: 'an inline (migrated) volume: no PV name',
      raw: {
        metadata: { name: 'csi-2' },
        spec: { attacher: 'd', nodeName: 'n1', source: { inlineVolumeSpec: {} } },
      },
      want: { name: 'csi-2', resourceVersion: '', nodeName: 'n1', attacher: 'd' },
    },
    {
      what: 'no spec at all',
      raw: { metadata: { name: 'x' } },
      want: { name: 'x', resourceVersion: '', nodeName: '', attacher: '' },
    },
  ])('$what', ({ raw, want }) => {
    expect(toVolumeAttachmentInfo(raw)).toEqual(want);
  });
});

describe('toDeviceClassInfo', () => {
  it.each([
    {
      what: 'an explicit extended resource name',
      raw: {
        metadata: { name: 'gpu', resourceVersion: '3', creationTimestamp: '2026-12-07T08:00:00Z' },
        spec: { extendedResourceName: 'example.com/gpu', selectors: [] },
      },
      want: {
        name: 'gpu',
        resourceVersion: '3',
        createdAt: Date.parse('2026-12-07T08:00:00Z'),
        extendedResourceName: 'example.com/gpu',
      },
    },
    {
      what: 'none (only the implicit name), no or a bad creationTimestamp',
      raw: { metadata: { name: 'nic', creationTimestamp: 'yesterday' }, spec: {} },
      want: { name: 'nic', resourceVersion: '', createdAt: 0 },
    },
  ])('$what', ({ raw, want }) => {
    expect(toDeviceClassInfo(raw)).toEqual(want);
  });
});

describe('toDisruptionBudgetInfo', () => {
  const meta = { name: 'guard', namespace: 'shop', resourceVersion: '7' };
  const base = { namespace: 'shop', name: 'guard', resourceVersion: '7' };
  it.each([
    {
      what: 'selector, budget and the pods whose eviction was admitted (sorted names)',
      raw: {
        metadata: meta,
        spec: { selector: { matchLabels: { app: 'web' } }, minAvailable: 1 },
        status: {
          disruptionsAllowed: 0,
          disruptedPods: { 'web-b': '2026-12-07T13:40:00Z', 'web-a': '2026-12-07T13:40:01Z' },
        },
      },
      want: {
        ...base,
        selector: { matchLabels: { app: 'web' } },
        disruptionsAllowed: 0,
        disruptedPods: ['web-a', 'web-b'],
      },
    },
    {
      what: 'no status yet: nothing allowed, none disrupted; an empty map is none',
      raw: { metadata: meta, spec: {}, status: { disruptedPods: {} } },
      want: { ...base, disruptionsAllowed: 0 },
    },
  ])('$what', ({ raw, want }) => {
    expect(toDisruptionBudgetInfo(raw)).toEqual(want);
  });
});

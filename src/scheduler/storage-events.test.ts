/** The storage view the scheduler hands the volume plugins, and which storage changes requeue pods. */
import { describe, expect, it } from 'vitest';
import { FakeCluster } from '../../test/kit/fake-cluster.js';
import { claim, csiNode, pod, pv, storageClass } from './plugins/volume.testing.js';
import {
  claimChangeMatters,
  csiDriverChangeMatters,
  csiNodeChangeMatters,
  storageCapacityChangeMatters,
  storageClassChangeMatters,
  storageViewOf,
  volumeAttachmentChangeMatters,
  volumeChangeMatters,
} from './storage-events.js';

const va = (node: string) => ({
  name: 'va',
  resourceVersion: '1',
  nodeName: node,
  attacher: 'd',
  persistentVolumeName: 'v',
});

const cap = (gib: number, node = 'n1') => ({
  namespace: 'kube-system',
  name: 'cap',
  resourceVersion: '1',
  storageClassName: 'fast',
  nodeTopology: { matchLabels: { 'kubernetes.io/hostname': node } },
  limitBytes: gib * 2 ** 30,
});
const driver = (storageCapacity: boolean) => ({ name: 'd', resourceVersion: '1', storageCapacity });

describe('storage changes that requeue unschedulable pods', () => {
  it.each([
    ['a claim added', claimChangeMatters({ new: claim('c') }), true],
    ['a claim updated', claimChangeMatters({ old: claim('c'), new: claim('c', { bound: true }) }), true],
    ['a claim deleted', claimChangeMatters({ old: claim('c') }), false],
    ['a PV added', volumeChangeMatters({ new: pv('v') }), true],
    ['a PV deleted', volumeChangeMatters({ old: pv('v') }), false],
    ['a StorageClass added', storageClassChangeMatters({ new: storageClass('s') }), true],
    [
      'allowedTopologies changed',
      storageClassChangeMatters({ old: storageClass('s'), new: storageClass('s', { zones: ['z'] }) }),
      true,
    ],
    [
      'a StorageClass relabelled',
      storageClassChangeMatters({ old: storageClass('s'), new: storageClass('s') }),
      false,
    ],
    ['a CSINode added', csiNodeChangeMatters({ new: csiNode('n', { d: 1 }) }), true],
    [
      'a limit raised',
      csiNodeChangeMatters({ old: csiNode('n', { d: 1 }), new: csiNode('n', { d: 2 }) }),
      true,
    ],
    [
      'a CSINode resynced',
      csiNodeChangeMatters({ old: csiNode('n', { d: 1 }), new: csiNode('n', { d: 1 }) }),
      false,
    ],
    ['a VolumeAttachment deleted (a volume detached)', volumeAttachmentChangeMatters({ old: va('n') }), true],
    ['a VolumeAttachment added', volumeAttachmentChangeMatters({ new: va('n') }), false],
    ['a VolumeAttachment updated', volumeAttachmentChangeMatters({ old: va('n'), new: va('n') }), false],
    ['a CSIStorageCapacity added', storageCapacityChangeMatters({ new: cap(1) }), true],
    ['its room grown', storageCapacityChangeMatters({ old: cap(1), new: cap(2) }), true],
    ['its room shrunk', storageCapacityChangeMatters({ old: cap(2), new: cap(1) }), false],
    ['it reaches other nodes', storageCapacityChangeMatters({ old: cap(1), new: cap(1, 'n2') }), true],
    ['it is deleted', storageCapacityChangeMatters({ old: cap(1) }), false],
    [
      'a CSIDriver stops tracking capacity',
      csiDriverChangeMatters({ old: driver(true), new: driver(false) }),
      true,
    ],
    [
      'a CSIDriver starts tracking it',
      csiDriverChangeMatters({ old: driver(false), new: driver(true) }),
      false,
    ],
    ['a CSIDriver added', csiDriverChangeMatters({ new: driver(false) }), false],
  ])('%s → %s', (_what, got, want) => {
    expect(got).toBe(want);
  });
});

describe('storageViewOf', () => {
  const cache = new FakeCluster();
  cache.claims.set('default/c', claim('c'));
  const { bus } = cache;

  it("reads the cache's maps, empty ones when it does not watch storage", () => {
    const view = storageViewOf(cache);
    expect(view.claims.get('default/c')?.name).toBe('c');
    expect(view.volumes.size).toBe(0);
    expect(view.csiNodes.size).toBe(0);
    cache.volumeAttachments.set('va', va('n'));
    expect(view.volumeAttachments.get('va')?.nodeName).toBe('n');
  });

  it('notifies on claim and PV changes and pod deletions, until unsubscribed', () => {
    let n = 0;
    const off = storageViewOf(cache).onChange(() => n++);
    bus.emit('claim', { type: 'add', new: claim('d') });
    bus.emit('volume', { type: 'add', new: pv('v') });
    bus.emit('pod', { type: 'add', new: pod('p') });
    bus.emit('pod', { type: 'delete', old: pod('p') });
    expect(n).toBe(3);
    off();
    bus.emit('claim', { type: 'add', new: claim('e') });
    expect(n).toBe(3);
  });
});

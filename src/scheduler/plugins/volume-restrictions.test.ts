/**
 * VolumeRestrictions, with the facts of upstream's volume_restrictions_test.go: TestGCEDiskConflicts,
 * TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts.
 */
import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../cluster/model.js';
import type { NodeSnapshot } from '../framework/snapshot.js';
import type { CycleState } from '../framework/types.js';
import type { NodeVerdict } from '../framework/verdict.js';
import { claim, each, type FilterRun, type Json, node, pod, runFilter, storage } from './volume.testing.js';
import { ERR_DISK_CONFLICT, ERR_RWOP_CONFLICT, volumeRestrictions } from './volume-restrictions.js';

const gce = (pdName: string, readOnly = false): Json => ({ gcePersistentDisk: { pdName, readOnly } });
const ebs = (volumeID: string, readOnly = false): Json => ({ awsElasticBlockStore: { volumeID, readOnly } });
const rbd = (monitors: string[], image: string, readOnly = false, pool = 'rbd'): Json => ({
  rbd: { monitors, pool, image, readOnly },
});
const iscsi = (iqn: string, readOnly = false, targetPortal = '127.0.0.1:3260'): Json => ({
  iscsi: { targetPortal, iqn, lun: 0, readOnly },
});

interface DiskCase {
  name: string;
  wants: Json[];
  existing: Json[];
  conflict: boolean;
}

const diskCases: DiskCase[] = [
  { name: 'nothing wanted', wants: [], existing: [gce('foo')], conflict: false },
  { name: 'GCE: nothing on the node', wants: [gce('foo')], existing: [], conflict: false },
  { name: 'GCE: same disk', wants: [gce('foo')], existing: [gce('foo')], conflict: true },
  { name: 'GCE: other disk', wants: [gce('foo')], existing: [gce('bar')], conflict: false },
  { name: 'GCE: both read-only', wants: [gce('foo', true)], existing: [gce('foo', true)], conflict: false },
  { name: 'GCE: one read-write', wants: [gce('foo', true)], existing: [gce('foo')], conflict: true },
  { name: 'EBS: same volume', wants: [ebs('vol-1')], existing: [ebs('vol-1')], conflict: true },
  {
    name: 'EBS: read-only still conflicts',
    wants: [ebs('vol-1', true)],
    existing: [ebs('vol-1', true)],
    conflict: true,
  },
  { name: 'EBS: other volume', wants: [ebs('vol-1')], existing: [ebs('vol-2')], conflict: false },
  {
    name: 'RBD: a shared monitor, same pool and image',
    wants: [rbd(['a:6789', 'b:6789'], 'img')],
    existing: [rbd(['b:6789', 'c:6789'], 'img')],
    conflict: true,
  },
  {
    name: 'RBD: no shared monitor',
    wants: [rbd(['a:6789'], 'img')],
    existing: [rbd(['c:6789'], 'img')],
    conflict: false,
  },
  {
    name: 'RBD: other image',
    wants: [rbd(['a:6789'], 'img')],
    existing: [rbd(['a:6789'], 'other')],
    conflict: false,
  },
  {
    name: 'RBD: other pool',
    wants: [rbd(['a:6789'], 'img')],
    existing: [rbd(['a:6789'], 'img', false, 'kube')],
    conflict: false,
  },
  {
    name: 'RBD: both read-only',
    wants: [rbd(['a'], 'img', true)],
    existing: [rbd(['a'], 'img', true)],
    conflict: false,
  },
  {
    name: 'iSCSI: same IQN through another portal',
    wants: [iscsi('iqn.2016-12.server:storage.target01')],
    existing: [iscsi('iqn.2016-12.server:storage.target01', false, '10.0.0.9:3260')],
    conflict: true,
  },
  {
    name: 'iSCSI: other IQN',
    wants: [iscsi('iqn.2016-12.server:storage.target01')],
    existing: [iscsi('iqn.2016-12.server:storage.target02')],
    conflict: false,
  },
  {
    name: 'iSCSI: both read-only',
    wants: [iscsi('iqn.2016-12.server:t1', true)],
    existing: [iscsi('iqn.2016-12.server:t1', true)],
    conflict: false,
  },
  { name: 'GCE vs EBS of the same name', wants: [gce('x')], existing: [ebs('x')], conflict: false },
];

describe('VolumeRestrictions: in-tree disk conflicts on the node', () => {
  it.each(diskCases)('$name', ({ wants, existing, conflict }) => {
    const nodes = [node('a'), node('b')];
    const there = pod('existing', existing, { node: 'a' });
    const r = runFilter(volumeRestrictions(storage()), nodes, [there], pod('p', wants));
    if (wants.length === 0) expect(r.skipped).toBe(true);
    expect(r.outcome).toEqual({ a: conflict ? ERR_DISK_CONFLICT : 'ok', b: 'ok' });
    const reason = r.verdicts[0]?.reasons[0];
    if (conflict) expect(reason).toMatchObject({ code: 'DiskConflict', plugin: 'VolumeRestrictions' });
    // Resolvable: preempting the pod that holds the disk helps.
    expect(reason?.unresolvable).toBeUndefined();
  });
});

interface RwopCase {
  name: string;
  claims: ReturnType<typeof claim>[];
  existing: PodInfo[];
  p: PodInfo;
  outcome: Record<string, string>;
  skipped?: boolean;
  unresolvable?: boolean;
}

const rwop = claim('data', { modes: ['ReadWriteOncePod'] });
const rwo = claim('data', { modes: ['ReadWriteOnce'] });
const rwopCases: RwopCase[] = [
  {
    name: 'a ReadWriteOncePod claim nobody uses: nothing to check',
    claims: [rwop],
    existing: [],
    p: pod('p', ['data']),
    outcome: each('a b', 'ok'),
    skipped: true,
  },
  {
    name: 'a ReadWriteOncePod claim used on node a: every node fails',
    claims: [rwop],
    existing: [pod('holder', ['data'], { node: 'a' })],
    p: pod('p', ['data']),
    outcome: each('a b', ERR_RWOP_CONFLICT),
  },
  {
    name: 'the same claim name in another namespace does not count',
    claims: [rwop, claim('data', { ns: 'other', modes: ['ReadWriteOncePod'] })],
    existing: [pod('holder', ['data'], { node: 'a', ns: 'other' })],
    p: pod('p', ['data']),
    outcome: each('a b', 'ok'),
    skipped: true,
  },
  {
    name: 'ReadWriteOnce claims may be shared',
    claims: [rwo],
    existing: [pod('holder', ['data'], { node: 'a' })],
    p: pod('p', ['data']),
    outcome: each('a b', 'ok'),
    skipped: true,
  },
  {
    name: 'a claim that does not exist',
    claims: [],
    existing: [],
    p: pod('p', ['data']),
    outcome: each('a b', 'persistentvolumeclaim "data" not found'),
    unresolvable: true,
  },
  {
    name: 'a disk conflict is reported before the claim conflict',
    claims: [rwop],
    existing: [pod('holder', ['data', gce('foo')], { node: 'a' })],
    p: pod('p', ['data', gce('foo')]),
    outcome: { a: ERR_DISK_CONFLICT, b: ERR_RWOP_CONFLICT },
  },
];

describe('VolumeRestrictions: ReadWriteOncePod claims', () => {
  it.each(rwopCases)('$name', (c) => {
    const r = runFilter(
      volumeRestrictions(storage({ claims: c.claims })),
      [node('a'), node('b')],
      c.existing,
      c.p,
    );
    expect(r.outcome).toEqual(c.outcome);
    expect(r.skipped).toBe(c.skipped === true);
    const reason = r.verdicts[0]?.reasons[0];
    if (reason) expect(reason.unresolvable === true).toBe(c.unresolvable === true);
  });

  it('an assumed pod holds the claim as a bound one does', () => {
    const plugin = volumeRestrictions(storage({ claims: [rwop] }));
    const r = runFilter(plugin, [node('a'), node('b')], [], pod('p', ['data']), (ctx) =>
      ctx.snapshot.assume(pod('first', ['data']), 'b'),
    );
    expect(r.outcome).toEqual(each('a b', ERR_RWOP_CONFLICT));
    expect(r.verdicts[0]?.reasons[0]?.detail).toBe('ReadWriteOncePod claim data is used by a pod on node b');
  });
});

/** Upstream's AddPod/RemovePod (TestPreFilterStateAddRemovePod's facts for ReadWriteOncePod claims). */
describe('VolumeRestrictions: PreFilterExtensions', () => {
  const plugin = volumeRestrictions(storage({ claims: [rwop] }));
  const holder = pod('holder', ['data'], { node: 'a' });
  function firstReason(r: FilterRun, state: CycleState): string {
    const n = r.ctx.snapshot.get('b') as NodeSnapshot;
    const verdict: NodeVerdict = { node: 'b', feasible: false, reasons: [], rules: [] };
    plugin.filter(state, r.ctx, n, verdict);
    return verdict.reasons[0]?.detail ?? 'ok';
  }
  function fork(r: FilterRun): CycleState {
    const out = r.state.fork();
    plugin.cloneState?.(r.state, out);
    return out;
  }

  it('removing the pod that holds the claim frees it; putting it back takes it again', () => {
    const r = runFilter(plugin, [node('a'), node('b')], [holder], pod('p', ['data']));
    const a = r.ctx.snapshot.get('a') as NodeSnapshot;
    const dry = fork(r);
    plugin.removePod?.(dry, r.ctx, holder, a);
    expect(firstReason(r, dry)).toBe('ok');
    expect(firstReason(r, r.state)).toBe('ReadWriteOncePod claim data is used by a pod on node a');
    plugin.addPod?.(dry, r.ctx, holder, a);
    expect(firstReason(r, dry)).toBe('ReadWriteOncePod claim data is used by a pod on node a');
  });

  it('a pod added with the claim (a nominated one) takes it, where PreFilter did not skip', () => {
    // The in-tree disk keeps the plugin on though nobody uses the claim yet.
    const r = runFilter(plugin, [node('a'), node('b')], [], pod('p', ['data', gce('foo')]));
    expect(r.skipped).toBe(false);
    const b = r.ctx.snapshot.get('b') as NodeSnapshot;
    const dry = fork(r);
    plugin.addPod?.(dry, r.ctx, pod('nominee', ['data']), b);
    expect(firstReason(r, dry)).toBe('ReadWriteOncePod claim data is used by a pod on node b');
    plugin.addPod?.(dry, r.ctx, pod('stranger', ['other']), b);
    plugin.removePod?.(dry, r.ctx, pod('nominee', ['data']), b);
    expect(firstReason(r, dry)).toBe('ok');
  });

  it('with two claims held, removing one holder leaves the message on the other', () => {
    const logs = claim('logs', { modes: ['ReadWriteOncePod'] });
    const two = volumeRestrictions(storage({ claims: [rwop, logs] }));
    const logsHolder = pod('logs-holder', ['logs'], { node: 'b' });
    const r = runFilter(two, [node('a'), node('b')], [holder, logsHolder], pod('p', ['data', 'logs']));
    const dry = r.state.fork();
    two.cloneState?.(r.state, dry);
    two.removePod?.(dry, r.ctx, holder, r.ctx.snapshot.get('a') as NodeSnapshot);
    const verdict: NodeVerdict = { node: 'a', feasible: false, reasons: [], rules: [] };
    two.filter(dry, r.ctx, r.ctx.snapshot.get('a') as NodeSnapshot, verdict);
    expect(verdict.reasons[0]?.detail).toBe('ReadWriteOncePod claim logs is used by a pod on node b');
  });
});

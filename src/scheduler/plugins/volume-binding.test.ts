/**
 * VolumeBinding's PreFilter and Filter, with the facts of upstream's volume_binding_test.go
 * (TestVolumeBinding) and binder_test.go (TestFindPodVolumesWithoutProvisioning, …WithProvisioning,
 * TestFindMatchingVolume in pv_helpers_test.go): bound claims' PV affinity, immediate claims, static PV
 * matching (smallest fit, modes, selector, phase, claimRef, class), provisioning and allowedTopologies,
 * selected-node; and Reserve's assumptions as the next cycle sees them.
 */
import { describe, expect, it } from 'vitest';
import { toCsiDriverInfo, toCsiStorageCapacityInfo } from '../../cluster/convert-storage.js';
import type { ClaimInfo, PodInfo, VolumeInfo } from '../../cluster/model.js';
import {
  claim,
  DYNAMIC,
  each,
  HOSTNAME,
  IMMEDIATE,
  node,
  pod,
  pv,
  runFilter,
  storage,
  storageClass,
  WFFC,
  ZONE,
} from './volume.testing.js';
import { ERR_UNBOUND_IMMEDIATE, volumeBinding } from './volume-binding.js';
import {
  ERR_BIND_CONFLICT,
  ERR_NODE_CONFLICT,
  ERR_PV_NOT_EXIST,
  findPodVolumes,
  type PodVolumes,
} from './volume-binding-match.js';

const NODES = [node('a', { [ZONE]: 'z1' }), node('b', { [ZONE]: 'z1' }), node('c', { [ZONE]: 'z2' })];
const zoned = storageClass('zoned', { provisioner: 'csi.example.com', zones: ['z2'] });

interface Case {
  name: string;
  claims: ClaimInfo[];
  pvs?: VolumeInfo[];
  p: PodInfo;
  /** Per node a, b, c: 'ok' or the first reason. */
  want: Record<string, string>;
  skipped?: boolean;
  /** What Filter chose on the nodes that fit: "pv-x→claim" static bindings, "+claim" provisioning. */
  chosen?: string;
}

const data = (o: Parameters<typeof claim>[1] = {}) => claim('data', o);
const cases: Case[] = [
  {
    name: 'a pod without claims',
    claims: [],
    p: pod('p', [{ emptyDir: {} }]),
    want: each('a b c', 'ok'),
    skipped: true,
  },
  {
    name: 'bound claim, PV pinned to node a',
    claims: [data({ volumeName: 'pv-a', bound: true })],
    pvs: [pv('pv-a', { hosts: ['a'], claimRef: 'data' })],
    p: pod('p', ['data']),
    want: { a: 'ok', b: ERR_NODE_CONFLICT, c: ERR_NODE_CONFLICT },
  },
  {
    name: 'bound claim, PV without node affinity',
    claims: [data({ volumeName: 'pv-any', bound: true })],
    pvs: [pv('pv-any', { claimRef: 'data' })],
    p: pod('p', ['data']),
    want: each('a b c', 'ok'),
  },
  {
    name: 'bound claim whose PV does not exist',
    claims: [data({ volumeName: 'pv-gone', bound: true })],
    p: pod('p', ['data']),
    want: each('a b c', ERR_PV_NOT_EXIST),
  },
  {
    name: 'a claim that does not exist',
    claims: [],
    p: pod('p', ['data']),
    want: each('a b c', 'persistentvolumeclaim "data" not found'),
  },
  {
    name: 'an ephemeral volume whose claim is not created yet',
    claims: [],
    p: pod('p', [{ ephemeral: 'scratch' }]),
    want: each(
      'a b c',
      'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"',
    ),
  },
  {
    name: 'an unbound claim of an Immediate class',
    claims: [data({ class: 'immediate' })],
    p: pod('p', ['data']),
    want: each('a b c', ERR_UNBOUND_IMMEDIATE),
  },
  {
    name: 'an unbound claim without a class is Immediate',
    claims: [data({ class: null })],
    p: pod('p', ['data']),
    want: each('a b c', ERR_UNBOUND_IMMEDIATE),
  },
  {
    name: 'an unbound claim of a class that does not exist is Immediate',
    claims: [data({ class: 'nope' })],
    p: pod('p', ['data']),
    want: each('a b c', ERR_UNBOUND_IMMEDIATE),
  },
  {
    name: 'a claim pre-bound to a PV (bind not completed) waits for the PV controller',
    claims: [data({ volumeName: 'pv-a' })],
    pvs: [pv('pv-a', { hosts: ['a'] })],
    p: pod('p', ['data']),
    want: each('a b c', ERR_UNBOUND_IMMEDIATE),
  },
  {
    name: 'a Lost claim',
    claims: [data({ volumeName: 'pv-x', phase: 'Lost' })],
    p: pod('p', ['data']),
    want: each('a b c', 'persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-x"'),
  },
  {
    name: 'a claim being deleted',
    claims: [data({ deleting: true })],
    p: pod('p', ['data']),
    want: each('a b c', 'persistentvolumeclaim "data" is being deleted'),
  },
  {
    name: 'WaitForFirstConsumer: a static PV on node b',
    claims: [data()],
    pvs: [pv('pv-b', { hosts: ['b'] })],
    p: pod('p', ['data']),
    want: { a: ERR_BIND_CONFLICT, b: 'ok', c: ERR_BIND_CONFLICT },
    chosen: 'pv-b→data',
  },
  {
    name: 'WaitForFirstConsumer: no PV and no provisioner',
    claims: [data()],
    p: pod('p', ['data']),
    want: each('a b c', ERR_BIND_CONFLICT),
  },
  {
    name: 'dynamic provisioning anywhere',
    claims: [data({ class: 'dynamic' })],
    p: pod('p', ['data']),
    want: each('a b c', 'ok'),
    chosen: '+data',
  },
  {
    name: 'dynamic provisioning within allowedTopologies',
    claims: [data({ class: 'zoned' })],
    p: pod('p', ['data']),
    want: { a: ERR_BIND_CONFLICT, b: ERR_BIND_CONFLICT, c: 'ok' },
    chosen: '+data',
  },
  {
    name: 'a static PV that fits wins over provisioning',
    claims: [data({ class: 'dynamic' })],
    pvs: [pv('pv-a', { class: 'dynamic', hosts: ['a'] })],
    p: pod('p', ['data']),
    want: each('a b c', 'ok'),
    chosen: 'a:pv-a→data b:+data c:+data',
  },
  {
    name: 'a claim already being provisioned for node b',
    claims: [data({ class: 'dynamic', selectedNode: 'b' })],
    p: pod('p', ['data']),
    want: { a: ERR_BIND_CONFLICT, b: 'ok', c: ERR_BIND_CONFLICT },
    chosen: '+data',
  },
  {
    name: 'the smallest PV that fits',
    claims: [data({ request: '2Gi' })],
    pvs: [
      pv('pv-10g', { capacity: '10Gi' }),
      pv('pv-1g', { capacity: '1Gi' }),
      pv('pv-3g', { capacity: '3Gi' }),
      pv('pv-5g', { capacity: '5Gi' }),
    ],
    p: pod('p', ['data']),
    want: each('a b c', 'ok'),
    chosen: 'pv-3g→data',
  },
  {
    name: 'a PV pre-bound to the claim wins even when larger',
    claims: [data()],
    pvs: [
      pv('pv-small', { capacity: '1Gi' }),
      pv('pv-mine', { capacity: '9Gi', claimRef: 'data', phase: 'Available' }),
    ],
    p: pod('p', ['data']),
    want: each('a b c', 'ok'),
    chosen: 'pv-mine→data',
  },
  {
    name: 'a PV pre-bound to the claim, pinned elsewhere: no match at all',
    claims: [data()],
    pvs: [pv('pv-any'), pv('pv-mine', { hosts: ['a'], claimRef: 'data', phase: 'Available' })],
    p: pod('p', ['data']),
    want: { a: 'ok', b: ERR_BIND_CONFLICT, c: ERR_BIND_CONFLICT },
    chosen: 'pv-mine→data',
  },
  {
    name: 'PVs that do not fit: too small, claimed, Released, deleting, other class, Block, modes',
    claims: [data({ request: '2Gi', modes: ['ReadWriteOnce', 'ReadOnlyMany'] })],
    pvs: [
      pv('pv-small', { capacity: '1Gi', modes: ['ReadWriteOnce', 'ReadOnlyMany'] }),
      pv('pv-claimed', { capacity: '2Gi', claimRef: 'other', modes: ['ReadWriteOnce', 'ReadOnlyMany'] }),
      pv('pv-released', { capacity: '2Gi', phase: 'Released', modes: ['ReadWriteOnce', 'ReadOnlyMany'] }),
      pv('pv-deleting', { capacity: '2Gi', deleting: true, modes: ['ReadWriteOnce', 'ReadOnlyMany'] }),
      pv('pv-class', { capacity: '2Gi', class: 'dynamic', modes: ['ReadWriteOnce', 'ReadOnlyMany'] }),
      pv('pv-block', { capacity: '2Gi', volumeMode: 'Block', modes: ['ReadWriteOnce', 'ReadOnlyMany'] }),
      pv('pv-rwo', { capacity: '2Gi', modes: ['ReadWriteOnce'] }),
    ],
    p: pod('p', ['data']),
    want: each('a b c', ERR_BIND_CONFLICT),
  },
  {
    name: "the claim's selector against PV labels",
    claims: [data({ selector: { matchLabels: { tier: 'fast' } } })],
    pvs: [
      pv('pv-slow', { labels: { tier: 'slow' } }),
      pv('pv-fast', { capacity: '5Gi', labels: { tier: 'fast' } }),
    ],
    p: pod('p', ['data']),
    want: each('a b c', 'ok'),
    chosen: 'pv-fast→data',
  },
  {
    name: 'VolumeAttributesClass: only a PV of the claim’s class, however small the others',
    claims: [data({ vac: 'fast' })],
    pvs: [pv('pv-none'), pv('pv-slow', { vac: 'slow' }), pv('pv-fast', { capacity: '5Gi', vac: 'fast' })],
    p: pod('p', ['data']),
    want: each('a b c', 'ok'),
    chosen: 'pv-fast→data',
  },
  {
    name: 'VolumeAttributesClass: a claim without one does not take a PV that has one',
    claims: [data()],
    pvs: [pv('pv-fast', { vac: 'fast' })],
    p: pod('p', ['data']),
    want: each('a b c', ERR_BIND_CONFLICT),
  },
  {
    name: 'VolumeAttributesClass: a PV pre-bound to the claim but of another class is passed over',
    claims: [data({ vac: 'fast' })],
    pvs: [
      pv('pv-mine', { claimRef: 'data', phase: 'Available', vac: 'slow' }),
      pv('pv-fast', { capacity: '5Gi', vac: 'fast' }),
    ],
    p: pod('p', ['data']),
    want: each('a b c', 'ok'),
    chosen: 'pv-fast→data',
  },
  {
    name: 'a PV’s legacy volume.beta.kubernetes.io/storage-class annotation names its class before the spec',
    claims: [data()],
    pvs: [
      pv('pv-gold', { betaClass: 'gold' }),
      pv('pv-legacy', { capacity: '5Gi', class: 'other', betaClass: 'wffc' }),
    ],
    p: pod('p', ['data']),
    want: each('a b c', 'ok'),
    chosen: 'pv-legacy→data',
  },
  {
    name: 'two claims get two PVs',
    claims: [claim('one'), claim('two', { request: '2Gi' })],
    pvs: [pv('pv-2g', { capacity: '2Gi' }), pv('pv-3g', { capacity: '3Gi' })],
    p: pod('p', ['two', 'one']),
    want: each('a b c', 'ok'),
    chosen: 'pv-2g→one pv-3g→two',
  },
  {
    name: 'two claims, one PV, no provisioner',
    claims: [claim('one'), claim('two')],
    pvs: [pv('pv-1')],
    p: pod('p', ['one', 'two']),
    want: each('a b c', ERR_BIND_CONFLICT),
  },
  {
    name: 'a bound and an unbound claim both failing: both reasons',
    claims: [claim('bound', { volumeName: 'pv-a', bound: true }), claim('free')],
    pvs: [pv('pv-a', { hosts: ['a'], claimRef: 'bound' })],
    p: pod('p', ['bound', 'free']),
    want: { a: ERR_BIND_CONFLICT, b: ERR_NODE_CONFLICT, c: ERR_NODE_CONFLICT },
  },
];

function chosenText(byNode: ReadonlyMap<string, PodVolumes>): string {
  const texts = [...byNode].map(([n, v]) => {
    const parts = [
      ...v.staticBindings.map((b) => `${b.pv.name}→${b.claim.name}`).sort(),
      ...v.provisions.map((c) => `+${c.name}`),
    ];
    return [n, parts.join(' ')] as const;
  });
  const distinct = new Set(texts.map(([, t]) => t));
  return distinct.size === 1 ? ([...distinct][0] ?? '') : texts.map(([n, t]) => `${n}:${t}`).join(' ');
}

describe('VolumeBinding: PreFilter and Filter', () => {
  it.each(cases)('$name', (c) => {
    const s = storage({ claims: c.claims, pvs: c.pvs ?? [], classes: [WFFC, DYNAMIC, IMMEDIATE, zoned] });
    const r = runFilter(volumeBinding({}, { storage: s }), NODES, [], c.p);
    expect(r.outcome).toEqual(c.want);
    expect(r.skipped).toBe(c.skipped === true);
    for (const v of r.verdicts) for (const reason of v.reasons) expect(reason.unresolvable).toBe(true);
    if (c.chosen !== undefined) {
      const byNode = r.state.read<{ byNode: Map<string, PodVolumes> }>('VolumeBinding/state')?.byNode;
      expect(chosenText(byNode ?? new Map())).toBe(c.chosen);
    }
  });

  it('a claim to provision without a class, or of a class that is gone, is an error (upstream: Error status)', () => {
    const input = { node: node('a'), bound: [], pvsByClass: new Map(), classes: new Map() };
    expect(findPodVolumes({ ...input, unbound: [claim('data', { class: null })] }).error).toBe(
      'no class for claim "default/data"',
    );
    expect(findPodVolumes({ ...input, unbound: [claim('data', { class: 'gone' })] }).error).toBe(
      'failed to find storage class "gone"',
    );
  });

  it('explains the conflict per node', () => {
    const s = storage({ claims: [data({ selectedNode: 'b', class: 'dynamic' })] });
    const r = runFilter(volumeBinding({}, { storage: s }), [node('a')], [], pod('p', ['data']));
    expect(r.verdicts[0]?.reasons[0]?.detail).toBe('claim data is being provisioned for node b');
  });
});

describe('VolumeBinding: Reserve assumes, the next cycle sees it, Unreserve restores', () => {
  const setup = () => {
    const s = storage({ claims: [claim('one'), claim('two')], pvs: [pv('pv-only', { hosts: ['a'] })] });
    return { s, plugin: volumeBinding({}, { storage: s }) };
  };

  it('a PV reserved for one claim is not offered to the next pod', () => {
    const { plugin } = setup();
    const first = runFilter(plugin, [node('a')], [], pod('p1', ['one']));
    expect(first.outcome).toEqual({ a: 'ok' });
    expect(plugin.reserve(first.state, first.ctx, 'a')).toBeUndefined();
    const second = runFilter(plugin, [node('a')], [], pod('p2', ['two']));
    expect(second.outcome).toEqual({ a: ERR_BIND_CONFLICT });
    plugin.unreserve(first.state, first.ctx, 'a');
    expect(runFilter(plugin, [node('a')], [], pod('p2', ['two'])).outcome).toEqual({ a: 'ok' });
  });

  it('a claim reserved for provisioning on a node keeps a second pod using it there', () => {
    const s = storage({ claims: [claim('shared', { class: 'dynamic' })] });
    const plugin = volumeBinding({}, { storage: s });
    const first = runFilter(plugin, [node('a'), node('b')], [], pod('p1', ['shared']));
    plugin.reserve(first.state, first.ctx, 'b');
    const second = runFilter(plugin, [node('a'), node('b')], [], pod('p2', ['shared']));
    expect(second.outcome).toEqual({ a: ERR_BIND_CONFLICT, b: 'ok' });
  });

  it("an assumption gives way when the informer shows the object's next version", () => {
    const { s, plugin } = setup();
    const first = runFilter(plugin, [node('a')], [], pod('p1', ['one']));
    plugin.reserve(first.state, first.ctx, 'a');
    expect(plugin.assumed.pvs.get('pv-only')?.claimRef?.name).toBe('one');
    // Our own write arrives: the informer's version (now with the claimRef) replaces the assumption.
    s.put(pv('pv-only', { hosts: ['a'], claimRef: 'one', phase: 'Available', rv: '21' }));
    expect(plugin.assumed.pvs.get('pv-only')?.resourceVersion).toBe('21');
    expect(plugin.assumed.assumedCount).toBe(0);
  });

  it('Reserve with nothing to bind marks the pod all bound', () => {
    const s = storage({
      claims: [claim('data', { volumeName: 'pv', bound: true })],
      pvs: [pv('pv', { claimRef: 'data' })],
    });
    const plugin = volumeBinding({}, { storage: s });
    const r = runFilter(plugin, [node('a')], [], pod('p', ['data']));
    expect(plugin.reserve(r.state, r.ctx, 'a')).toBeUndefined();
    expect(plugin.assumed.assumedCount).toBe(0);
  });

  it('bindTimeoutSeconds must be a number ≥ 0', () => {
    expect(() => volumeBinding({ bindTimeoutSeconds: -1 }, { storage: storage() })).toThrow(
      /bindTimeoutSeconds/,
    );
    expect(() => volumeBinding({ bindTimeoutSeconds: 'x' as never }, { storage: storage() })).toThrow(
      /bindTimeoutSeconds/,
    );
  });
});

/**
 * Storage capacity tracking (binder.go hasEnoughCapacity): the DYNAMIC class provisions through
 * csi.example.com; with that CSIDriver's storageCapacity on, a node must reach a CSIStorageCapacity of the
 * class whose maximumVolumeSize (else capacity) holds the 1Gi claim.
 */
describe('VolumeBinding: CSIStorageCapacity', () => {
  const tracking = toCsiDriverInfo({
    metadata: { name: 'csi.example.com' },
    spec: { storageCapacity: true },
  });
  const untracked = toCsiDriverInfo({
    metadata: { name: 'csi.example.com' },
    spec: { storageCapacity: false },
  });
  const cap = (
    name: string,
    o: { hosts?: string[]; capacity?: string; max?: string; cls?: string; ns?: string },
  ) =>
    toCsiStorageCapacityInfo({
      metadata: { name, namespace: o.ns ?? 'kube-system', resourceVersion: '1' },
      storageClassName: o.cls ?? 'dynamic',
      ...(o.hosts
        ? { nodeTopology: { matchExpressions: [{ key: HOSTNAME, operator: 'In', values: o.hosts }] } }
        : {}),
      ...(o.capacity ? { capacity: o.capacity } : {}),
      ...(o.max ? { maximumVolumeSize: o.max } : {}),
    });
  const NOT_ENOUGH = 'node(s) did not have enough free storage';
  const capacityCases: {
    name: string;
    driver?: typeof tracking;
    caps: ReturnType<typeof cap>[];
    want: Record<string, string>;
  }[] = [
    {
      name: 'a driver that does not track capacity is trusted (no CSIDriver, or storageCapacity false)',
      caps: [],
      want: each('a b c', 'ok'),
    },
    { name: 'storageCapacity false', driver: untracked, caps: [], want: each('a b c', 'ok') },
    {
      name: 'only nodes a capacity with room reaches',
      driver: tracking,
      caps: [
        cap('small-a', { hosts: ['a'], capacity: '512Mi' }),
        cap('big-bc', { hosts: ['b', 'c'], capacity: '10Gi' }),
      ],
      want: { a: NOT_ENOUGH, b: 'ok', c: 'ok' },
    },
    {
      name: 'maximumVolumeSize wins over capacity; another class, or no nodeTopology, reaches nothing',
      driver: tracking,
      caps: [
        cap('max-small', { hosts: ['a'], capacity: '10Gi', max: '512Mi' }),
        cap('other-class', { hosts: ['b'], capacity: '10Gi', cls: 'zoned' }),
        cap('nowhere', { capacity: '10Gi' }),
        cap('exact', { hosts: ['c'], capacity: '1Gi', ns: 'storage' }),
      ],
      want: { a: NOT_ENOUGH, b: NOT_ENOUGH, c: 'ok' },
    },
    { name: 'tracked, and no capacity at all', driver: tracking, caps: [], want: each('a b c', NOT_ENOUGH) },
  ];
  it.each(capacityCases)('$name', (c) => {
    const s = storage({
      claims: [data({ class: 'dynamic' })],
      classes: [DYNAMIC, zoned],
      csiDrivers: c.driver ? [c.driver] : [],
      capacities: c.caps,
    });
    const r = runFilter(volumeBinding({}, { storage: s }), NODES, [], pod('p', ['data']));
    expect(r.outcome).toEqual(c.want);
    for (const v of r.verdicts) for (const reason of v.reasons) expect(reason.unresolvable).toBe(true);
  });

  it('a static PV that fits needs no capacity; a claim provisioned beside it still does', () => {
    const s = storage({
      claims: [data({ class: 'dynamic' }), claim('logs', { class: 'dynamic' })],
      pvs: [pv('pv-a', { class: 'dynamic', hosts: ['a'] })],
      classes: [DYNAMIC],
      csiDrivers: [tracking],
      capacities: [cap('b-only', { hosts: ['b'], capacity: '5Gi' })],
    });
    const r = runFilter(volumeBinding({}, { storage: s }), NODES, [], pod('p', ['data', 'logs']));
    // a: data gets pv-a, logs must be provisioned and a has no capacity; b: both provisioned there.
    expect(r.outcome).toEqual({ a: NOT_ENOUGH, b: 'ok', c: NOT_ENOUGH });
  });
});

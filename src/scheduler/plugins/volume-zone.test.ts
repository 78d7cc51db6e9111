/**
 * VolumeZone, with the facts of upstream's volume_zone_test.go (TestSingleZone, TestMultiZone,
 * TestWithBinding): PV topology labels against node labels, beta/GA label translation, multi-zone
 * values, and the claims PreFilter refuses.
 */
import { describe, expect, it } from 'vitest';
import { claim, node, pod, pv, runFilter, storage } from './volume.testing.js';
import { ERR_VOLUME_ZONE_CONFLICT, volumeZone } from './volume-zone.js';

const BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
const BETA_REGION = 'failure-domain.beta.kubernetes.io/region';
const ZONE = 'topology.kubernetes.io/zone';
const REGION = 'topology.kubernetes.io/region';

const PVS = [
  pv('vol-beta-zone-a', { labels: { [BETA_ZONE]: 'us-west1-a' }, claimRef: 'pvc-beta-zone-a' }),
  pv('vol-beta-region-b', { labels: { [BETA_REGION]: 'us-west1-b' }, claimRef: 'pvc-beta-region-b' }),
  pv('vol-zone-a', { labels: { [ZONE]: 'us-west1-a' }, claimRef: 'pvc-zone-a' }),
  pv('vol-multi', { labels: { [ZONE]: 'us-west1-b__us-west1-c' }, claimRef: 'pvc-multi' }),
  pv('vol-zone-region', {
    labels: { [ZONE]: 'us-west1-a', [REGION]: 'us-west1' },
    claimRef: 'pvc-zone-region',
  }),
  pv('vol-bad-label', { labels: { [ZONE]: 'us-west1-a__' }, claimRef: 'pvc-bad-label' }),
  pv('vol-no-labels', { claimRef: 'pvc-no-labels' }),
];
const boundClaim = (name: string, volumeName: string) => claim(name, { volumeName, bound: true });
const CLAIMS = [
  ...PVS.map((v) => boundClaim(v.claimRef?.name as string, v.name)),
  boundClaim('pvc-dangling', 'vol-gone'),
  claim('pvc-wffc'),
  claim('pvc-immediate', { class: 'immediate' }),
  claim('pvc-no-class', { class: null }),
  claim('pvc-unknown-class', { class: 'nope' }),
];

interface Case {
  name: string;
  claims: string[];
  labels: Record<string, string>;
  /** 'ok', a conflict, or the PreFilter's reason. */
  want: string;
  skipped?: boolean;
}

const cases: Case[] = [
  { name: 'a pod without volumes', claims: [], labels: { [ZONE]: 'us-west1-a' }, want: 'ok', skipped: true },
  { name: 'a node without topology labels', claims: ['pvc-zone-a'], labels: {}, want: 'ok' },
  {
    name: 'beta zone label matched',
    claims: ['pvc-beta-zone-a'],
    labels: { [BETA_ZONE]: 'us-west1-a' },
    want: 'ok',
  },
  {
    name: 'beta PV label, GA node label',
    claims: ['pvc-beta-zone-a'],
    labels: { [ZONE]: 'us-west1-a' },
    want: 'ok',
  },
  {
    name: 'GA PV label, beta node label only',
    claims: ['pvc-zone-a'],
    labels: { [BETA_ZONE]: 'us-west1-a' },
    want: ERR_VOLUME_ZONE_CONFLICT,
  },
  {
    name: 'zone mismatch',
    claims: ['pvc-zone-a'],
    labels: { [ZONE]: 'us-west1-b' },
    want: ERR_VOLUME_ZONE_CONFLICT,
  },
  {
    name: 'beta region mismatch',
    claims: ['pvc-beta-region-b'],
    labels: { [BETA_REGION]: 'us-west1-a' },
    want: ERR_VOLUME_ZONE_CONFLICT,
  },
  {
    name: 'region label missing on a node with a zone',
    claims: ['pvc-beta-region-b'],
    labels: { [ZONE]: 'us-west1-b' },
    want: ERR_VOLUME_ZONE_CONFLICT,
  },
  {
    name: 'multi-zone PV, one of its zones',
    claims: ['pvc-multi'],
    labels: { [ZONE]: 'us-west1-c' },
    want: 'ok',
  },
  {
    name: 'multi-zone PV, another zone',
    claims: ['pvc-multi'],
    labels: { [ZONE]: 'us-west1-a' },
    want: ERR_VOLUME_ZONE_CONFLICT,
  },
  {
    name: 'zone and region both must match',
    claims: ['pvc-zone-region'],
    labels: { [ZONE]: 'us-west1-a', [REGION]: 'us-east1' },
    want: ERR_VOLUME_ZONE_CONFLICT,
  },
  {
    name: 'several claims: every PV must match',
    claims: ['pvc-zone-a', 'pvc-multi'],
    labels: { [ZONE]: 'us-west1-a' },
    want: ERR_VOLUME_ZONE_CONFLICT,
  },
  {
    name: 'an unparsable label is ignored',
    claims: ['pvc-bad-label'],
    labels: { [ZONE]: 'x' },
    want: 'ok',
    skipped: true,
  },
  {
    name: 'a PV without labels',
    claims: ['pvc-no-labels'],
    labels: { [ZONE]: 'x' },
    want: 'ok',
    skipped: true,
  },
  {
    name: 'an unbound WaitForFirstConsumer claim is left to VolumeBinding',
    claims: ['pvc-wffc'],
    labels: { [ZONE]: 'x' },
    want: 'ok',
    skipped: true,
  },
  {
    name: 'an unbound Immediate claim',
    claims: ['pvc-immediate'],
    labels: {},
    want: 'PersistentVolume had no name',
  },
  {
    name: 'an unbound claim without a class',
    claims: ['pvc-no-class'],
    labels: {},
    want: 'PersistentVolumeClaim had no pv name and storageClass name',
  },
  {
    name: 'an unbound claim of a missing class',
    claims: ['pvc-unknown-class'],
    labels: {},
    want: 'storageclass.storage.k8s.io "nope" not found',
  },
  {
    name: 'a missing claim',
    claims: ['pvc-missing'],
    labels: {},
    want: 'persistentvolumeclaim "pvc-missing" not found',
  },
  {
    name: 'a bound claim whose PV is gone',
    claims: ['pvc-dangling'],
    labels: {},
    want: 'persistentvolume "vol-gone" not found',
  },
];

describe('VolumeZone', () => {
  it.each(cases)('$name', (c) => {
    const plugin = volumeZone(storage({ claims: CLAIMS, pvs: PVS }));
    const r = runFilter(plugin, [node('n', c.labels)], [], pod('p', c.claims));
    expect(r.outcome['n']).toBe(c.want);
    expect(r.skipped).toBe(c.skipped === true);
    // Every failure of this plugin is UnschedulableAndUnresolvable.
    for (const reason of r.verdicts[0]?.reasons ?? []) expect(reason.unresolvable).toBe(true);
  });

  it('generic ephemeral volumes are not looked at', () => {
    const r = runFilter(volumeZone(storage()), [node('n')], [], pod('p', [{ ephemeral: 'scratch' }]));
    expect(r).toMatchObject({ skipped: true, outcome: { n: 'ok' } });
  });

  it('explains which PV and zone', () => {
    const plugin = volumeZone(storage({ claims: CLAIMS, pvs: PVS }));
    const r = runFilter(plugin, [node('n', { [ZONE]: 'us-west1-b' })], [], pod('p', ['pvc-zone-a']));
    expect(r.verdicts[0]?.reasons[0]?.detail).toBe(
      `PV vol-zone-a is in ${ZONE}=us-west1-a, the node in us-west1-b`,
    );
  });
});

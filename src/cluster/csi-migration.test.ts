import { describe, expect, it } from 'vitest';
import { migratedVolume } from './csi-migration.js';

const ZONE = 'topology.kubernetes.io/zone';
const BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';

// Facts from csi-translation-lib v0.36.3's translators (aws_ebs.go, gce_pd.go, azure_disk.go, …).
const cases: { name: string; source: object; labels?: Record<string, string>; want: object | undefined }[] = [
  {
    name: 'EBS, aws://zone/vol-… → the bare volume id',
    source: { awsElasticBlockStore: { volumeID: 'aws://us-east-1a/vol-0123abcd' } },
    want: { driver: 'ebs.csi.aws.com', handle: 'vol-0123abcd' },
  },
  {
    name: 'EBS, a bare id as is',
    source: { awsElasticBlockStore: { volumeID: 'vol-9' } },
    want: { driver: 'ebs.csi.aws.com', handle: 'vol-9' },
  },
  {
    name: 'EBS, a malformed aws:// id is not translated',
    source: { awsElasticBlockStore: { volumeID: 'aws://us-east-1a/disk-9' } },
    want: undefined,
  },
  {
    name: 'GCE PD on a zonal PV (the beta label first)',
    source: { gcePersistentDisk: { pdName: 'data' } },
    labels: { [BETA_ZONE]: 'europe-west1-b', [ZONE]: 'europe-west1-c' },
    want: { driver: 'pd.csi.storage.gke.io', handle: 'projects/UNSPECIFIED/zones/europe-west1-b/disks/data' },
  },
  {
    name: 'GCE PD on a regional PV (zones of one region)',
    source: { gcePersistentDisk: { pdName: 'data' } },
    labels: { [ZONE]: 'europe-west1-b__europe-west1-c' },
    want: { driver: 'pd.csi.storage.gke.io', handle: 'projects/UNSPECIFIED/regions/europe-west1/disks/data' },
  },
  {
    name: 'GCE PD over two regions is not translated',
    source: { gcePersistentDisk: { pdName: 'data' } },
    labels: { [ZONE]: 'europe-west1-b__us-east1-c' },
    want: undefined,
  },
  {
    name: 'GCE PD inline (no zone known)',
    source: { gcePersistentDisk: { pdName: 'data' } },
    want: { driver: 'pd.csi.storage.gke.io', handle: 'projects/UNSPECIFIED/zones/UNSPECIFIED/disks/data' },
  },
  {
    name: 'Azure Disk by its URI',
    source: { azureDisk: { diskName: 'd', diskURI: '/subscriptions/s/disks/d' } },
    want: { driver: 'disk.csi.azure.com', handle: '/subscriptions/s/disks/d' },
  },
  {
    name: 'Cinder',
    source: { cinder: { volumeID: 'c-1' } },
    want: { driver: 'cinder.csi.openstack.org', handle: 'c-1' },
  },
  {
    name: 'Portworx',
    source: { portworxVolume: { volumeID: 'px-1' } },
    want: { driver: 'pxd.portworx.com', handle: 'px-1' },
  },
  {
    name: 'vSphere is not among them',
    source: { vsphereVolume: { volumePath: '[ds] v.vmdk' } },
    want: undefined,
  },
  { name: 'a CSI or any other source', source: { nfs: { server: 's', path: '/' } }, want: undefined },
];

describe('migratedVolume (in-tree → CSI, as NodeVolumeLimits counts it)', () => {
  for (const c of cases) {
    it(c.name, () => {
      expect(migratedVolume(c.source, c.labels)).toEqual(c.want);
    });
  }
});

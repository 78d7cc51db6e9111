/**
 * In-tree volume sources kube-scheduler counts under the CSI driver they migrate to (NodeVolumeLimits:
 * csi-translation-lib's translations, for the plugins isCSIMigrationOn names in v1.36 — AWS EBS, GCE PD,
 * Azure Disk, Cinder, Portworx). A long-lived cluster's old PVs (an EKS cluster's gp2 `awsElasticBlockStore`
 * ones, say) still take the CSI driver's attach slots on their node. The handle is the translated CSI
 * volumeHandle, so an in-tree PV and a CSI PV of the same disk count once.
 */

// biome-ignore lint/suspicious/noExplicitAny: API objects are untyped JSON at this boundary.
type Json = any;

export interface MigratedVolume {
  driver: string;
  handle: string;
}

/** In-tree provisioner (a StorageClass's) → the CSI driver its volumes migrate to. */
export const MIGRATED_PROVISIONERS: ReadonlyMap<string, string> = new Map([
  ['kubernetes.io/aws-ebs', 'ebs.csi.aws.com'],
  ['kubernetes.io/gce-pd', 'pd.csi.storage.gke.io'],
  ['kubernetes.io/azure-disk', 'disk.csi.azure.com'],
  ['kubernetes.io/cinder', 'cinder.csi.openstack.org'],
  ['kubernetes.io/portworx-volume', 'pxd.portworx.com'],
]);

const GCE_UNSPECIFIED = 'UNSPECIFIED';

/** KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/vol-…" or a bare "vol-…"; undefined when malformed. */
function ebsVolumeId(id: string): string | undefined {
  if (!id.startsWith('aws://')) return id;
  const path = id.slice('aws://'.length);
  const slash = path.indexOf('/');
  const volume = slash < 0 ? '' : path.slice(slash).replace(/^\/+|\/+$/g, '');
  return /^vol-[^/]*$/.test(volume) ? volume : undefined;
}

/** The GCE PD handle: zonal from the PV's one zone, regional from several (one region), else unspecified. */
function gcePdHandle(pdName: string, labels: Record<string, string> | undefined): string | undefined {
  const zonesLabel =
    labels?.['failure-domain.beta.kubernetes.io/zone'] || labels?.['topology.kubernetes.io/zone'] || '';
  const zones = zonesLabel.split('__');
  if (zones.length === 1) {
    return `projects/${GCE_UNSPECIFIED}/zones/${zones[0] || GCE_UNSPECIFIED}/disks/${pdName}`;
  }
  const regions = new Set<string>();
  for (const zone of zones) {
    const parts = zone.split('-');
    if (parts.length !== 3) return undefined;
    regions.add(`${parts[0]}-${parts[1]}`);
  }
  if (regions.size !== 1) return undefined;
  return `projects/${GCE_UNSPECIFIED}/regions/${[...regions][0]}/disks/${pdName}`;
}

/**
 * The CSI volume an in-tree source (a PV's spec, or a pod's inline volume) migrates to; undefined for
 * any other source. `pvLabels`: a PV's labels (its zones, for GCE PD); inline volumes have none.
 */
export function migratedVolume(source: Json, pvLabels?: Record<string, string>): MigratedVolume | undefined {
  const ebs = source?.awsElasticBlockStore?.volumeID;
  if (typeof ebs === 'string' && ebs) {
    const handle = ebsVolumeId(ebs);
    return handle ? { driver: 'ebs.csi.aws.com', handle } : undefined;
  }
  const pd = source?.gcePersistentDisk?.pdName;
  if (typeof pd === 'string' && pd) {
    const handle = gcePdHandle(pd, pvLabels);
    return handle ? { driver: 'pd.csi.storage.gke.io', handle } : undefined;
  }
  const disk = source?.azureDisk?.diskURI;
  if (typeof disk === 'string' && disk) return { driver: 'disk.csi.azure.com', handle: disk };
  const cinder = source?.cinder?.volumeID;
  if (typeof cinder === 'string' && cinder) return { driver: 'cinder.csi.openstack.org', handle: cinder };
  const px = source?.portworxVolume?.volumeID;
  if (typeof px === 'string' && px) return { driver: 'pxd.portworx.com', handle: px };
  return undefined;
}

// A scenario's storage, priority and disruption objects as one run creates them (see isolate.ts for the
// naming rules): cluster-scoped objects get the run's prefix, references to them follow, node and zone
// names in node affinities and labels are mapped like the nodes' own.
import type {
  V1CSIDriver,
  V1CSINode,
  V1CSIStorageCapacity,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1PodDisruptionBudget,
  V1PriorityClass,
  V1Service,
  V1StorageClass,
  V1VolumeAttachment,
} from '@kubernetes/client-node';
import { HOSTNAME, ZONE } from './build.js';
import { RUN_LABEL, type ScenarioObjects } from './types.js';

const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

/** The run's naming rules (isolate.ts's Isolation provides them). */
export interface RunNames {
  readonly runId: string;
  node(logical: string): string;
  namespace(logical: string | undefined): string;
  clusterScoped(logical: string): string;
  value(key: string, value: string): string;
  labels(labels: Record<string, string> | undefined): Record<string, string>;
}

export interface RunObjects {
  storageClasses: V1StorageClass[];
  volumes: V1PersistentVolume[];
  claims: V1PersistentVolumeClaim[];
  priorityClasses: V1PriorityClass[];
  budgets: V1PodDisruptionBudget[];
  services: V1Service[];
  csiNodes: V1CSINode[];
  csiDrivers: V1CSIDriver[];
  storageCapacities: V1CSIStorageCapacity[];
  volumeAttachments: V1VolumeAttachment[];
  /** The provisioner name of the run's 'dynamic' classes; undefined when none is dynamic. */
  dynamicProvisioner?: string;
}

/** `main/claim` or `claim` → [actual namespace, name]. */
function claimRef(iso: RunNames, ref: string): [string, string] {
  const [ns, name] = ref.includes('/') ? (ref.split('/') as [string, string]) : [undefined, ref];
  return [iso.namespace(ns), name];
}

export function runObjects(iso: RunNames, o: ScenarioObjects): RunObjects {
  const labels = { [RUN_LABEL]: iso.runId };
  const dynamic = `${iso.runId}.nodeload.test`;
  const anyDynamic = (o.storageClasses ?? []).some((c) => c.provisioner === 'dynamic');
  const classOf = (logical: string | undefined) => (logical ? iso.clusterScoped(logical) : '');
  return {
    ...(anyDynamic ? { dynamicProvisioner: dynamic } : {}),
    storageClasses: (o.storageClasses ?? []).map((c) => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: iso.clusterScoped(c.name), labels },
      provisioner:
        c.provisioner === 'dynamic'
          ? dynamic
          : !c.provisioner || c.provisioner === 'none'
            ? NO_PROVISIONER
            : c.provisioner,
      volumeBindingMode: c.volumeBindingMode ?? 'WaitForFirstConsumer',
      ...(c.allowedTopologies
        ? {
            allowedTopologies: [
              {
                matchLabelExpressions: Object.entries(c.allowedTopologies).map(([key, values]) => ({
                  key,
                  values: values.map((v) => iso.value(key, v)),
                })),
              },
            ],
          }
        : {}),
    })),
    volumes: (o.persistentVolumes ?? []).map((v) => {
      const requirements = [
        ...(v.nodes ? [{ key: HOSTNAME, operator: 'In', values: v.nodes.map((n) => iso.node(n)) }] : []),
        ...(v.zones ? [{ key: ZONE, operator: 'In', values: v.zones.map((z) => iso.value(ZONE, z)) }] : []),
      ];
      const name = iso.clusterScoped(v.name);
      return {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name, labels: { ...iso.labels(v.labels), ...labels } },
        spec: {
          storageClassName: classOf(v.storageClass),
          capacity: { storage: v.capacity ?? '5Gi' },
          accessModes: v.accessModes ?? ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          ...(v.csiDriver
            ? { csi: { driver: v.csiDriver, volumeHandle: name } }
            : v.inTreeEbs
              ? { awsElasticBlockStore: { volumeID: `vol-${name}` } }
              : { hostPath: { path: `/tmp/${name}` } }),
          ...(requirements.length
            ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: requirements }] } } }
            : {}),
          ...(v.claim
            ? (() => {
                const [namespace, claim] = claimRef(iso, v.claim);
                return {
                  claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name: claim },
                };
              })()
            : {}),
        },
      };
    }),
    claims: (o.persistentVolumeClaims ?? []).map((c) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: c.name, namespace: iso.namespace(c.namespace) },
      spec: {
        storageClassName: classOf(c.storageClass),
        accessModes: c.accessModes ?? ['ReadWriteOnce'],
        resources: { requests: { storage: c.size ?? '1Gi' } },
        ...(c.volume ? { volumeName: iso.clusterScoped(c.volume) } : {}),
      },
    })),
    priorityClasses: (o.priorityClasses ?? []).map((p) => ({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: iso.clusterScoped(p.name), labels },
      value: p.value,
      ...(p.preemptionPolicy ? { preemptionPolicy: p.preemptionPolicy } : {}),
    })),
    budgets: (o.podDisruptionBudgets ?? []).map((b) => ({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: b.name, namespace: iso.namespace(b.namespace) },
      spec: {
        selector: { matchLabels: b.matchLabels },
        ...(b.minAvailable !== undefined ? { minAvailable: b.minAvailable } : {}),
        ...(b.maxUnavailable !== undefined ? { maxUnavailable: b.maxUnavailable } : {}),
      },
      // Create drops a status: RunObjectsLifecycle.waitBudgets writes this one after the controller's.
      ...(b.disruptedPods?.length
        ? { status: { disruptedPods: Object.fromEntries(b.disruptedPods.map((p) => [p, new Date(0)])) } }
        : {}),
    })),
    services: (o.services ?? []).map((svc) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: svc.name, namespace: iso.namespace(svc.namespace) },
      spec: { clusterIP: 'None', selector: iso.labels(svc.selector), ports: [{ name: 'http', port: 80 }] },
    })),
    csiDrivers: (o.csiDrivers ?? []).map((d) => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: d.name === 'dynamic' ? dynamic : d.name, labels },
      spec: { storageCapacity: d.storageCapacity, attachRequired: false },
    })),
    storageCapacities: (o.storageCapacities ?? []).map((c) => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIStorageCapacity',
      metadata: { name: c.name, namespace: iso.namespace(undefined), labels },
      storageClassName: classOf(c.storageClass),
      nodeTopology: {
        matchExpressions: [{ key: HOSTNAME, operator: 'In', values: c.nodes.map((n) => iso.node(n)) }],
      },
      capacity: c.capacity,
      ...(c.maximumVolumeSize ? { maximumVolumeSize: c.maximumVolumeSize } : {}),
    })),
    csiNodes: (o.csiNodes ?? []).map((c) => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSINode',
      metadata: { name: iso.node(c.node), labels },
      spec: {
        drivers: Object.entries(c.drivers).map(([name, count]) => ({
          name,
          nodeID: iso.node(c.node),
          allocatable: { count },
        })),
      },
    })),
    volumeAttachments: (o.volumeAttachments ?? []).map((a, i) => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: iso.clusterScoped(`va-${i}`), labels },
      spec: {
        attacher: a.attacher ?? (o.persistentVolumes ?? []).find((v) => v.name === a.volume)?.csiDriver ?? '',
        nodeName: iso.node(a.node),
        source: { persistentVolumeName: iso.clusterScoped(a.volume) },
      },
    })),
  };
}

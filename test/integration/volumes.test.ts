// nodeload's volume plugins on the real control plane (KWOK nodes, kube-controller-manager's PV
// controller): a local static PV bound where it lives, a StatefulSet provisioned through a test
// provisioner (test/fixtures/provisioner.ts) spread by required anti-affinity, a zonal PV keeping its
// pods in its zone, and a CSI attach limit sending a pod to another node.
//
// Other files share the cluster: each test has its own namespace and node pool (pods select the pool),
// the pods name this file's scheduler, and the cluster-scoped objects (StorageClasses, PVs, CSINodes)
// have unique names and are removed afterwards.
import { AppsV1Api, StorageV1Api, type V1PersistentVolume, type V1Pod } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { schedulerComponent } from '../../src/scheduler/component.js';
import type { Decision } from '../../src/scheduler/explain.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { createFakeNodes, deleteFakeNodes, isApiException } from '../cluster/nodes.js';
import { startTestProvisioner, type TestProvisioner } from '../fixtures/provisioner.js';
import { coreApi, createNamespace, kubeConfig, type TestNamespace, uniqueName, waitFor } from './context.js';

const POOL_LABEL = 'nodeload.test/pool';
const HOSTNAME = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';
const WFFC = 'WaitForFirstConsumer';

const schedulerName = uniqueName('nodeload-it-vol');
const namespaces: TestNamespace[] = [];
const created = {
  nodes: [] as string[],
  pvs: [] as string[],
  classes: [] as string[],
  csiNodes: [] as string[],
};
const provisioners: TestProvisioner[] = [];
let gateway: Gateway;
let scheduler: Scheduler;

const storageApi = () => kubeConfig().makeApiClient(StorageV1Api);

async function testNamespace(prefix: string): Promise<string> {
  const ns = await createNamespace(prefix);
  namespaces.push(ns);
  return ns.name;
}

/** KWOK nodes in a fresh pool, with extra labels per node. */
async function nodePool(
  prefix: string,
  labels: Record<string, string>[],
): Promise<{ pool: string; names: string[] }> {
  const pool = uniqueName(prefix);
  const names = labels.map((_, i) => `${pool}-${i}`);
  await createFakeNodes(
    inject('kubeconfig'),
    names.map((name, i) => ({
      name,
      cpu: 4,
      memory: '8Gi',
      pods: 20,
      labels: { [POOL_LABEL]: pool, ...labels[i] },
    })),
  );
  created.nodes.push(...names);
  // Ready, and the node controller has lifted the not-ready taint every new node starts with.
  await waitFor('the pool in the cache', () =>
    names.every((n) => {
      const node = gateway.cache.nodes.get(n);
      return node?.ready === true && !node.taints.some((t) => t.key === 'node.kubernetes.io/not-ready');
    }),
  );
  return { pool, names };
}

async function storageClass(o: { provisioner: string; mode?: string }): Promise<string> {
  const name = uniqueName('it-vol-sc');
  await storageApi().createStorageClass({
    body: { metadata: { name }, provisioner: o.provisioner, volumeBindingMode: o.mode ?? WFFC },
  });
  created.classes.push(name);
  await waitFor(`StorageClass ${name} in the cache`, () => gateway.cache.storageClasses.has(name));
  return name;
}

async function createPv(
  spec: NonNullable<V1PersistentVolume['spec']>,
  labels?: Record<string, string>,
): Promise<string> {
  const name = uniqueName('it-vol-pv');
  await coreApi().createPersistentVolume({
    body: {
      metadata: { name, ...(labels ? { labels } : {}) },
      spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], ...spec },
    },
  });
  created.pvs.push(name);
  return name;
}

async function createClaim(
  namespace: string,
  name: string,
  o: { className: string; volumeName?: string; modes?: string[] },
): Promise<void> {
  await coreApi().createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name },
      spec: {
        storageClassName: o.className,
        accessModes: o.modes ?? ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        ...(o.volumeName ? { volumeName: o.volumeName } : {}),
      },
    },
  });
}

async function claimBound(namespace: string, name: string): Promise<string> {
  return await waitFor(`claim ${namespace}/${name} Bound`, async () => {
    const c = await coreApi().readNamespacedPersistentVolumeClaim({ namespace, name });
    return c.status?.phase === 'Bound' && c.spec?.volumeName ? c.spec.volumeName : undefined;
  });
}

function podBody(name: string, pool: string, claims: string[], spec: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      schedulerName,
      nodeSelector: { [POOL_LABEL]: pool },
      terminationGracePeriodSeconds: 0,
      containers: [
        { name: 'app', image: 'registry.invalid/app:1', resources: { requests: { cpu: '100m' } } },
      ],
      volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })),
      ...spec,
    },
  };
}

async function boundNode(namespace: string, name: string, timeoutMs = 45_000): Promise<string> {
  return await waitFor(
    `pod ${namespace}/${name} bound`,
    async () => (await coreApi().readNamespacedPod({ namespace, name })).spec?.nodeName || undefined,
    { timeoutMs },
  );
}

/** The latest decisions this scheduler made for the pod, newest first. */
function decisionsFor(namespace: string, pod: string): Decision[] {
  return scheduler.history.query({ namespace, limit: 500 }).items.filter((d) => d.pod === pod);
}

/** The pod's scheduled decision: the watch can show it bound before the bind's response is back. */
async function scheduledDecision(namespace: string, pod: string): Promise<Decision | undefined> {
  await waitFor(`the scheduled decision of ${pod}`, () =>
    decisionsFor(namespace, pod).some((d) => d.result === 'scheduled'),
  );
  return decisionsFor(namespace, pod).find((d) => d.result === 'scheduled');
}

function reasonsOn(d: Decision | undefined, node: string): string[] {
  return d?.candidates.find((c) => c.node === node)?.reasons.map((r) => `${r.plugin}: ${r.reason}`) ?? [];
}

beforeAll(async () => {
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  const config = parseConfig({
    kubeconfig: inject('kubeconfig'),
    httpPort: 0,
    bindAddress: '127.0.0.1',
    schedulerName,
    leaderElect: false,
    namespace: uniqueName('it-vol-gw'),
    leaseName: uniqueName('vol'),
    identity: uniqueName('gw-vol'),
    installCrd: false,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
  });
  gateway = await startGateway(config, [
    (ctx) => {
      const component = schedulerComponent(ctx);
      scheduler = component.scheduler;
      return component;
    },
  ]);
  await gateway.cache.ready();
});

afterAll(async () => {
  for (const p of provisioners) await p.stop();
  await gateway?.stop();
  const apps = kubeConfig().makeApiClient(AppsV1Api);
  for (const ns of namespaces) {
    await apps.deleteCollectionNamespacedStatefulSet({ namespace: ns.name });
    // Pods on a deleted KWOK node would wait for the pod GC and hold the namespace in Terminating.
    await coreApi().deleteCollectionNamespacedPod({ namespace: ns.name, gracePeriodSeconds: 0 });
  }
  if (created.nodes.length) await deleteFakeNodes(inject('kubeconfig'), created.nodes);
  await Promise.all(namespaces.map((ns) => ns.dispose()));
  const ignore404 = (err: unknown) => {
    if (!isApiException(err, 404)) throw err;
  };
  // The PVs go once their claims do (pv-protection); the delete marks them now.
  for (const name of created.pvs) await coreApi().deletePersistentVolume({ name }).catch(ignore404);
  for (const name of created.classes) await storageApi().deleteStorageClass({ name }).catch(ignore404);
  for (const name of created.csiNodes) await storageApi().deleteCSINode({ name }).catch(ignore404);
});

describe('volumes', () => {
  it('a local static PV: the pod goes to the PV’s node and the PV controller binds the claim', async () => {
    const ns = await testNamespace('it-vol-static');
    const { pool, names } = await nodePool('it-vol-static', [{}, {}, {}]);
    const home = names[1] as string;
    const className = await storageClass({ provisioner: 'kubernetes.io/no-provisioner' });
    const pv = await createPv({
      storageClassName: className,
      local: { path: '/mnt/disks/ssd1' },
      persistentVolumeReclaimPolicy: 'Retain',
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME, operator: 'In', values: [home] }] }],
        },
      },
    });
    await createClaim(ns, 'data', { className });
    await coreApi().createNamespacedPod({ namespace: ns, body: podBody('app', pool, ['data']) });

    expect(await boundNode(ns, 'app')).toBe(home);
    expect(await claimBound(ns, 'data')).toBe(pv);
    const pvNow = await coreApi().readPersistentVolume({ name: pv });
    expect(pvNow.spec?.claimRef).toMatchObject({ namespace: ns, name: 'data' });
    const last = await scheduledDecision(ns, 'app');
    expect(last?.result).toBe('scheduled');
    for (const other of names.filter((n) => n !== home)) {
      expect(reasonsOn(last, other)).toEqual([
        "VolumeBinding: node(s) didn't find available persistent volumes to bind",
      ]);
    }
  });

  it('a StatefulSet with a volumeClaimTemplate and required anti-affinity: 3 pods on 3 nodes, claims provisioned and Bound', async () => {
    const ns = await testNamespace('it-vol-sts');
    const { pool, names } = await nodePool('it-vol-sts', [{}, {}, {}, {}]);
    const provisioner = `${uniqueName('p')}.nodeload.test`;
    const p = await startTestProvisioner({ kubeConfig: kubeConfig(), namespace: ns, provisioner });
    provisioners.push(p);
    const className = await storageClass({ provisioner });
    const labels = { app: 'db' };
    // The node each pod was nominated to while still unbound (its volumes being provisioned).
    const nominatedWhileUnbound = new Map<string, string>();
    const off = gateway.cache.bus.on('pod', (c) => {
      const x = c.new;
      if (x?.namespace === ns && !x.nodeName && x.nominatedNodeName)
        nominatedWhileUnbound.set(x.name, x.nominatedNodeName);
    });
    await kubeConfig()
      .makeApiClient(AppsV1Api)
      .createNamespacedStatefulSet({
        namespace: ns,
        body: {
          metadata: { name: 'db' },
          spec: {
            replicas: 3,
            serviceName: 'db',
            podManagementPolicy: 'Parallel',
            selector: { matchLabels: labels },
            template: {
              metadata: { labels },
              spec: {
                schedulerName,
                nodeSelector: { [POOL_LABEL]: pool },
                terminationGracePeriodSeconds: 0,
                affinity: {
                  podAntiAffinity: {
                    requiredDuringSchedulingIgnoredDuringExecution: [
                      { labelSelector: { matchLabels: labels }, topologyKey: HOSTNAME },
                    ],
                  },
                },
                containers: [
                  {
                    name: 'db',
                    image: 'registry.invalid/db:1',
                    volumeMounts: [{ name: 'data', mountPath: '/data' }],
                  },
                ],
              },
            },
            volumeClaimTemplates: [
              {
                metadata: { name: 'data' },
                spec: {
                  storageClassName: className,
                  accessModes: ['ReadWriteOnce'],
                  resources: { requests: { storage: '1Gi' } },
                },
              },
            ],
          },
        },
      });

    const nodes: string[] = [];
    for (let i = 0; i < 3; i++) nodes.push(await boundNode(ns, `db-${i}`, 55_000));
    off();
    expect(new Set(nodes).size).toBe(3);
    // NominatedNodeNameForExpectation: while PreBind waited for its claim, each pod was nominated to the
    // node it was then bound to.
    expect(Object.fromEntries(nominatedWhileUnbound)).toEqual(
      Object.fromEntries(nodes.map((n, i) => [`db-${i}`, n])),
    );
    // …and the binding cleared it (ClearingNominatedNodeNameAfterBinding, on since v1.35).
    for (let i = 0; i < 3; i++) {
      const bound = await coreApi().readNamespacedPod({ namespace: ns, name: `db-${i}` });
      expect(bound.status?.nominatedNodeName ?? '').toBe('');
    }
    for (const n of nodes) expect(names).toContain(n);
    for (let i = 0; i < 3; i++) {
      const pv = await claimBound(ns, `data-db-${i}`);
      const vol = await coreApi().readPersistentVolume({ name: pv });
      // Provisioned on the node the scheduler selected, as a CSI provisioner would.
      expect(vol.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values).toEqual(
        [nodes[i]],
      );
      const claim = await coreApi().readNamespacedPersistentVolumeClaim({
        namespace: ns,
        name: `data-db-${i}`,
      });
      expect(claim.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBe(nodes[i]);
    }
    expect(p.errors).toEqual([]);
    expect(p.provisioned).toHaveLength(3);
    // KWOK's pod stages run them.
    await waitFor('the StatefulSet pods Running', async () => {
      const pods = await coreApi().listNamespacedPod({ namespace: ns, labelSelector: 'app=db' });
      return pods.items.length === 3 && pods.items.every((x) => x.status?.phase === 'Running');
    });
  }, 90_000);

  it('a zonal PV: the pods using it go only to nodes of its zone', async () => {
    const ns = await testNamespace('it-vol-zone');
    const { pool, names } = await nodePool('it-vol-zone', [
      { [ZONE]: 'zone-a' },
      { [ZONE]: 'zone-a' },
      { [ZONE]: 'zone-b' },
      { [ZONE]: 'zone-b' },
    ]);
    const zoneB = names.slice(2);
    const pv = await createPv(
      {
        storageClassName: '',
        accessModes: ['ReadWriteMany'],
        csi: { driver: 'zonal.nodeload.test', volumeHandle: uniqueName('h') },
      },
      { [ZONE]: 'zone-b' },
    );
    await createClaim(ns, 'shared', { className: '', volumeName: pv, modes: ['ReadWriteMany'] });
    expect(await claimBound(ns, 'shared')).toBe(pv);
    for (let i = 0; i < 4; i++) {
      await coreApi().createNamespacedPod({ namespace: ns, body: podBody(`z${i}`, pool, ['shared']) });
    }
    for (let i = 0; i < 4; i++) expect(zoneB).toContain(await boundNode(ns, `z${i}`));
    const d = await scheduledDecision(ns, 'z0');
    for (const n of names.slice(0, 2)) {
      expect(reasonsOn(d, n)).toEqual(['VolumeZone: node(s) had no available volume zone']);
    }
  });

  it('an attach limit reached: a pod with a second volume of the driver goes to the other node', async () => {
    const ns = await testNamespace('it-vol-limit');
    const { pool, names } = await nodePool('it-vol-limit', [{}, {}]);
    const [full, free] = names as [string, string];
    const driver = `${uniqueName('d')}.nodeload.test`;
    for (const [node, count] of [
      [full, 1],
      [free, 4],
    ] as const) {
      await storageApi().createCSINode({
        body: {
          metadata: { name: node },
          spec: { drivers: [{ name: driver, nodeID: node, allocatable: { count } }] },
        },
      });
      created.csiNodes.push(node);
    }
    await waitFor(
      'the CSINodes in the cache',
      () => gateway.cache.csiNodes.has(full) && gateway.cache.csiNodes.has(free),
    );
    for (const c of ['first', 'second']) {
      const pv = await createPv({ storageClassName: '', csi: { driver, volumeHandle: uniqueName(c) } });
      await createClaim(ns, c, { className: '', volumeName: pv });
      await claimBound(ns, c);
    }
    // The node's one attachment is taken by a pod placed there directly.
    await coreApi().createNamespacedPod({
      namespace: ns,
      body: podBody('holder', pool, ['first'], { schedulerName: 'nodeload-it-manual', nodeName: full }),
    });
    await waitFor('the holder in the cache', () => gateway.cache.pods.get(`${ns}/holder`)?.nodeName === full);
    // Preferred on the full node, so only the limit can keep it away.
    await coreApi().createNamespacedPod({
      namespace: ns,
      body: podBody('second', pool, ['second'], {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 100,
                preference: { matchExpressions: [{ key: HOSTNAME, operator: 'In', values: [full] }] },
              },
            ],
          },
        },
      }),
    });
    expect(await boundNode(ns, 'second')).toBe(free);
    const scheduled = await scheduledDecision(ns, 'second');
    expect(reasonsOn(scheduled, full)).toEqual(['NodeVolumeLimits: node(s) exceed max volume count']);
  });
});

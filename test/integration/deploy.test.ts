// nodeload as an admin installs it: the kustomize base, overlays and NetworkPolicy component (and the
// Helm chart) pass the real API server's server-side dry run; the ServiceAccount the base grants holds no
// wildcard; and the gateway, started as the Deployment starts it — in-cluster configuration, exactly that
// ServiceAccount's token — becomes ready, leads, schedules (preemption and volume binding included),
// writes rule status and Events, serves the webhook and the aggregated API, with not one request refused. Every object is isolated for the shared cluster: a namespace of its own, cluster-scoped
// names suffixed (test/cluster/deploy.ts isolate), removed afterwards.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { CoordinationV1Api, EventsV1Api, type V1Pod, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../cluster/controlplane.js';
import {
  addedRows,
  CHART_DIR,
  comparable,
  flagValue,
  GATEWAY_NAME,
  gatewayContainer,
  hasWildcard,
  helmTemplate,
  identityObjects,
  isolate,
  type KubeObject,
  kustomize,
  kustomizeWithComponents,
  MANIFEST_NAMESPACE,
  parseCanIList,
  parseObjects,
} from '../cluster/deploy.js';
import { buildImageTree } from '../cluster/dockerfile.js';
import { createFakeNodes, deleteFakeNodes, waitForNodesReady } from '../cluster/nodes.js';
import { startTestProvisioner } from '../fixtures/provisioner.js';
import {
  coreApi,
  kubeConfig,
  pkiPath,
  provided,
  readPod,
  uniqueName,
  waitFor,
  withNamespace,
} from './context.js';
import {
  applyObjects,
  createRuleUntilStatus,
  type DeployedGateway,
  deleteObjects,
  kubectlRun,
  permissionErrors,
  serviceAccountMount,
  startDeployedGateway,
  tempDir,
} from './deployed.js';
import { dispatched, expectThrottledBindsRetried } from './flowcontrol.js';

const root = path.resolve(import.meta.dirname, '../..');

/** Cluster-scoped objects and namespaces a test created; removed after the file. */
const cleanup: KubeObject[] = [];
afterAll(async () => {
  await deleteObjects(cleanup.filter((o) => o.kind !== 'Namespace'));
  await deleteObjects(cleanup.filter((o) => o.kind === 'Namespace'));
});

/** A rendering isolated for this cluster, its namespace created for real (dry runs need it to exist). */
async function isolatedRendering(
  objects: KubeObject[],
  prefix: string,
): Promise<{ namespace: string; objects: KubeObject[] }> {
  const namespace = uniqueName(prefix);
  const isolated = isolate(objects, { namespace, suffix: namespace.slice(-10) });
  const ns = isolated.filter((o) => o.kind === 'Namespace');
  expect(ns.map((o) => o.metadata.name)).toEqual([namespace]);
  cleanup.push(...ns);
  await applyObjects(ns);
  return { namespace, objects: isolated };
}

/** Server-side dry run of every object; returns kubectl's warnings. */
async function dryRun(objects: KubeObject[]): Promise<string> {
  const { stdout, stderr } = await applyObjects(objects, { dryRun: true });
  const applied = stdout.split('\n').filter((l) => l.includes('(server dry run)'));
  expect(applied).toHaveLength(objects.length);
  return stderr;
}

/**
 * Stand-ins for cert-manager's Issuer and Certificate CRDs (test/fixtures): their names are fixed, so
 * they are created only where absent and removed after the file.
 */
let certManagerCrds: Promise<void> | undefined;
function ensureCertManagerCrds(): Promise<void> {
  certManagerCrds ??= (async () => {
    const crds = parseObjects(readFileSync(path.join(root, 'test/fixtures/cert-manager-crds.yaml'), 'utf8'));
    const present = await kubectlRun(['get', 'crd', '-o', 'name']);
    const missing = crds.filter((c) => !present.stdout.includes(`/${c.metadata.name}`));
    cleanup.push(...missing);
    if (missing.length === 0) return;
    await applyObjects(missing);
    for (const c of missing) {
      await kubectlRun(['wait', '--for=condition=Established', `crd/${c.metadata.name}`, '--timeout=30s']);
    }
  })();
  return certManagerCrds;
}

const kinds = (objects: KubeObject[]) => [...new Set(objects.map((o) => o.kind))].sort();

describe('kustomize renderings pass server-side dry run', () => {
  it('base: every object, Pod Security restricted without a warning', async () => {
    const { objects } = await isolatedRendering(
      await kustomize(provided('kubectlPath'), 'base'),
      'nl-dry-base',
    );
    expect(kinds(objects)).toEqual([
      'APIService',
      'ClusterRole',
      'ClusterRoleBinding',
      'CustomResourceDefinition',
      'Deployment',
      'FlowSchema',
      'MutatingWebhookConfiguration',
      'Namespace',
      'PodDisruptionBudget',
      'ResourceQuota',
      'Role',
      'RoleBinding',
      'Service',
      'ServiceAccount',
      'ValidatingWebhookConfiguration',
    ]);
    const warnings = await dryRun(objects);
    expect(warnings).not.toMatch(/PodSecurity|would violate/i);
  });

  it('base with components/network-policy: the NetworkPolicy in the gateway namespace selects its pods', async () => {
    const { namespace, objects } = await isolatedRendering(
      await kustomizeWithComponents(provided('kubectlPath'), 'base', ['components/network-policy']),
      'nl-dry-np',
    );
    type Labels = Record<string, string>;
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.map((o) => o.metadata.namespace)).toEqual([namespace]);
    const selected = policies.map((o) => (o['spec'] as { podSelector: { matchLabels: Labels } }).podSelector);
    const gatewayPods = objects
      .filter((o) => o.kind === 'Deployment')
      .map((o) => (o['spec'] as { template: { metadata: { labels: Labels } } }).template.metadata.labels);
    expect(gatewayPods).toEqual([expect.objectContaining(selected[0]?.matchLabels)]);
    const warnings = await dryRun(objects);
    expect(warnings).not.toMatch(/PodSecurity|would violate/i);
  });

  it('overlays/cert-manager: Issuers, Certificates and cainjector annotations (against stand-in cert-manager CRDs)', async () => {
    await ensureCertManagerCrds();
    const { namespace, objects } = await isolatedRendering(
      await kustomize(provided('kubectlPath'), 'overlays/cert-manager'),
      'nl-dry-cm',
    );
    expect(kinds(objects)).toEqual(expect.arrayContaining(['Certificate', 'Issuer']));
    const injected = objects.filter((o) => o.metadata.annotations?.['cert-manager.io/inject-ca-from']);
    expect(injected.map((o) => o.kind).sort()).toEqual([
      'APIService',
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
    ]);
    for (const o of injected) {
      expect(o.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(
        `${namespace}/nodeload-gateway-serving`,
      );
    }
    const serving = objects.find(
      (o) => o.kind === 'Certificate' && o.metadata.name === 'nodeload-gateway-serving',
    );
    expect((serving?.['spec'] as { dnsNames?: string[] } | undefined)?.dnsNames).toContain(
      `${GATEWAY_NAME}.${namespace}.svc`,
    );
    await dryRun(objects);
  });

  it('overlays/self-signed: no certificate volume, the rotation flags and its RBAC', async () => {
    const { objects } = await isolatedRendering(
      await kustomize(provided('kubectlPath'), 'overlays/self-signed'),
      'nl-dry-ss',
    );
    const container = gatewayContainer(objects);
    expect(flagValue(container.args, 'cert-rotation')).toBe('self-signed');
    expect(flagValue(container.args, 'tls-cert-file')).toBeUndefined();
    const warnings = await dryRun(objects);
    expect(warnings).not.toMatch(/PodSecurity|would violate/i);
  });
});

/** helm, built from its pinned Go module (test/cluster/build-helm.sh; cached, minutes when cold). */
let helm: string;
function run(bin: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: 1_800_000, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
      if (err)
        reject(new Error(`${bin} ${args.join(' ')} failed: ${stderr.trim() || err.message}\n${stdout}`));
      else resolve({ stdout, stderr });
    });
  });
}

describe('the Helm chart', () => {
  beforeAll(async () => {
    const { stdout } = await run('bash', [path.join(root, 'test/cluster/build-helm.sh')]);
    helm = stdout.trim().split('\n').at(-1) ?? '';
  }, 1_800_000);

  it('helm lint --strict passes for every certificates mode and both scheduling modes', async () => {
    for (const set of [
      [],
      ['certificates.mode=self-signed'],
      ['certificates.mode=provided', 'certificates.provided.caBundle=Zm9v', 'mode=extender'],
      ['userPort.tls.secretName=nodeload-user-tls', 'userPort.tls.clientCAConfigMap=nodeload-user-client-ca'],
    ]) {
      const { stdout } = await run(helm, [
        'lint',
        '--strict',
        CHART_DIR,
        ...set.flatMap((s) => ['--set', s]),
      ]);
      expect(stdout, set.join()).toContain('0 chart(s) failed');
      expect(stdout).not.toMatch(/\[(ERROR|WARNING)\]/);
    }
  });

  it('renders the same objects as the kustomize overlays (cert-manager, self-signed)', async () => {
    for (const [mode, overlay] of [
      ['cert-manager', 'overlays/cert-manager'],
      ['self-signed', 'overlays/self-signed'],
    ] as const) {
      const chart = await helmTemplate(helm, { set: [`certificates.mode=${mode}`] });
      const kustomized = await kustomize(provided('kubectlPath'), overlay);
      expect(comparable(chart), mode).toEqual(comparable(kustomized));
    }
  });

  it('helm template passes server-side dry run: defaults (self-signed) and cert-manager', async () => {
    const defaults = await isolatedRendering([NAMESPACE, ...(await helmTemplate(helm))], 'nl-dry-helm-d');
    expect(flagValue(gatewayContainer(defaults.objects).args, 'cert-rotation')).toBe('self-signed');
    expect(await dryRun(defaults.objects)).not.toMatch(/PodSecurity|would violate/i);
    await ensureCertManagerCrds();
    const { objects } = await isolatedRendering(
      [NAMESPACE, ...(await helmTemplate(helm, { set: ['certificates.mode=cert-manager'] }))],
      'nl-dry-helm',
    );
    expect(kinds(objects)).toEqual(expect.arrayContaining(['Certificate', 'Deployment', 'ResourceQuota']));
    const warnings = await dryRun(objects);
    expect(warnings).not.toMatch(/PodSecurity|would violate/i);
  });

  it('helm template passes server-side dry run: extender mode, provided certificate, NetworkPolicy, rules, user port TLS, no FlowSchema', async () => {
    const rendered = await helmTemplate(helm, {
      set: [
        'mode=extender',
        'certificates.mode=provided',
        `certificates.provided.caBundle=${Buffer.from(readFileSync(pkiPath('ca.crt'))).toString('base64')}`,
        'networkPolicy.enabled=true',
        'replicas=3',
        'rules[0].name=web',
        `rules[0].namespace=${MANIFEST_NAMESPACE}`,
        'rules[0].spec.maxCPU=70',
        'extraArgs[0]=--stale-metrics-policy=fail-closed',
        'userPort.tls.secretName=nodeload-user-tls',
        'userPort.tls.clientCAConfigMap=nodeload-user-client-ca',
        'flowSchema.enabled=false',
      ],
    });
    expect(rendered.filter((o) => o.kind === 'FlowSchema')).toEqual([]);
    const { objects } = await isolatedRendering([NAMESPACE, ...rendered], 'nl-dry-helm-x');
    // The rule needs its CRD served (shared by every test: applied, never removed).
    await applyObjects(objects.filter((o) => o.kind === 'CustomResourceDefinition'));
    const container = gatewayContainer(objects);
    expect(container.args).toEqual(
      expect.arrayContaining(['--native-scheduler=false', '--stale-metrics-policy=fail-closed']),
    );
    expect(flagValue(container.args, 'extender-client-ca-file')).toBeDefined();
    expect(flagValue(container.args, 'user-client-ca-file')).toBeDefined();
    const rule = objects.find((o) => o.kind === 'NodeLoadRule');
    expect(rule?.['spec']).toEqual({ maxCPU: 70, maxMemory: 80 });
    const hooks = objects
      .filter((o) => o.kind.endsWith('WebhookConfiguration'))
      .flatMap((o) => o['webhooks'] as { clientConfig: { caBundle?: string } }[]);
    expect(hooks.every((h) => h.clientConfig.caBundle)).toBe(true);
    // The extender's and the user port's CAs come from ConfigMaps of the admin's, the user port's
    // certificate from a Secret; the dry run needs them to exist only for pods.
    await dryRun(objects);
  });
});

/** The Namespace Helm does not render (it installs into an existing one), labelled as the base's. */
const NAMESPACE: KubeObject = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: MANIFEST_NAMESPACE, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
};

describe('the ServiceAccount the base grants', () => {
  it('kubectl auth can-i --list shows no wildcard, and the delegated-auth reviews it needs', async () => {
    const { namespace, objects } = await isolatedRendering(
      await kustomize(provided('kubectlPath'), 'base'),
      'nl-cani',
    );
    const identity = identityObjects(objects);
    cleanup.push(
      ...identity.filter((o) => o.kind.startsWith('Cluster') || o.metadata.namespace === 'kube-system'),
    );
    await applyObjects(identity);
    const list = async (user: string, ns: string) =>
      parseCanIList((await kubectlRun(['auth', 'can-i', '--list', `--as=${user}`, '-n', ns])).stdout);
    const sa = `system:serviceaccount:${namespace}:${GATEWAY_NAME}`;
    // An identity of the same kind without bindings: what every ServiceAccount may do anyway.
    const nobody = `system:serviceaccount:${namespace}:nobody`;
    const granted = [];
    for (const ns of [namespace, 'kube-system']) {
      const added = addedRows(await list(sa, ns), await list(nobody, ns));
      expect(added.filter(hasWildcard), `wildcards in ${ns}`).toEqual([]);
      granted.push(...added);
    }
    // Cluster-wide grants show in every namespace's list: count each once.
    const resources = [...new Set(granted.map((r) => `${r.resources} ${r.resourceNames} ${r.verbs}`))];
    expect(resources).toEqual(
      expect.arrayContaining([
        'tokenreviews.authentication.k8s.io [] [create]',
        'subjectaccessreviews.authorization.k8s.io [] [create]',
        'customresourcedefinitions.apiextensions.k8s.io [nodeloadrules.example.com] [get]',
        'leases.coordination.k8s.io [nodeload-gateway] [get update]',
        'configmaps [extension-apiserver-authentication] [get list watch]',
      ]),
    );
    expect(resources.filter((r) => r.startsWith('customresourcedefinitions'))).toHaveLength(1);
  });
});

/** Pods of the scenarios below select their own nodes by this label. */
const POOL_LABEL = 'nodeload.test/pool';

function poolPod(
  name: string,
  o: { schedulerName: string; pool: string; cpu: string; priorityClassName?: string; claims?: string[] },
): V1Pod {
  return {
    metadata: { name },
    spec: {
      schedulerName: o.schedulerName,
      nodeSelector: { [POOL_LABEL]: o.pool },
      ...(o.priorityClassName ? { priorityClassName: o.priorityClassName } : {}),
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: o.cpu, memory: '64Mi' } },
        },
      ],
      volumes: (o.claims ?? []).map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })),
    },
  };
}

/**
 * waitFor, ended early by a request the API server refused the gateway (its log): a missing permission
 * then fails naming the refusal, not as a timeout waiting for its effect.
 */
async function unlessRefused<T>(
  gw: DeployedGateway,
  description: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
): Promise<T> {
  const outcome = await waitFor<{ value?: T }>(description, async () => {
    if (permissionErrors(gw.output()).length > 0) return {};
    const value = await fn();
    return value === undefined || value === false ? undefined : { value };
  });
  expect(permissionErrors(gw.output()), `refused while waiting for ${description}`).toEqual([]);
  return outcome.value as T;
}

const boundTo = (gw: DeployedGateway, namespace: string, name: string) =>
  unlessRefused(
    gw,
    `pod ${namespace}/${name} bound`,
    async () => (await readPod(namespace, name))?.spec?.nodeName,
  );

/**
 * Preemption as the gateway's identity: on `node` (2 CPUs) a low-priority filler takes 1.5; a
 * high-priority pod of 1 CPU makes the gateway evict it — the DisruptionTarget condition (pods/status
 * patch), then the DELETE (pods delete), then the Preempted Event — nominate the node (pods/status patch)
 * and bind there. Each write is seen from outside: a watch of the namespace, the Event list.
 */
async function expectPreemption(
  gw: DeployedGateway,
  schedulerName: string,
  pool: string,
  node: string,
): Promise<void> {
  const ns = await withNamespace('nl-deploy-preempt');
  const low = uniqueName('nl-deploy-low');
  const high = uniqueName('nl-deploy-high');
  const classes: KubeObject[] = [
    { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: low }, value: 10 },
    { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: high }, value: 100_000 },
  ];
  cleanup.push(...classes);
  await applyObjects(classes);
  const core = coreApi();
  await core.createNamespacedPod({
    namespace: ns,
    body: poolPod('filler', { schedulerName, pool, cpu: '1500m', priorityClassName: low }),
  });
  expect(await boundTo(gw, ns, 'filler')).toBe(node);

  // Both writes to status may be short-lived (KWOK removes the victim at once): watch for them.
  const seen = { disruptionTarget: false, nominated: new Set<string>() };
  const watch = await new Watch(kubeConfig()).watch(
    `/api/v1/namespaces/${ns}/pods`,
    {},
    (_type: string, pod: V1Pod) => {
      const status = pod.status;
      if (pod.metadata?.name === 'filler' && status?.conditions?.some((c) => c.type === 'DisruptionTarget'))
        seen.disruptionTarget = true;
      if (pod.metadata?.name === 'preemptor' && status?.nominatedNodeName)
        seen.nominated.add(status.nominatedNodeName);
    },
    () => undefined,
  );
  try {
    await core.createNamespacedPod({
      namespace: ns,
      body: poolPod('preemptor', { schedulerName, pool, cpu: '1', priorityClassName: high }),
    });
    await unlessRefused(gw, 'the filler evicted', async () => (await readPod(ns, 'filler')) === undefined);
    expect(await boundTo(gw, ns, 'preemptor')).toBe(node);
    await unlessRefused(gw, 'DisruptionTarget on the filler and the nomination, seen by the watch', () =>
      seen.disruptionTarget && seen.nominated.size > 0 ? true : undefined,
    );
    expect([...seen.nominated]).toEqual([node]);
  } finally {
    watch.abort();
  }
  const preempted = await unlessRefused(gw, 'the Preempted Event on the filler', async () => {
    const list = await kubeConfig()
      .makeApiClient(EventsV1Api)
      .listNamespacedEvent({ namespace: ns, fieldSelector: `reportingController=${schedulerName}` });
    return list.items.find((e) => e.reason === 'Preempted' && e.regarding?.name === 'filler');
  });
  expect(preempted.related?.name).toBe('preemptor');
}

/**
 * VolumeBinding as the gateway's identity: a WaitForFirstConsumer local PV on `home` (static binding:
 * the gateway patches the PV's claimRef) and a WaitForFirstConsumer claim of a test provisioner's class
 * (dynamic: the gateway patches volume.kubernetes.io/selected-node onto the claim, the provisioner creates
 * the PV there); the pod using both goes to `home` and kube-controller-manager's PV controller binds both
 * claims. Its cache lists and watches PVs, claims and classes, or it would not be ready.
 */
async function expectVolumesBound(
  gw: DeployedGateway,
  schedulerName: string,
  pool: string,
  home: string,
): Promise<void> {
  const ns = await withNamespace('nl-deploy-vol');
  const provisioner = `${uniqueName('p')}.nodeload.test`;
  const p = await startTestProvisioner({ kubeConfig: kubeConfig(), namespace: ns, provisioner });
  try {
    const localClass = uniqueName('nl-deploy-local');
    const dynamicClass = uniqueName('nl-deploy-dynamic');
    const pv = uniqueName('nl-deploy-pv');
    const storage: KubeObject[] = [
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: localClass },
        provisioner: 'kubernetes.io/no-provisioner',
        volumeBindingMode: 'WaitForFirstConsumer',
      },
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: dynamicClass },
        provisioner,
        volumeBindingMode: 'WaitForFirstConsumer',
      },
      {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: pv },
        spec: {
          storageClassName: localClass,
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          local: { path: '/mnt/disks/ssd1' },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [home] }] },
              ],
            },
          },
        },
      },
    ];
    cleanup.push(...storage);
    await applyObjects(storage);
    const claim = (name: string, storageClassName: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: ns },
      spec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await applyObjects([claim('local', localClass), claim('provisioned', dynamicClass)]);
    await coreApi().createNamespacedPod({
      namespace: ns,
      body: poolPod('app', { schedulerName, pool, cpu: '100m', claims: ['local', 'provisioned'] }),
    });

    expect(await boundTo(gw, ns, 'app')).toBe(home);
    const bound = async (name: string) =>
      unlessRefused(gw, `claim ${ns}/${name} Bound`, async () => {
        const c = await coreApi().readNamespacedPersistentVolumeClaim({ namespace: ns, name });
        return c.status?.phase === 'Bound' ? c : undefined;
      });
    expect((await bound('local')).spec?.volumeName).toBe(pv);
    expect((await coreApi().readPersistentVolume({ name: pv })).spec?.claimRef).toMatchObject({
      namespace: ns,
      name: 'local',
    });
    const provisioned = await bound('provisioned');
    cleanup.push(
      ...p.provisioned.map(
        (name): KubeObject => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name } }),
      ),
    );
    expect(provisioned.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBe(home);
    expect(p.errors).toEqual([]);
    expect(p.provisioned).toEqual([provisioned.spec?.volumeName]);
  } finally {
    await p.stop();
  }
}

describe('the gateway under the ServiceAccount the base grants', () => {
  let namespace: string;
  let node: string;
  let dir: string;
  /** A node of 2 CPUs for preemption, and two for the volumes (the local PV lives on the second). */
  const pools = { preempt: uniqueName('nl-deploy-preempt'), volumes: uniqueName('nl-deploy-vol') };
  const preemptNode = `${pools.preempt}-0`;
  const volumeNodes = [`${pools.volumes}-0`, `${pools.volumes}-1`];

  beforeAll(async () => {
    dir = tempDir('nl-deploy-');
    node = uniqueName('nl-deploy-node');
    await createFakeNodes(provided('kubeconfig'), [
      { name: node, cpu: 4, memory: '8Gi' },
      { name: preemptNode, cpu: 2, memory: '4Gi', labels: { [POOL_LABEL]: pools.preempt } },
      ...volumeNodes.map((name) => ({
        name,
        cpu: 4,
        memory: '8Gi',
        labels: { [POOL_LABEL]: pools.volumes },
      })),
    ]);
    await waitForNodesReady(provided('kubeconfig'), [node, preemptNode, ...volumeNodes]);
    // Every new node starts with the not-ready taint until the node controller sees it Ready.
    await waitFor('the not-ready taints lifted', async () => {
      const nodes = await Promise.all(
        [preemptNode, ...volumeNodes].map((name) => coreApi().readNode({ name })),
      );
      return nodes.every((n) => !n.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready'));
    });
  });
  afterAll(async () => {
    await deleteFakeNodes(provided('kubeconfig'), [node, preemptNode, ...volumeNodes]);
  });

  it('in-cluster configuration: becomes ready, leads, schedules (preempting, binding volumes), writes rule status and serves webhook and aggregated API: nothing forbidden', {
    timeout: 360_000,
  }, async () => {
    const rendered = await isolatedRendering(await kustomize(provided('kubectlPath'), 'base'), 'nl-deploy');
    namespace = rendered.namespace;
    const suffix = namespace.slice(-10);
    // What an admin applies first: the CRD (shared by every test: applied, never removed) and the identity.
    await applyObjects(rendered.objects.filter((o) => o.kind === 'CustomResourceDefinition'));
    const identity = identityObjects(rendered.objects);
    cleanup.push(
      ...identity.filter((o) => o.kind.startsWith('Cluster') || o.metadata.namespace === 'kube-system'),
    );
    await applyObjects(identity);
    // Its FlowSchema: the API server queues the gateway's requests as kube-scheduler's.
    const flowSchemas = rendered.objects.filter((o) => o.kind === 'FlowSchema');
    expect(flowSchemas.map((o) => o.metadata.name)).toEqual([`${GATEWAY_NAME}-${suffix}`]);
    cleanup.push(...flowSchemas);
    await applyObjects(flowSchemas);

    const container = gatewayContainer(rendered.objects);
    expect(container.namespace).toBe(namespace);
    // As in its pod: no kubeconfig, the API server from KUBERNETES_SERVICE_HOST/PORT, the token, CA and
    // namespace from the files the kubelet mounts for the ServiceAccount.
    const serviceAccountRoot = await serviceAccountMount(namespace, container.serviceAccountName, dir);
    const schedulerName = uniqueName('nl-deploy-sched');
    const gw = await startDeployedGateway(container, {
      serviceAccountRoot,
      flags: {
        // The kubelet would mount the Secret here; the cluster's test PKI stands in (SANs for loopback).
        'tls-cert-file': pkiPath('serving.crt'),
        'tls-key-file': pkiPath('serving.key'),
        // Pods of other tests are not this gateway's business.
        'scheduler-name': schedulerName,
      },
    });
    // Neither --kubeconfig nor KUBECONFIG (startDeployedGateway drops it): loadKubeConfig's in-cluster branch.
    expect(flagValue(gw.args, 'kubeconfig')).toBeUndefined();
    try {
      const base = `http://127.0.0.1:${gw.httpPort}`;
      // A refused request is logged at once; waiting for readiness would only hide it behind a timeout.
      const started = await waitFor(
        'GET /readyz = 200 (or a refused request in the log)',
        async () =>
          permissionErrors(gw.output()).length > 0 ||
          (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
        { timeoutMs: 90_000 },
      );
      expect(started).toBe(true);
      expect(permissionErrors(gw.output())).toEqual([]);
      expect((await fetch(`${base}/livez`)).status).toBe(200);

      // It leads: the Lease of its namespace names it.
      const lease = await waitFor('the gateway holds the lease', async () => {
        const l = await kubeConfig()
          .makeApiClient(CoordinationV1Api)
          .readNamespacedLease({ name: GATEWAY_NAME, namespace });
        return l.spec?.holderIdentity === gw.identity ? l : undefined;
      });
      expect(lease.spec?.holderIdentity).toBe(gw.identity);
      // Its lease writes, lists and watches went through the base's FlowSchema, at kube-scheduler's level.
      expect(await dispatched(`${GATEWAY_NAME}-${suffix}`, 'workload-high')).toBeGreaterThan(0);

      const work = await withNamespace('nl-deploy-work');
      // The operator (leader only) writes the rule's status and an Event.
      await createRuleUntilStatus(work, 'deployed', { maxCPU: 80, allowedNodes: [node] }, node);

      // The scheduler binds a pod, and marks one that fits nowhere Unschedulable with an Event.
      const core = coreApi();
      const pod = (name: string, cpu: string) => ({
        metadata: { name },
        spec: {
          schedulerName,
          containers: [
            {
              name: 'app',
              image: 'registry.invalid/app:1',
              resources: { requests: { cpu, memory: '64Mi' } },
            },
          ],
        },
      });
      await core.createNamespacedPod({ namespace: work, body: pod('fits', '100m') });
      await core.createNamespacedPod({ namespace: work, body: pod('too-big', '64') });
      await waitFor('pod bound by the gateway', async () => {
        const p = await core.readNamespacedPod({ namespace: work, name: 'fits' });
        return p.spec?.nodeName === node;
      });
      await waitFor('PodScheduled=False on the pod that fits nowhere', async () => {
        const p = await core.readNamespacedPodStatus({ namespace: work, name: 'too-big' });
        return p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False');
      });
      await waitFor('FailedScheduling Event', async () => {
        const events = await kubeConfig().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: work });
        return events.items.some((e) => e.reason === 'FailedScheduling' && e.regarding?.name === 'too-big');
      });
      await expectThrottledBindsRetried({
        gw,
        schedulerName,
        serviceAccount: { namespace, name: container.serviceAccountName },
        node,
        cleanup,
      });
      await expectPreemption(gw, schedulerName, pools.preempt, preemptNode);
      await expectVolumesBound(gw, schedulerName, pools.volumes, volumeNodes[1] as string);
      expect(permissionErrors(gw.output())).toEqual([]);

      // The webhook answers an AdmissionReview on the HTTPS port.
      const review = await httpsJson(gw.httpsPort, 'POST', '/mutate', {
        body: {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: {
            uid: 'deploy-test',
            kind: { group: '', version: 'v1', kind: 'Pod' },
            resource: { group: '', version: 'v1', resource: 'pods' },
            namespace: work,
            operation: 'CREATE',
            userInfo: { username: 'someone' },
            object: {
              apiVersion: 'v1',
              kind: 'Pod',
              ...pod('steered', '100m'),
              metadata: { name: 'steered', namespace: work },
            },
          },
        },
      });
      expect(review.status).toBe(200);
      expect(review.body).toMatchObject({ response: { uid: 'deploy-test', allowed: true } });

      // The aggregated API: front-proxy authentication (the ConfigMap the kube-system RoleBinding lets it
      // read) and a SubjectAccessReview for a user granted nodeloads through the base's reader role.
      const reader = uniqueName('nl-deploy-reader');
      const readerBinding: KubeObject = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: reader },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: `nodeload:nodeloads-reader-${suffix}`,
        },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: reader }],
      };
      cleanup.push(readerBinding);
      await applyObjects([readerBinding]);
      const nodeLoads = await waitFor('GET nodeloads through front-proxy authentication = 200', async () => {
        const res = await httpsJson(
          gw.httpsPort,
          'GET',
          `/apis/nodeload.example.com/v1alpha1/nodeloads/${node}`,
          {
            proxy: true,
            headers: { 'X-Remote-User': reader, 'X-Remote-Group': 'system:authenticated' },
          },
        );
        return res.status === 200 ? res : undefined;
      });
      expect(nodeLoads.body).toMatchObject({ kind: 'NodeLoad', metadata: { name: node } });

      // The user-facing port: a bearer token reviewed by the gateway (TokenReview) and authorized
      // (SubjectAccessReview) before /metrics answers.
      const metricsUser: KubeObject[] = [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'scraper', namespace: work } },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: `nl-deploy-scraper-${suffix}` },
          rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: `nl-deploy-scraper-${suffix}` },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: `nl-deploy-scraper-${suffix}`,
          },
          subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: work }],
        },
      ];
      cleanup.push(...metricsUser.slice(1));
      await applyObjects(metricsUser);
      const token = (
        await kubectlRun(['create', 'token', 'scraper', '-n', work, '--duration=600s'])
      ).stdout.trim();
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^nodeload_leader(\{[^}]*\})? 1$/m);

      expect(permissionErrors(gw.output())).toEqual([]);
      expect(await gw.stop()).toBe(0);
      expect(permissionErrors(gw.output())).toEqual([]);
    } finally {
      await gw.stop();
    }
  });
});

describe('the production build, as the image runs it', () => {
  it("the Dockerfile's stages (build, bundle) give a tree that node starts and that turns ready", {
    timeout: 600_000,
  }, async () => {
    const tree = await buildImageTree(root, tempDir('nl-image-'), (l) =>
      process.stderr.write(`[image] ${l}\n`),
    );
    expect(tree.entrypoint).toEqual(['node', 'dist/bundle/main.mjs']);
    expect(tree.user).toMatch(/^\d+(:\d+)?$/);
    // The bundle carries its dependencies: no node_modules at all (the base image's node runs the
    // gateway; here the checkout's Node 24 stands in for it), and no sources.
    expect(existsSync(path.join(tree.dir, 'node_modules'))).toBe(false);
    expect(existsSync(path.join(tree.dir, 'src'))).toBe(false);
    for (const file of [
      'dist/bundle/main.mjs',
      'web/dist/index.html',
      'manifests/crd/nodeloadrules.example.com.yaml',
    ]) {
      expect(existsSync(path.join(tree.dir, file)), file).toBe(true);
    }
    const [httpPort, httpsPort] = await freePorts(2);
    const env: NodeJS.ProcessEnv = { ...process.env, ...tree.env };
    for (const k of Object.keys(env)) if (k.startsWith('NODELOAD_')) delete env[k];
    const [command = '', ...entryArgs] = tree.entrypoint;
    const child = spawn(
      path.join(root, 'node_modules/.bin', command),
      [
        ...entryArgs,
        `--kubeconfig=${provided('kubeconfig')}`,
        `--http-port=${httpPort}`,
        `--https-port=${httpsPort}`,
        '--bind-address=127.0.0.1',
        `--tls-cert-file=${pkiPath('serving.crt')}`,
        `--tls-key-file=${pkiPath('serving.key')}`,
        `--scheduler-name=${uniqueName('nl-image')}`,
        '--leader-elect=false',
        // Loopback only: lets the test run a query and read /metrics without a token.
        '--anonymous-user-port=true',
      ],
      { cwd: tree.dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    try {
      const base = `http://127.0.0.1:${httpPort}`;
      await waitFor(
        'GET /readyz = 200 from node dist/bundle/main.mjs',
        async () =>
          child.exitCode !== null || (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
        { timeoutMs: 90_000 },
      );
      expect(child.exitCode, out).toBeNull();
      const page = await fetch(`${base}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      // What the bundle must carry besides startup: a query through yoga and Pothos, prom-client's
      // exposition, and GraphiQL's page (a chunk of its own, loaded on first use).
      const answer = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ nodes { name } }' }),
      });
      expect(answer.status, out).toBe(200);
      const body = (await answer.json()) as { data?: { nodes?: { name: string }[] }; errors?: unknown };
      expect(body.errors).toBeUndefined();
      expect(Array.isArray(body.data?.nodes)).toBe(true);
      expect(await (await fetch(`${base}/metrics`)).text()).toContain('nodeload_');
      const graphiql = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
      expect(graphiql.status).toBe(200);
      expect(await graphiql.text()).toContain('<title>nodeload GraphQL</title>');
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      expect((await exited)[0], out).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

interface JsonResponse {
  status: number;
  body: unknown;
}

/** A request to the gateway's HTTPS port (the cluster CA verifies it; `proxy` presents the front-proxy client certificate). */
function httpsJson(
  port: number,
  method: string,
  urlPath: string,
  opts: { body?: unknown; headers?: Record<string, string>; proxy?: boolean } = {},
): Promise<JsonResponse> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: urlPath,
        servername: 'localhost',
        ca: readFileSync(pkiPath('ca.crt')),
        ...(opts.proxy
          ? {
              cert: readFileSync(pkiPath('front-proxy-client.crt')),
              key: readFileSync(pkiPath('front-proxy-client.key')),
            }
          : {}),
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...opts.headers },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

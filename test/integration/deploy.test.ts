// nodeload as an admin installs it: the kustomize base and overlays (and the Helm chart) pass the real
// API server's server-side dry run; the ServiceAccount the base grants holds no wildcard; and the gateway,
// started as the Deployment starts it with exactly that ServiceAccount's token, becomes ready, leads,
// schedules, writes rule status and Events, serves the webhook and the aggregated API, with not one
// request refused. Every object is isolated for the shared cluster: a namespace of its own, cluster-scoped
// names suffixed (test/cluster/deploy.ts isolate), removed afterwards.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { CoordinationV1Api, EventsV1Api } from '@kubernetes/client-node';
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
  MANIFEST_NAMESPACE,
  parseCanIList,
  parseObjects,
} from '../cluster/deploy.js';
import { buildImageTree } from '../cluster/dockerfile.js';
import { createFakeNodes, deleteFakeNodes, waitForNodesReady } from '../cluster/nodes.js';
import { coreApi, kubeConfig, pkiPath, provided, uniqueName, waitFor, withNamespace } from './context.js';
import {
  applyObjects,
  createRuleUntilStatus,
  deleteObjects,
  kubectlRun,
  permissionErrors,
  serviceAccountKubeconfig,
  startDeployedGateway,
  tempDir,
} from './deployed.js';

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

  it('helm template passes server-side dry run: extender mode, provided certificate, NetworkPolicy, rules', async () => {
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
      ],
    });
    const { objects } = await isolatedRendering([NAMESPACE, ...rendered], 'nl-dry-helm-x');
    // The rule needs its CRD served (shared by every test: applied, never removed).
    await applyObjects(objects.filter((o) => o.kind === 'CustomResourceDefinition'));
    const container = gatewayContainer(objects);
    expect(container.args).toEqual(
      expect.arrayContaining(['--native-scheduler=false', '--stale-metrics-policy=fail-closed']),
    );
    expect(flagValue(container.args, 'extender-client-ca-file')).toBeDefined();
    const rule = objects.find((o) => o.kind === 'NodeLoadRule');
    expect(rule?.['spec']).toEqual({ maxCPU: 70, maxMemory: 80 });
    const hooks = objects
      .filter((o) => o.kind.endsWith('WebhookConfiguration'))
      .flatMap((o) => o['webhooks'] as { clientConfig: { caBundle?: string } }[]);
    expect(hooks.every((h) => h.clientConfig.caBundle)).toBe(true);
    // The extender's CA comes from a ConfigMap of the admin's; the dry run needs it to exist only for pods.
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

describe('the gateway under the ServiceAccount the base grants', () => {
  let namespace: string;
  let node: string;
  let dir: string;

  beforeAll(async () => {
    dir = tempDir('nl-deploy-');
    node = uniqueName('nl-deploy-node');
    await createFakeNodes(provided('kubeconfig'), [{ name: node, cpu: 4, memory: '8Gi' }]);
    await waitForNodesReady(provided('kubeconfig'), [node]);
  });
  afterAll(async () => {
    await deleteFakeNodes(provided('kubeconfig'), [node]);
  });

  it('becomes ready, leads, schedules, writes rule status and serves webhook and aggregated API: nothing forbidden', {
    timeout: 240_000,
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

    const container = gatewayContainer(rendered.objects);
    expect(container.namespace).toBe(namespace);
    const kubeconfig = await serviceAccountKubeconfig(namespace, container.serviceAccountName, dir);
    const schedulerName = uniqueName('nl-deploy-sched');
    const gw = await startDeployedGateway(container, {
      kubeconfig,
      flags: {
        // The kubelet would mount the Secret here; the cluster's test PKI stands in (SANs for loopback).
        'tls-cert-file': pkiPath('serving.crt'),
        'tls-key-file': pkiPath('serving.key'),
        // Pods of other tests are not this gateway's business.
        'scheduler-name': schedulerName,
      },
    });
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
  it("the Dockerfile's stages (build, npm ci --omit=dev) give a tree that node starts and that turns ready", {
    timeout: 600_000,
  }, async () => {
    const tree = await buildImageTree(root, tempDir('nl-image-'), (l) =>
      process.stderr.write(`[image] ${l}\n`),
    );
    expect(tree.entrypoint).toEqual(['node', 'dist/main.js']);
    expect(tree.user).toMatch(/^\d+(:\d+)?$/);
    // Production dependencies only: no compiler, no test runner, and no "node" package either (the base
    // image's node runs the gateway; here the checkout's Node 24 stands in for it).
    for (const dev of ['typescript', 'vitest', 'tsx', 'node']) {
      expect(existsSync(path.join(tree.dir, 'node_modules', dev)), dev).toBe(false);
    }
    for (const file of [
      'dist/main.js',
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
        'GET /readyz = 200 from node dist/main.js',
        async () =>
          child.exitCode !== null || (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
        { timeoutMs: 90_000 },
      );
      expect(child.exitCode, out).toBeNull();
      const page = await fetch(`${base}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
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

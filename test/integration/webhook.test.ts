// The admission webhook on the real API server: the gateway runs in-process, its local webhook
// configurations point the API server at https://127.0.0.1:<port>, scoped by a namespace label only
// this file's namespaces carry (other files run in parallel on the same cluster).
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import tls from 'node:tls';
import {
  AppsV1Api,
  CustomObjectsApi,
  EventsV1Api,
  type EventsV1Event,
  loadAllYaml,
  PatchStrategy,
  ResourceV1Api,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { DAEMONSET_ANNOTATION } from '../../src/rules/daemonset.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { createLogger } from '../../src/server/log.js';
import { webhookComponent } from '../../src/webhook/component.js';
import { NOT_STEERED_ANNOTATION, OPT_OUT_LABEL, OPT_OUT_VALUE } from '../../src/webhook/gate.js';
import { RULES_ANNOTATION } from '../../src/webhook/mutate.js';
import { podReview } from '../../src/webhook/testing.js';
import { BREAK_GLASS_LABEL } from '../../src/webhook/validate.js';
import { createFakeNodes, deleteFakeNodes, describeApiError } from '../cluster/nodes.js';
import { applyLocalWebhooks, deleteLocalWebhooks, type LocalWebhooks } from '../cluster/webhooks.js';
import {
  coreApi,
  createNamespace,
  kubeConfig,
  pkiPath,
  type TestNamespace,
  uniqueName,
  waitFor,
} from './context.js';

const TEST_LABEL = 'nodeload.example.com/test-webhook';
const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const scope = uniqueName('whk');
const nodeA = uniqueName('whk-a');
const nodeB = uniqueName('whk-b');
const RULE = 'only-a';

type LogLine = { level: number; msg: string; component?: string; [k: string]: unknown };
const logLines: LogLine[] = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
    cb();
  },
});

let gateway: Gateway | undefined;
let webhooks: LocalWebhooks | undefined;
let certDir = '';
let ruled: TestNamespace;
let unruled: TestNamespace;
let rulesNs: TestNamespace;
const namespaces: TestNamespace[] = [];

function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      inject('kubectlPath'),
      [`--kubeconfig=${inject('kubeconfig')}`, ...args],
      { timeout: 30_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

async function kubectlCreatePod(namespace: string, pod: V1Pod): Promise<V1Pod> {
  const r = await kubectl(['create', '-n', namespace, '-o', 'json', '-f', '-'], JSON.stringify(pod));
  if (r.code !== 0) throw new Error(`kubectl create pod failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as V1Pod;
}

function podManifest(
  name: string,
  spec: Partial<NonNullable<V1Pod['spec']>> = {},
  metadata: V1Pod['metadata'] = {},
): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'web' }, ...metadata },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }], ...spec },
  };
}

const pinAt = (n: string) => ({ matchFields: [{ key: 'metadata.name', operator: 'In', values: [n] }] });

async function labelForWebhooks(name: string, extra: Record<string, string> = {}): Promise<void> {
  await coreApi().patchNamespace(
    { name, body: { metadata: { labels: { [TEST_LABEL]: scope, ...extra } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function createRule(namespace: string, name: string, allowedNodes: string[]): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      plural: RULE_PLURAL,
      namespace,
      body: {
        apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
        kind: 'NodeLoadRule',
        metadata: { name },
        spec: { allowedNodes },
      },
    });
}

async function podEvents(namespace: string, pod: string): Promise<EventsV1Event[]> {
  const list = await kubeConfig().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace });
  return list.items.filter((e) => e.regarding?.kind === 'Pod' && e.regarding?.name === pod);
}

/** Whether a dry-run pod in the namespace comes back steered (the webhook configurations act there). */
async function dryRunSteered(
  namespace: string,
  labels: Record<string, string> = { app: 'web' },
): Promise<boolean> {
  const p = await coreApi().createNamespacedPod({
    namespace,
    body: podManifest('probe', {}, { labels }),
    dryRun: 'All',
  });
  return p.spec?.schedulerName === 'nodeload-scheduler';
}

/** /mutate requests this gateway has answered (any result). */
async function mutateCalls(): Promise<number> {
  const metric = (gateway as Gateway).registry.getSingleMetric('nodeload_admission_requests_total');
  const values = (await metric?.get())?.values ?? [];
  return values.filter((v) => v.labels.route === 'mutate').reduce((sum, v) => sum + v.value, 0);
}

async function breakGlassCount(): Promise<number> {
  const metric = (gateway as Gateway).registry.getSingleMetric('nodeload_admission_break_glass_total');
  return (await metric?.get())?.values[0]?.value ?? 0;
}

const pvcVolume = { name: 'data', persistentVolumeClaim: { claimName: 'data' } };
/** DRA: the one part of kube-scheduler's contract the webhook keeps pods away from nodeload for. */
const gpuClaims = { resourceClaims: [{ name: 'gpu', resourceClaimName: 'gpu' }] };

async function startWebhookGateway(): Promise<Gateway> {
  const config = parseConfig({
    kubeconfig: inject('kubeconfig'),
    httpPort: 0,
    httpsPort: 0,
    bindAddress: '127.0.0.1',
    tlsCertFile: path.join(certDir, 'tls.crt'),
    tlsKeyFile: path.join(certDir, 'tls.key'),
    leaderElect: false,
    logLevel: 'info',
  });
  const gw = await startGateway(config, [webhookComponent], { log: createLogger('debug', sink) });
  await gw.cache.ready();
  return gw;
}

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd }, (err, _stdout, stderr) =>
      err ? reject(new Error(stderr || err.message)) : resolve(),
    );
  });
}

/** A second serving cert from the cluster CA, as a rotation would issue it. */
async function issueServingCert(dir: string): Promise<{ cert: string; key: string; serial: string }> {
  await writeFile(
    path.join(dir, 'ext.cnf'),
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n',
  );
  await openssl(
    ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
      '-subj',
      '/CN=nodeload-rotated',
      '-keyout',
      'next.key',
      '-out',
      'next.csr',
    ]),
    dir,
  );
  await openssl(
    ['x509', '-req', '-in', 'next.csr', '-CA', pkiPath('ca.crt'), '-CAkey', pkiPath('ca.key')].concat([
      '-set_serial',
      '0x1234abcd',
      '-days',
      '2',
      '-sha256',
      '-extfile',
      'ext.cnf',
      '-out',
      'next.crt',
    ]),
    dir,
  );
  const serial = new X509Certificate(await readFile(path.join(dir, 'next.crt'))).serialNumber;
  return { cert: path.join(dir, 'next.crt'), key: path.join(dir, 'next.key'), serial };
}

function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca }, () => {
      const serial = socket.getPeerX509Certificate()?.serialNumber ?? '';
      socket.end();
      resolve(serial);
    });
    socket.once('error', reject);
  });
}

/** POST /mutate on a fresh TLS connection (so each call handshakes with the current cert). */
function directReview(port: number, ca: string, uid: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(podReview(uid, podManifest('direct'), { namespace: ruled.name }));
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mutate',
        method: 'POST',
        ca,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  const kc = kubeConfig();
  await ensureCrd(kc, createLogger('silent'));
  await createFakeNodes(inject('kubeconfig'), [
    { name: nodeA, cpu: 4, memory: '8Gi', labels: { tier: 'gold' } },
    { name: nodeB, cpu: 4, memory: '8Gi', labels: { tier: 'silver' } },
  ]);
  [ruled, unruled, rulesNs] = await Promise.all([
    createNamespace('whk-ruled'),
    createNamespace('whk-unruled'),
    createNamespace('whk-rules'),
  ]);
  namespaces.push(ruled, unruled, rulesNs);
  await Promise.all(namespaces.map((ns) => labelForWebhooks(ns.name)));
  await createRule(ruled.name, RULE, [nodeA]);

  certDir = await mkdtemp(path.join(tmpdir(), 'nodeload-whk-'));
  await copyFile(pkiPath('serving.crt'), path.join(certDir, 'tls.crt'));
  await copyFile(pkiPath('serving.key'), path.join(certDir, 'tls.key'));
  gateway = await startWebhookGateway();
  const gw = gateway;
  await waitFor(
    'the rule and both nodes in the gateway cache',
    () =>
      gw.cache.rules.has(`${ruled.name}/${RULE}`) && gw.cache.nodes.has(nodeA) && gw.cache.nodes.has(nodeB),
  );

  webhooks = await applyLocalWebhooks(kc, {
    port: gw.httpsPort ?? 0,
    caPem: await readFile(pkiPath('ca.crt'), 'utf8'),
    nameSuffix: scope,
    namespaceSelector: { matchLabels: { [TEST_LABEL]: scope } },
  });
  // The API server picks up new webhook configurations through an informer: wait until both act.
  const core = coreApi();
  await waitFor('the mutating webhook to be called', async () => {
    const p = await core.createNamespacedPod({
      namespace: ruled.name,
      body: podManifest('probe'),
      dryRun: 'All',
    });
    return p.spec?.schedulerName === 'nodeload-scheduler';
  });
  await waitFor('the validating webhook to be called', async () => {
    try {
      await core.createNamespacedPod({
        namespace: ruled.name,
        body: podManifest('probe', { nodeName: nodeB }),
        dryRun: 'All',
      });
      return false;
    } catch (err) {
      return describeApiError(err).includes(RULE);
    }
  });
});

afterAll(async () => {
  const kc = kubeConfig();
  if (webhooks) await deleteLocalWebhooks(kc, webhooks);
  await gateway?.stop();
  await deleteFakeNodes(inject('kubeconfig'), [nodeA, nodeB]);
  await Promise.all(namespaces.map((ns) => ns.dispose()));
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

describe('admission webhook on the API server', () => {
  it('a pod created with kubectl in a ruled namespace comes back with the scheduler name and the affinity', async () => {
    const pod = await kubectlCreatePod(ruled.name, podManifest('web'));
    expect(pod.spec?.schedulerName).toBe('nodeload-scheduler');
    expect(pod.spec?.affinity?.nodeAffinity?.[REQUIRED]?.nodeSelectorTerms).toEqual([pinAt(nodeA)]);
    expect(pod.metadata?.annotations?.[RULES_ANNOTATION]).toBe(RULE);

    const line = logLines.find((l) => l.msg === 'pod steered to its rules' && l.pod === `${ruled.name}/web`);
    expect(line).toMatchObject({
      component: 'webhook',
      rules: [RULE],
      changes: ['schedulerName', 'affinity', 'annotation'],
    });
  });

  it('merges with the pod’s own terms, and a pod already in that shape is left as it is', async () => {
    const own = [
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold'] }] },
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['silver'] }] },
    ];
    const pod = await kubectlCreatePod(
      ruled.name,
      podManifest('own-affinity', { affinity: { nodeAffinity: { [REQUIRED]: { nodeSelectorTerms: own } } } }),
    );
    const terms = pod.spec?.affinity?.nodeAffinity?.[REQUIRED]?.nodeSelectorTerms;
    expect(terms).toEqual(own.map((t) => ({ ...t, ...pinAt(nodeA) })));

    // Re-creating the mutated pod (what a reinvocation sees) must change nothing.
    const again = await kubectlCreatePod(
      ruled.name,
      podManifest('own-affinity-again', pod.spec, {
        labels: pod.metadata?.labels,
        annotations: pod.metadata?.annotations,
      }),
    );
    expect(again.spec?.affinity).toEqual(pod.spec?.affinity);
    expect(again.spec?.schedulerName).toBe('nodeload-scheduler');
    expect(
      logLines.some(
        (l) => l.msg === 'pod steered to its rules' && l.pod === `${ruled.name}/own-affinity-again`,
      ),
    ).toBe(false);
  });

  it('denies a pod pinned to a forbidden node, naming the rule; a pod pinned to an allowed node is created', async () => {
    const denied = await kubectl(
      ['create', '-n', ruled.name, '-f', '-'],
      JSON.stringify(podManifest('pinned-b', { nodeName: nodeB })),
    );
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('denied the request');
    expect(denied.stderr).toContain(`NodeLoadRule "${RULE}" does not allow node "${nodeB}"`);

    const allowed = await kubectlCreatePod(ruled.name, podManifest('pinned-a', { nodeName: nodeA }));
    expect(allowed.spec?.nodeName).toBe(nodeA);
  });

  it('break-glass: a labelled pinned pod is created despite its rule, with a warning; the policy keeps the label from users without the permission', async () => {
    const glass = (name: string) =>
      JSON.stringify(
        podManifest(name, { nodeName: nodeB }, { labels: { app: 'web', [BREAK_GLASS_LABEL]: 'true' } }),
      );
    // The shipped policy, bound here to this file's namespaces only (other files share the cluster).
    const [policy] = loadAllYaml(
      await readFile(new URL('../../manifests/webhook/break-glass-policy.yaml', import.meta.url), 'utf8'),
    );
    const binding = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `nodeload-break-glass-${scope}` },
      spec: {
        policyName: 'nodeload-break-glass',
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { [TEST_LABEL]: scope } } },
      },
    };
    const grant = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'alice-edit', namespace: ruled.name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    };
    for (const doc of [policy, binding, grant]) {
      const r = await kubectl(['create', '-f', '-'], JSON.stringify(doc));
      expect(r.code, r.stderr).toBe(0);
    }
    try {
      // alice may create pods in the namespace, but not break glass (once the policy is in force).
      const refused = await waitFor('the break-glass policy to refuse alice', async () => {
        const r = await kubectl(
          ['--as=alice', 'create', '--dry-run=server', '-n', ruled.name, '-f', '-'],
          glass('alice'),
        );
        return r.code !== 0 && r.stderr;
      });
      expect(refused).toContain(
        'the label nodeload.example.com/break-glass needs the permission to use breakglass.nodeload.example.com; user alice has none',
      );

      // (Dry runs before the policy was in force reached the webhook too: count from here.)
      const before = await breakGlassCount();
      const r = await kubectl(['create', '-n', ruled.name, '-o', 'json', '-f', '-'], glass('glass'));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        `Warning: break-glass (${BREAK_GLASS_LABEL}): pinned to "${nodeB}" despite NodeLoadRule "${RULE}"`,
      );
      expect((JSON.parse(r.stdout) as V1Pod).spec?.nodeName).toBe(nodeB);
      expect(
        logLines.find(
          (l) => l.msg === 'pinned pod allowed by break-glass' && l.pod === `${ruled.name}/glass`,
        ),
      ).toMatchObject({ level: 40, node: nodeB, rules: [RULE], dryRun: false });
      expect(await breakGlassCount()).toBe(before + 1);
    } finally {
      await kubectl(['delete', 'validatingadmissionpolicybinding', binding.metadata.name]);
      await kubectl(['delete', 'validatingadmissionpolicy', 'nodeload-break-glass']);
    }
  });

  it('leaves pods in namespaces without rules untouched', async () => {
    const pod = await kubectlCreatePod(unruled.name, podManifest('web'));
    expect(pod.spec?.schedulerName).toBe('default-scheduler');
    expect(pod.spec?.affinity).toBeUndefined();
    expect(pod.metadata?.annotations?.[RULES_ANNOTATION]).toBeUndefined();
    const pinned = await kubectlCreatePod(unruled.name, podManifest('pinned', { nodeName: nodeB }));
    expect(pinned.spec?.nodeName).toBe(nodeB);
  });

  it('DaemonSet pods: the controller’s are vouched for, not steered; a pod naming a DaemonSet itself is steered and may not carry the annotation', async () => {
    const core = coreApi();
    const daemonSet = (name: string, schedulerName: string) =>
      kubeConfig()
        .makeApiClient(AppsV1Api)
        .createNamespacedDaemonSet({
          namespace: ruled.name,
          body: {
            metadata: { name },
            spec: {
              selector: { matchLabels: { ds: name } },
              template: {
                metadata: { labels: { ds: name, app: 'web' } },
                spec: {
                  schedulerName,
                  nodeSelector: { 'kubernetes.io/hostname': nodeB },
                  containers: [{ name: 'agent', image: 'registry.invalid/agent:1' }],
                },
              },
            },
          },
        });
    const podOf = (ds: string) =>
      waitFor(`the DaemonSet controller to create a pod for ${ds}`, async () => {
        const pods = await core.listNamespacedPod({ namespace: ruled.name, labelSelector: `ds=${ds}` });
        return pods.items[0];
      });

    // For the default scheduler: the matchCondition keeps the webhook out of it altogether.
    const before = await mutateCalls();
    await daemonSet('plain-agent', 'default-scheduler');
    const plain = await podOf('plain-agent');
    expect(plain.spec?.schedulerName).toBe('default-scheduler');
    expect(plain.metadata?.annotations ?? {}).toEqual({});
    expect(await mutateCalls()).toBe(before);

    // For nodeload's scheduler: vouched for (the exemption), not steered (no rule affinity).
    const ours = await daemonSet('our-agent', 'nodeload-scheduler');
    const vouched = await podOf('our-agent');
    expect(vouched.metadata?.annotations).toEqual({ [DAEMONSET_ANNOTATION]: 'true' });
    expect(vouched.spec?.affinity?.nodeAffinity?.[REQUIRED]?.nodeSelectorTerms).toEqual([pinAt(nodeB)]);

    // The same owner reference written by someone else: steered like any pod.
    const owner = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      name: 'our-agent',
      uid: ours.metadata?.uid ?? '',
      controller: true,
    };
    const claimed = await kubectl(
      ['create', '-n', ruled.name, '-o', 'json', '-f', '-'],
      JSON.stringify(podManifest('claims-ds', {}, { labels: { app: 'web' }, ownerReferences: [owner] })),
    );
    expect(claimed.code, claimed.stderr).toBe(0);
    expect(claimed.stderr).toContain('not created by the DaemonSet controller');
    const steered = JSON.parse(claimed.stdout) as V1Pod;
    expect(steered.spec?.schedulerName).toBe('nodeload-scheduler');
    expect(steered.spec?.affinity?.nodeAffinity?.[REQUIRED]?.nodeSelectorTerms).toEqual([pinAt(nodeA)]);
    expect(steered.metadata?.annotations?.[DAEMONSET_ANNOTATION]).toBeUndefined();

    // Nor may anyone but the webhook write the annotation: at creation, or later.
    const forged = await kubectl(
      ['create', '-n', ruled.name, '-f', '-'],
      JSON.stringify(
        podManifest(
          'forged-ds',
          {},
          { ownerReferences: [owner], annotations: { [DAEMONSET_ANNOTATION]: 'true' } },
        ),
      ),
    );
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toContain('daemonset-pods.nodeload.example.com');
    expect(forged.stderr).toContain('may not set it');
    const annotated = await kubectl([
      'annotate',
      '-n',
      ruled.name,
      'pod',
      'claims-ds',
      `${DAEMONSET_ANNOTATION}=true`,
    ]);
    expect(annotated.code).not.toBe(0);
    expect(annotated.stderr).toContain('cannot be added or changed after the pod is created');
  });

  it('warns about NodeLoadRules naming missing or duplicate nodes', async () => {
    const ghost = uniqueName('ghost');
    const rule = {
      apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
      kind: 'NodeLoadRule',
      metadata: { name: 'ghosts' },
      spec: { allowedNodes: [ghost, ghost] },
    };
    const r = await kubectl(['create', '-n', rulesNs.name, '-f', '-'], JSON.stringify(rule));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Warning: spec.allowedNodes: "${ghost}" is listed 2 times`);
    expect(r.stderr).toContain(
      `Warning: spec.allowedNodes: no node named "${ghost}" (none of the listed nodes exists)`,
    );
  });

  it('rotating the serving cert files drops no request', async () => {
    const gw = gateway as Gateway;
    const port = gw.httpsPort ?? 0;
    const ca = await readFile(pkiPath('ca.crt'), 'utf8');
    const staging = await mkdtemp(path.join(tmpdir(), 'nodeload-whk-next-'));
    const next = await issueServingCert(staging);
    expect(await servedSerial(port, ca)).not.toBe(next.serial);

    const failures: string[] = [];
    let viaApiServer = 0;
    let direct = 0;
    let done = false;
    const core = coreApi();
    const apiServerLoop = async (worker: number) => {
      for (let i = 0; !done; i++) {
        try {
          const p = await core.createNamespacedPod({
            namespace: ruled.name,
            body: podManifest(`rot-${worker}-${i}`),
            dryRun: 'All',
          });
          if (p.spec?.schedulerName !== 'nodeload-scheduler')
            failures.push(`api server: pod not mutated (${p.spec?.schedulerName})`);
          viaApiServer++;
        } catch (err) {
          failures.push(`api server: ${describeApiError(err)}`);
        }
      }
    };
    const directLoop = async (worker: number) => {
      for (let i = 0; !done; i++) {
        try {
          const r = await directReview(port, ca, `rot-${worker}-${i}`);
          if (r.status !== 200 || !r.body.includes(`"uid":"rot-${worker}-${i}"`))
            failures.push(`direct: ${r.status} ${r.body.slice(0, 200)}`);
          direct++;
        } catch (err) {
          failures.push(`direct: ${(err as Error).message}`);
        }
      }
    };
    const loops = [0, 1, 2].map(apiServerLoop).concat([0, 1].map(directLoop));

    await waitFor('some requests before the swap', () => viaApiServer >= 5 && direct >= 5);
    // Key first, then cert, each by rename as a secret-volume or cert-manager update replaces files.
    await rename(next.key, path.join(certDir, 'tls.key'));
    await rename(next.cert, path.join(certDir, 'tls.crt'));
    await waitFor(
      'the gateway to serve the rotated cert',
      async () => (await servedSerial(port, ca)) === next.serial,
      {
        timeoutMs: 20_000,
      },
    );
    const after = { viaApiServer, direct };
    await waitFor(
      'requests after the swap',
      () => viaApiServer >= after.viaApiServer + 5 && direct >= after.direct + 5,
    );
    done = true;
    await Promise.all(loops);
    await rm(staging, { recursive: true, force: true });

    expect(failures).toEqual([]);
    expect(viaApiServer).toBeGreaterThanOrEqual(10);
    expect(direct).toBeGreaterThanOrEqual(10);
  });

  it('a pod with a PVC in a ruled namespace is steered: nodeload binds volumes', async () => {
    const pod = await kubectlCreatePod(ruled.name, podManifest('db-pvc', { volumes: [pvcVolume] }));
    expect(pod.spec?.schedulerName).toBe('nodeload-scheduler');
    expect(pod.metadata?.annotations?.[NOT_STEERED_ANNOTATION]).toBeUndefined();
  });

  it('a pod with resource claims in a ruled namespace keeps default-scheduler, says why, and gets a NotSteered Event', async () => {
    const pod = await kubectlCreatePod(ruled.name, podManifest('db-0', gpuClaims));
    const why = 'DynamicResources: pod uses ResourceClaim "gpu"';
    expect(pod.spec?.schedulerName).toBe('default-scheduler');
    expect(pod.metadata?.annotations?.[NOT_STEERED_ANNOTATION]).toBe(why);
    // The rule's node restriction still holds (kube-scheduler honours it); only its load limits do not.
    expect(pod.spec?.affinity?.nodeAffinity?.[REQUIRED]?.nodeSelectorTerms).toEqual([pinAt(nodeA)]);
    expect(pod.metadata?.annotations?.[RULES_ANNOTATION]).toBe(RULE);

    const [event] = await waitFor('the NotSteered Event on the pod', async () => {
      const events = await podEvents(ruled.name, 'db-0');
      return events.length > 0 ? events : undefined;
    });
    expect(event).toMatchObject({
      reason: 'NotSteered',
      type: 'Normal',
      action: 'Admit',
      reportingController: 'nodeload-webhook',
      regarding: { kind: 'Pod', namespace: ruled.name, name: 'db-0', uid: pod.metadata?.uid },
    });
    expect(event?.note).toContain(why);
    expect(event?.note).toContain('scheduler "default-scheduler" kept');
    // kubectl describe shows it (it matches Events to the pod by UID).
    const described = await kubectl(['describe', 'pod', '-n', ruled.name, 'db-0']);
    expect(described.stdout).toMatch(/Normal\s+NotSteered/);
  });

  it('a pod asking for an extended resource a DeviceClass serves (DRA) keeps its scheduler and says which class', async () => {
    // Cluster-scoped: named for this run. One class names the resource explicitly; every class also
    // serves deviceclass.resource.kubernetes.io/<its name>.
    const resource = `${scope}.example.com/gpu`;
    const className = `${scope}-gpu`;
    const dra = kubeConfig().makeApiClient(ResourceV1Api);
    await dra.createDeviceClass({
      body: {
        apiVersion: 'resource.k8s.io/v1',
        kind: 'DeviceClass',
        metadata: { name: className },
        spec: { extendedResourceName: resource },
      },
    });
    try {
      const gw = gateway as Gateway;
      await waitFor('the DeviceClass in the gateway cache', () => gw.cache.deviceClasses.has(className));
      const asking = (name: string, res: string) =>
        podManifest(name, {
          containers: [
            { name: 'app', image: 'registry.invalid/app:1', resources: { limits: { [res]: '1' } } },
          ],
        });
      const explicit = await kubectlCreatePod(ruled.name, asking('dra-explicit', resource));
      expect(explicit.spec?.schedulerName).toBe('default-scheduler');
      expect(explicit.metadata?.annotations?.[NOT_STEERED_ANNOTATION]).toBe(
        `DynamicResources: pod requests extended resource "${resource}" (DeviceClass "${className}") served by Dynamic Resource Allocation`,
      );
      const implicit = await kubectlCreatePod(
        ruled.name,
        asking('dra-implicit', `deviceclass.resource.kubernetes.io/${className}`),
      );
      expect(implicit.spec?.schedulerName).toBe('default-scheduler');
      expect(implicit.metadata?.annotations?.[NOT_STEERED_ANNOTATION]).toContain(
        `(DeviceClass "${className}")`,
      );
      // A device-plugin resource no class serves is nodeload's to place.
      const plain = await kubectlCreatePod(ruled.name, asking('device-plugin', `${scope}.example.com/fpga`));
      expect(plain.spec?.schedulerName).toBe('nodeload-scheduler');
      expect(plain.metadata?.annotations?.[NOT_STEERED_ANNOTATION]).toBeUndefined();
    } finally {
      await dra.deleteDeviceClass({ name: className }).catch(() => undefined);
    }
  });

  it('a generateName pod with resource claims gets its Event once the API server names it', async () => {
    const manifest = podManifest('', gpuClaims);
    manifest.metadata = { generateName: 'scratch-', labels: { app: 'web' } };
    const pod = await coreApi().createNamespacedPod({ namespace: ruled.name, body: manifest });
    const name = pod.metadata?.name ?? '';
    expect(pod.spec?.schedulerName).toBe('default-scheduler');
    expect(pod.metadata?.annotations?.[NOT_STEERED_ANNOTATION]).toBe(
      'DynamicResources: pod uses ResourceClaim "gpu"',
    );
    const [event] = await waitFor('the NotSteered Event on the generated pod', async () => {
      const events = await podEvents(ruled.name, name);
      return events.length > 0 ? events : undefined;
    });
    expect(event?.regarding?.uid).toBe(pod.metadata?.uid);
  });

  it('a pod labelled with the opt-out keeps its scheduler and gets nothing from the webhook', async () => {
    const before = await mutateCalls();
    const pod = await kubectlCreatePod(
      ruled.name,
      podManifest('opted-out', {}, { labels: { app: 'web', [OPT_OUT_LABEL]: OPT_OUT_VALUE } }),
    );
    expect(pod.spec?.schedulerName).toBe('default-scheduler');
    expect(pod.spec?.affinity).toBeUndefined();
    expect(pod.metadata?.annotations?.[RULES_ANNOTATION]).toBeUndefined();
    // The objectSelector kept the API server from calling us at all.
    expect(await mutateCalls()).toBe(before);
    // Same pod without the label in the same namespace: steered.
    expect(await dryRunSteered(ruled.name)).toBe(true);
  });

  it('a namespace labelled with the opt-out is not steered, even with a rule', async () => {
    const optOut = await createNamespace('whk-optout');
    namespaces.push(optOut);
    await labelForWebhooks(optOut.name);
    await createRule(optOut.name, 'everything-on-a', [nodeA]);
    const gw = gateway as Gateway;
    await waitFor('the rule in the gateway cache', () =>
      gw.cache.rules.has(`${optOut.name}/everything-on-a`),
    );
    await waitFor('pods of the namespace to be steered', () => dryRunSteered(optOut.name));

    await labelForWebhooks(optOut.name, { [OPT_OUT_LABEL]: OPT_OUT_VALUE });
    // The gateway's own check (its namespace cache) may act before the API server's namespaceSelector
    // does; wait until the API server no longer calls us at all.
    await waitFor('the namespaceSelector to act', async () => {
      const before = await mutateCalls();
      return !(await dryRunSteered(optOut.name)) && (await mutateCalls()) === before;
    });
    const before = await mutateCalls();
    const pod = await kubectlCreatePod(optOut.name, podManifest('web', gpuClaims));
    expect(pod.spec?.schedulerName).toBe('default-scheduler');
    expect(pod.spec?.affinity).toBeUndefined();
    expect(pod.metadata?.annotations ?? {}).toEqual({});
    expect(await mutateCalls()).toBe(before);
  });

  // Last: stops the gateway.
  it('with the gateway down, the API server keeps working: pods are created unsteered, pinned pods are refused', async () => {
    await gateway?.stop();
    const pod = await kubectlCreatePod(ruled.name, podManifest('while-down'));
    expect(pod.spec?.schedulerName).toBe('default-scheduler');
    expect(pod.metadata?.annotations?.[RULES_ANNOTATION]).toBeUndefined();

    // Validation holds (failurePolicy Fail): a pinned pod cannot slip past its rules meanwhile.
    const pinned = await kubectl(
      ['create', '-n', ruled.name, '-f', '-'],
      JSON.stringify(podManifest('pinned-down', { nodeName: nodeA })),
    );
    expect(pinned.code).not.toBe(0);
    expect(pinned.stderr).toMatch(/failed calling webhook "pinned-pods\.nodeload\.example\.com"/);
    // Break-glass still works: its webhook fails open.
    const glass = await kubectlCreatePod(
      ruled.name,
      podManifest('glass-down', { nodeName: nodeB }, { labels: { app: 'web', [BREAK_GLASS_LABEL]: 'true' } }),
    );
    expect(glass.spec?.nodeName).toBe(nodeB);
    // Ordinary pods never call the validating webhook (matchConditions), so they are unaffected.
    expect(logLines.filter((l) => l.level >= 50)).toEqual([]);
  });
});

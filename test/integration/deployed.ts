/**
 * Running the gateway the way the Deployment does, for the deploy tests: the objects of a rendering
 * (test/cluster/deploy.ts) applied with kubectl as the cluster admin would, a token for the rendered
 * ServiceAccount from TokenRequest, and the gateway process started from src/main.ts with the
 * Deployment's container args and environment, under that identity only — through a kubeconfig file
 * holding the token, or through the in-cluster configuration a pod gets (serviceAccountMount).
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import { afterAll, expect } from 'vitest';
import { SERVICEACCOUNT_ROOT_ENV } from '../../src/cluster/kubeconfig.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION } from '../../src/rules/types.js';
import { waitForApiServiceAvailable } from '../cluster/apiservice.js';
import { freePorts } from '../cluster/controlplane.js';
import { type GatewayContainer, type KubeObject, withFlag } from '../cluster/deploy.js';
import { coreApi, kubeConfig, kubectl, provided, waitFor, withNamespace } from './context.js';
import { collectOutput, spawnGateway } from './gateway-process.js';

export interface KubectlResult {
  stdout: string;
  stderr: string;
}

/** kubectl as the cluster admin; resolves with both streams (warnings come on stderr), rejects on failure. */
export function kubectlRun(args: string[], input?: string, timeoutMs = 60_000): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      provided('kubectlPath'),
      [`--kubeconfig=${provided('kubeconfig')}`, ...args],
      { timeout: timeoutMs, maxBuffer: 32 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`kubectl ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
        else resolve({ stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

export const toYaml = (objects: KubeObject[]): string =>
  objects.map((o) => dump(o, { noRefs: true, lineWidth: -1 })).join('---\n');

/**
 * An object with a fixed cluster-wide name (the APIService, the CRD) that another file created or
 * deleted between kubectl apply's read and its write: it then creates what exists, or patches what is gone.
 */
const RACED_FIXED_NAME = /\(AlreadyExists\)|\(NotFound\)/;

/**
 * `kubectl apply` of the objects (server-side dry run with `dryRun`). A dry run changes nothing, so one
 * that lost a race with another file over a fixed-name object (RACED_FIXED_NAME) is run again.
 */
export async function applyObjects(
  objects: KubeObject[],
  opts: { dryRun?: boolean } = {},
): Promise<KubectlResult> {
  const args = ['apply', ...(opts.dryRun ? ['--dry-run=server'] : []), '-f', '-'];
  for (let attempt = 1; ; attempt++) {
    try {
      return await kubectlRun(args, toYaml(objects));
    } catch (err) {
      if (!opts.dryRun || attempt >= 3 || !RACED_FIXED_NAME.test(String(err))) throw err;
    }
  }
}

/** Deletes the objects, not waiting for finalizers; missing ones are fine. */
export async function deleteObjects(objects: KubeObject[]): Promise<void> {
  if (objects.length === 0) return;
  await kubectlRun(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], toYaml(objects));
}

/** A token of the ServiceAccount from TokenRequest (kubectl create token), valid for an hour. */
async function serviceAccountToken(namespace: string, serviceAccount: string): Promise<string> {
  const { stdout } = await kubectlRun([
    'create',
    'token',
    serviceAccount,
    '-n',
    namespace,
    '--duration=3600s',
  ]);
  return stdout.trim();
}

/** A kubeconfig for the ServiceAccount, holding a token from TokenRequest (kubectl create token). */
export async function serviceAccountKubeconfig(
  namespace: string,
  serviceAccount: string,
  dir: string,
): Promise<string> {
  const token = await serviceAccountToken(namespace, serviceAccount);
  const file = path.join(dir, `${namespace}-${serviceAccount}.kubeconfig`);
  const user = `system:serviceaccount:${namespace}:${serviceAccount}`;
  writeFileSync(
    file,
    dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'local',
          cluster: {
            server: provided('apiserverUrl'),
            'certificate-authority': path.join(provided('pkiDir'), 'ca.crt'),
          },
        },
      ],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: 'sa', context: { cluster: 'local', user } }],
      'current-context': 'sa',
    }),
    { mode: 0o600 },
  );
  return file;
}

/** Where the kubelet mounts a pod's ServiceAccount volume. */
const SERVICEACCOUNT_MOUNT = 'var/run/secrets/kubernetes.io/serviceaccount';

/**
 * What the kubelet mounts in a pod of the ServiceAccount, written below a folder standing for the pod's
 * root (returned; the gateway reads it through NODELOAD_SERVICEACCOUNT_ROOT): `token` from TokenRequest,
 * `ca.crt` from the ConfigMap kube-root-ca.crt that kube-controller-manager publishes in every
 * namespace (the projected volume's source), `namespace`.
 */
export async function serviceAccountMount(
  namespace: string,
  serviceAccount: string,
  dir: string,
): Promise<string> {
  const root = path.join(dir, `${namespace}-${serviceAccount}-root`);
  const mount = path.join(root, SERVICEACCOUNT_MOUNT);
  mkdirSync(mount, { recursive: true });
  const ca = await waitFor(`ConfigMap ${namespace}/kube-root-ca.crt published`, async () => {
    const cm = await coreApi().readNamespacedConfigMap({ namespace, name: 'kube-root-ca.crt' });
    return cm.data?.['ca.crt'];
  });
  writeFileSync(path.join(mount, 'token'), await serviceAccountToken(namespace, serviceAccount), {
    mode: 0o600,
  });
  writeFileSync(path.join(mount, 'ca.crt'), ca);
  writeFileSync(path.join(mount, 'namespace'), namespace);
  return root;
}

/**
 * How the gateway reaches the API server: `--kubeconfig`, or as in a pod, KUBERNETES_SERVICE_HOST/PORT
 * and the files of serviceAccountMount (no --kubeconfig, no KUBECONFIG).
 */
type ApiServerAccess = { kubeconfig: string } | { serviceAccountRoot: string };

export interface DeployedGateway {
  child: ChildProcess;
  output(): string;
  httpPort: number;
  httpsPort: number;
  /** NODELOAD_IDENTITY: the pod name the Deployment's fieldRef would give. */
  identity: string;
  args: string[];
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

const running = new Set<ChildProcess>();
// Registered when a test file imports this module: a test that times out never reaches its own stop(),
// and a worker ended by signal never emits 'exit'.
afterAll(() => {
  for (const c of running) if (c.exitCode === null) c.kill('SIGKILL');
});
process.once('exit', () => {
  for (const c of running) if (c.exitCode === null) c.kill('SIGKILL');
});

/**
 * Starts src/main.ts (spawnGateway) with the container's args and environment, on loopback ports, reaching the
 * API server as `opts` says (ApiServerAccess). `flags` replaces or adds flags (`--tls-cert-file`, a
 * test's scheduler name...): the Deployment's are kept otherwise.
 */
export async function startDeployedGateway(
  container: GatewayContainer,
  opts: ApiServerAccess & {
    flags?: Record<string, string>;
    /** Chosen beforehand when objects must name the HTTPS port (webhooks, APIService); free ones otherwise. */
    ports?: { http: number; https: number };
    /** The pod's name (NODELOAD_IDENTITY); `<namespace>-gateway-0` by default. */
    identity?: string;
  },
): Promise<DeployedGateway> {
  const [httpPort = 0, httpsPort = 0] = opts.ports ? [opts.ports.http, opts.ports.https] : await freePorts(2);
  const identity = opts.identity ?? `${container.namespace}-gateway-0`;
  let args = [...container.args];
  const flags: Record<string, string> = {
    ...('kubeconfig' in opts ? { kubeconfig: opts.kubeconfig } : {}),
    'http-port': String(httpPort),
    'https-port': String(httpsPort),
    'bind-address': '127.0.0.1',
    ...opts.flags,
  };
  for (const [flag, value] of Object.entries(flags)) args = withFlag(args, flag, value);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('NODELOAD_') || k === 'KUBECONFIG') delete env[k];
  for (const [k, v] of Object.entries(container.env)) {
    if (v === 'fieldRef:metadata.name') env[k] = identity;
    else if (v.startsWith('fieldRef:')) throw new Error(`env ${k}: ${v} is not emulated`);
    else env[k] = v;
  }
  if ('serviceAccountRoot' in opts) {
    // The kubelet sets these in every container (enableServiceLinks: false or not); the API server's
    // serving certificate holds 127.0.0.1.
    env['KUBERNETES_SERVICE_HOST'] = '127.0.0.1';
    env['KUBERNETES_SERVICE_PORT'] = new URL(provided('apiserverUrl')).port;
    env[SERVICEACCOUNT_ROOT_ENV] = opts.serviceAccountRoot;
  }
  const child = spawnGateway(args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const output = collectOutput(child);
  return {
    child,
    output,
    httpPort,
    httpsPort,
    identity,
    args,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      running.delete(child);
      return code;
    },
  };
}

/** A temporary folder removed when the process exits. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * What the API server refused the gateway, from its log: "<component>: cannot <verb> <resource>" per
 * refusal (the whole line, cut short, when the message has another shape).
 */
export function permissionErrors(log: string): string[] {
  return log
    .split('\n')
    .filter((l) => /forbidden|HTTP[- ]Code: 403|"code":403/i.test(l))
    .map((l) => {
      const component = /"component":"([^"]+)"/.exec(l)?.[1] ?? '?';
      const m = /cannot (\S+) resource \\*"([^"\\]+)\\*"(?: in API group \\*"([^"\\]*)\\*")?/.exec(l);
      return m ? `${component}: cannot ${m[1]} ${m[2]}${m[3] ? `.${m[3]}` : ''}` : l.slice(0, 400);
    });
}

/**
 * The aggregator proxies to the gateway (its APIService Available, through whatever Service and caBundle
 * the test registered) and `kubectl get nodeloads` lists `node`; a failure carries the gateway's log.
 */
export async function expectNodeLoadsServed(gw: DeployedGateway, node: string): Promise<void> {
  expect(gw.child.exitCode, gw.output().slice(-4000)).toBeNull();
  await waitForApiServiceAvailable(kubeConfig(), { timeoutMs: 60_000 }).catch((err: Error) => {
    throw new Error(`${err.message}\n--- gateway log (end) ---\n${gw.output().slice(-4000)}`);
  });
  const listed = await waitFor('kubectl get nodeloads lists the node', async () => {
    const out = await kubectl(['get', 'nodeloads', '-o', 'name']);
    return out.includes(node) ? out : undefined;
  });
  expect(listed).toContain(`nodeload.nodeload.example.com/${node}`);
}

/**
 * The API server calls the mutating webhook: in a new namespace with a rule allowing `node` (its status
 * written by the leader), a pod that names no scheduler is created steered to nodeload-scheduler.
 * Returns the namespace; the pod is `steered`.
 */
export async function expectSteeredPod(prefix: string, node: string): Promise<string> {
  const work = await withNamespace(prefix);
  await createRuleUntilStatus(work, 'steer', { allowedNodes: [node] }, node);
  const pod = await coreApi().createNamespacedPod({
    namespace: work,
    body: {
      metadata: { name: 'steered' },
      spec: {
        containers: [
          { name: 'app', image: 'registry.invalid/app:1', resources: { requests: { cpu: '100m' } } },
        ],
      },
    },
  });
  expect(pod.spec?.schedulerName).toBe('nodeload-scheduler');
  return work;
}
/**
 * Creates a NodeLoadRule as the admin and waits until the leading gateway's operator has written its
 * status with `node` eligible: the operator's write (nodeloadrules/status) went through.
 */
export async function createRuleUntilStatus(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  node: string,
): Promise<void> {
  const custom = kubeConfig().makeApiClient(CustomObjectsApi);
  const rule = { group: RULE_GROUP, version: RULE_VERSION, plural: RULE_PLURAL, namespace };
  await custom.createNamespacedCustomObject({
    ...rule,
    body: { apiVersion: `${RULE_GROUP}/${RULE_VERSION}`, kind: 'NodeLoadRule', metadata: { name }, spec },
  });
  await waitFor(`rule ${namespace}/${name}: status written by the leader`, async () => {
    const r = (await custom.getNamespacedCustomObject({ ...rule, name })) as {
      status?: { eligibleNodes?: string[] };
    };
    return r.status?.eligibleNodes?.includes(node);
  });
}

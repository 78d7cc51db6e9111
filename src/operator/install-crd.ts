/**
 * The NodeLoadRule CRD at gateway start, so the rules informer never starts against a missing type:
 * - `--install-crd=true` (a gateway on a developer's machine, the tests): create or update it from the
 *   gateway's own manifest (ensureCrd), then wait until the API server reports it Established;
 * - `--install-crd=false` (the Deployment and the chart: kustomize and Helm apply the CRD, and the
 *   gateway's RBAC cannot create one): only read it (waitForCrd), saying in the log what is missing
 *   until it is installed, Established and serves the version the code uses.
 */
import {
  ApiextensionsV1Api,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { CRD_NAME, loadCrdManifest } from '../rules/crd.js';
import { RULE_VERSION } from '../rules/types.js';
import { abortableSleep, untilAborted } from '../server/abort.js';
import type { Logger } from '../server/log.js';

function status(err: unknown): number | undefined {
  return typeof (err as { code?: unknown })?.code === 'number' ? (err as { code: number }).code : undefined;
}

/**
 * Why the CRD cannot serve the gateway yet, or undefined when it can: installed, Established, and
 * serving `version`.
 */
export function crdProblem(
  crd: V1CustomResourceDefinition | undefined,
  version: string = RULE_VERSION,
): string | undefined {
  const name = crd?.metadata?.name ?? CRD_NAME;
  if (!crd) {
    return `CRD ${name} is not installed: apply it (kubectl apply -k manifests/crd, or the chart with crd.install=true), or start the gateway with --install-crd=true and RBAC to create it`;
  }
  const served = crd.spec?.versions?.find((v) => v.name === version);
  if (!served?.served) {
    return `CRD ${name} does not serve ${version} (the version this gateway reads): apply the CRD this gateway ships (manifests/crd)`;
  }
  const established = crd.status?.conditions?.find((c) => c.type === 'Established');
  if (established?.status !== 'True') {
    return `CRD ${name} is not Established yet${established?.message ? `: ${established.message}` : ''}`;
  }
  return undefined;
}

/**
 * The object that replaces the installed CRD: the gateway's manifest, keeping the installed object's
 * labels and annotations (Helm's ownership labels and `helm.sh/resource-policy`, kubectl's
 * last-applied configuration) under the manifest's own, so a later `helm upgrade` or `kubectl apply`
 * still recognises it as theirs.
 */
export function crdReplacement(
  current: V1CustomResourceDefinition,
  manifest: V1CustomResourceDefinition,
): V1CustomResourceDefinition {
  const labels = { ...current.metadata?.labels, ...manifest.metadata?.labels };
  const annotations = { ...current.metadata?.annotations, ...manifest.metadata?.annotations };
  return {
    ...manifest,
    metadata: {
      ...manifest.metadata,
      ...(Object.keys(labels).length ? { labels } : {}),
      ...(Object.keys(annotations).length ? { annotations } : {}),
      resourceVersion: current.metadata?.resourceVersion,
    },
  };
}

/**
 * Creates or updates the CRD, then waits until it serves the gateway. `signal` (the gateway's start
 * aborted by SIGTERM) ends the wait with its reason.
 */
export async function ensureCrd(
  kubeConfig: KubeConfig,
  log: Logger,
  timeoutMs = 30_000,
  signal?: AbortSignal,
): Promise<void> {
  const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
  const manifest = loadCrdManifest() as unknown as V1CustomResourceDefinition;
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    try {
      const current = await untilAborted(api.readCustomResourceDefinition({ name: CRD_NAME }), signal);
      await untilAborted(
        api.replaceCustomResourceDefinition({ name: CRD_NAME, body: crdReplacement(current, manifest) }),
        signal,
      );
      log.info({ crd: CRD_NAME }, 'CRD updated');
      break;
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const code = status(err);
      if (code === 404) {
        try {
          await untilAborted(api.createCustomResourceDefinition({ body: manifest }), signal);
          log.info({ crd: CRD_NAME }, 'CRD created');
          break;
        } catch (createErr) {
          if (status(createErr) !== 409) throw createErr;
        }
      } else if (code !== 409 || attempt > 5) {
        throw err;
      }
      // 409: another gateway replaced it between our read and write; read again.
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const problem = crdProblem(
      await untilAborted(api.readCustomResourceDefinition({ name: CRD_NAME }), signal),
    );
    if (!problem) return;
    if (Date.now() > deadline) throw new Error(`${problem} after ${timeoutMs / 1000}s`);
    await abortableSleep(200, signal);
  }
}

/**
 * Waits, reading only, until the CRD serves the gateway (crdProblem). The problem is logged when it
 * first shows, when it changes and every `repeatMs`: in a cluster the startup probe gives up on a pod
 * that waits too long, and its log then says why. A read the API server refuses is an error at once.
 * `signal` ends the wait (a SIGTERM while the gateway starts) with its reason.
 */
export async function waitForCrd(
  kubeConfig: KubeConfig,
  log: Logger,
  opts: { intervalMs?: number; repeatMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const { signal } = opts;
  const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
  const intervalMs = opts.intervalMs ?? 1_000;
  const repeatMs = opts.repeatMs ?? 30_000;
  let logged: { problem: string; at: number } | undefined;
  for (;;) {
    let crd: V1CustomResourceDefinition | undefined;
    try {
      crd = await untilAborted(api.readCustomResourceDefinition({ name: CRD_NAME }), signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (status(err) === 403) {
        throw new Error(
          `the gateway may not read CRD ${CRD_NAME}: grant get on customresourcedefinitions (resourceNames: ${CRD_NAME})`,
        );
      }
      if (status(err) !== 404) throw err;
    }
    const problem = crdProblem(crd);
    if (!problem) {
      if (logged) log.info({ crd: CRD_NAME }, 'CRD installed and Established');
      return;
    }
    const now = Date.now();
    if (!logged || logged.problem !== problem || now - logged.at >= repeatMs) {
      log.warn({ crd: CRD_NAME }, `waiting for the CRD (--install-crd=false): ${problem}`);
      logged = { problem, at: now };
    }
    await abortableSleep(intervalMs, signal);
  }
}

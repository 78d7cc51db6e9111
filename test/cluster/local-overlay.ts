/**
 * manifests/overlays/local as the demo applies it: kubectl's kustomize rendering with the gateway's
 * loopback HTTPS port and CA filled in — the CRD, the read-only roles, the webhook configurations and
 * the aggregated API for a gateway running on this machine.
 */
import { execFile } from 'node:child_process';
import { dump } from 'js-yaml';
import { type KubeObject, kustomizeText, parseObjects } from './deploy.js';
import { fillPlaceholders, type LocalEndpoint } from './manifests.js';

const LOCAL_OVERLAY = 'overlays/local';

export async function renderLocalOverlay(kubectl: string, endpoint: LocalEndpoint): Promise<KubeObject[]> {
  const text = await kustomizeText(kubectl, LOCAL_OVERLAY);
  return parseObjects(fillPlaceholders(text, endpoint, 'local overlay', `manifests/${LOCAL_OVERLAY}`));
}

/** `kubectl apply` of the rendered overlay as the kubeconfig's user; kubectl's output. */
export async function applyLocalOverlay(
  kubectl: string,
  kubeconfig: string,
  endpoint: LocalEndpoint,
): Promise<string> {
  const objects = await renderLocalOverlay(kubectl, endpoint);
  const yaml = objects.map((o) => dump(o, { noRefs: true, lineWidth: -1 })).join('---\n');
  return await new Promise((resolve, reject) => {
    const child = execFile(
      kubectl,
      [`--kubeconfig=${kubeconfig}`, 'apply', '-f', '-'],
      { timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err)
          reject(
            new Error(`kubectl apply of manifests/${LOCAL_OVERLAY} failed: ${stderr.trim() || err.message}`),
          );
        else resolve(stdout);
      },
    );
    child.stdin?.end(yaml);
  });
}

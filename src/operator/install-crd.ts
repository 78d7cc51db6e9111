/**
 * Installs or upgrades the NodeLoadRule CRD at gateway start (config.installCrd), then waits until
 * the API server reports it Established, so the rules informer never starts against a missing type.
 */
import {
  ApiextensionsV1Api,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { CRD_NAME, loadCrdManifest } from '../rules/crd.js';
import type { Logger } from '../server/log.js';

function status(err: unknown): number | undefined {
  return typeof (err as { code?: unknown })?.code === 'number' ? (err as { code: number }).code : undefined;
}

export async function ensureCrd(kubeConfig: KubeConfig, log: Logger, timeoutMs = 30_000): Promise<void> {
  const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
  const manifest = loadCrdManifest() as unknown as V1CustomResourceDefinition;
  for (let attempt = 0; ; attempt++) {
    try {
      const current = await api.readCustomResourceDefinition({ name: CRD_NAME });
      await api.replaceCustomResourceDefinition({
        name: CRD_NAME,
        body: {
          ...manifest,
          metadata: { ...manifest.metadata, resourceVersion: current.metadata?.resourceVersion },
        },
      });
      log.info({ crd: CRD_NAME }, 'CRD updated');
      break;
    } catch (err) {
      const code = status(err);
      if (code === 404) {
        try {
          await api.createCustomResourceDefinition({ body: manifest });
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
  while (Date.now() < deadline) {
    const crd = await api.readCustomResourceDefinition({ name: CRD_NAME });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`CRD ${CRD_NAME} not Established after ${timeoutMs / 1000}s`);
}

/**
 * Registers the webhooks of a gateway running on this machine (local control plane, tests, demo):
 * renders manifests/webhook/local.yaml for a port and CA, then creates or replaces the two
 * configurations.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  AdmissionregistrationV1Api,
  ApiException,
  type KubeConfig,
  loadAllYaml,
  type V1LabelSelector,
  type V1MutatingWebhookConfiguration,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';

/** Resolved from this module: src/webhook (tsx) and dist/webhook (build) are both two levels below the repo root. */
export const LOCAL_WEBHOOKS_PATH = fileURLToPath(
  new URL('../../manifests/webhook/local.yaml', import.meta.url),
);

export interface LocalWebhookOptions {
  /** The gateway's kube-facing HTTPS port. */
  port: number;
  /** PEM of the CA that signed the serving certificate (IP SAN 127.0.0.1). */
  caPem: string;
  /** Appended to the configuration names ("nodeload-gateway-local-<suffix>") so several can coexist. */
  nameSuffix?: string;
  /**
   * ANDed with every webhook's namespaceSelector, e.g. to scope tests to their own namespaces; the
   * manifest's own requirements (kube-system and the gateway's namespace skipped, the opt-out label)
   * still hold.
   */
  namespaceSelector?: V1LabelSelector;
  templatePath?: string;
}

export interface LocalWebhooks {
  mutating: V1MutatingWebhookConfiguration;
  validating: V1ValidatingWebhookConfiguration;
}

/** Both selectors at once (label selectors AND every requirement). */
function narrowed(base: V1LabelSelector | undefined, extra: V1LabelSelector): V1LabelSelector {
  const matchLabels: Record<string, string> = { ...base?.matchLabels };
  const matchExpressions = [...(base?.matchExpressions ?? []), ...(extra.matchExpressions ?? [])];
  for (const [key, value] of Object.entries(extra.matchLabels ?? {})) {
    // A key both set to different values matches nothing, as AND means: keep both requirements.
    if (key in matchLabels && matchLabels[key] !== value)
      matchExpressions.push({ key, operator: 'In', values: [value] });
    else matchLabels[key] = value;
  }
  return {
    ...(Object.keys(matchLabels).length ? { matchLabels } : {}),
    ...(matchExpressions.length ? { matchExpressions } : {}),
  };
}

export function renderLocalWebhooks(opts: LocalWebhookOptions): LocalWebhooks {
  if (!Number.isInteger(opts.port) || opts.port <= 0 || opts.port > 65535) {
    throw new Error(`invalid webhook port ${opts.port}`);
  }
  const template = readFileSync(opts.templatePath ?? LOCAL_WEBHOOKS_PATH, 'utf8');
  const values: Record<string, string> = {
    PORT: String(opts.port),
    CA_BUNDLE: Buffer.from(opts.caPem).toString('base64'),
  };
  // Comments may mention placeholders; only the documents' values matter.
  const text = template
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => {
      const v = values[name];
      if (v === undefined)
        throw new Error(`${opts.templatePath ?? LOCAL_WEBHOOKS_PATH}: unknown placeholder ${whole}`);
      return v;
    });
  const docs = loadAllYaml(text).filter(Boolean) as (
    | V1MutatingWebhookConfiguration
    | V1ValidatingWebhookConfiguration
  )[];
  const mutating = docs.find(
    (d) => d.kind === 'MutatingWebhookConfiguration',
  ) as V1MutatingWebhookConfiguration;
  const validating = docs.find(
    (d) => d.kind === 'ValidatingWebhookConfiguration',
  ) as V1ValidatingWebhookConfiguration;
  if (!mutating || !validating)
    throw new Error('local webhook template must hold one mutating and one validating configuration');
  for (const config of [mutating, validating]) {
    if (opts.nameSuffix && config.metadata?.name)
      config.metadata.name = `${config.metadata.name}-${opts.nameSuffix}`;
    if (opts.namespaceSelector)
      for (const w of config.webhooks ?? [])
        w.namespaceSelector = narrowed(w.namespaceSelector, opts.namespaceSelector);
  }
  return { mutating, validating };
}

function isConflict(err: unknown): boolean {
  return err instanceof ApiException && err.code === 409;
}

function isNotFound(err: unknown): boolean {
  return err instanceof ApiException && err.code === 404;
}

/** Creates or replaces both configurations; returns what was applied. */
export async function applyLocalWebhooks(kc: KubeConfig, opts: LocalWebhookOptions): Promise<LocalWebhooks> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const { mutating, validating } = renderLocalWebhooks(opts);
  const mName = mutating.metadata?.name ?? '';
  const vName = validating.metadata?.name ?? '';
  try {
    await api.createMutatingWebhookConfiguration({ body: mutating });
  } catch (err) {
    if (!isConflict(err)) throw err;
    const current = await api.readMutatingWebhookConfiguration({ name: mName });
    mutating.metadata = { ...mutating.metadata, resourceVersion: current.metadata?.resourceVersion };
    await api.replaceMutatingWebhookConfiguration({ name: mName, body: mutating });
  }
  try {
    await api.createValidatingWebhookConfiguration({ body: validating });
  } catch (err) {
    if (!isConflict(err)) throw err;
    const current = await api.readValidatingWebhookConfiguration({ name: vName });
    validating.metadata = { ...validating.metadata, resourceVersion: current.metadata?.resourceVersion };
    await api.replaceValidatingWebhookConfiguration({ name: vName, body: validating });
  }
  return { mutating, validating };
}

/** Deletes both configurations; missing ones are fine. */
export async function deleteLocalWebhooks(kc: KubeConfig, applied: LocalWebhooks): Promise<void> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const ignoreMissing = (err: unknown) => {
    if (!isNotFound(err)) throw err;
  };
  await Promise.all([
    api
      .deleteMutatingWebhookConfiguration({ name: applied.mutating.metadata?.name ?? '' })
      .catch(ignoreMissing),
    api
      .deleteValidatingWebhookConfiguration({ name: applied.validating.metadata?.name ?? '' })
      .catch(ignoreMissing),
  ]);
}

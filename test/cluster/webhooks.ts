/**
 * Registers the webhooks of a gateway running on this machine (local control plane, tests, demo):
 * renders manifests/overlays/local/webhooks.yaml for a port and CA, then creates or replaces the two
 * configurations. In-cluster deployments use manifests/base/webhooks.yaml instead.
 */
import {
  AdmissionregistrationV1Api,
  type KubeConfig,
  type V1LabelSelector,
  type V1MutatingWebhookConfiguration,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import {
  createOrReplace,
  ignoreNotFound,
  type LocalEndpoint,
  manifestPath,
  renderTemplate,
} from './manifests.js';

export interface LocalWebhookOptions extends LocalEndpoint {
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
  const docs = renderTemplate(
    opts.templatePath ?? manifestPath('overlays/local/webhooks.yaml'),
    opts,
    'webhook',
  ) as (V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration)[];
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

/** Creates or replaces both configurations; returns what was applied. */
export async function applyLocalWebhooks(kc: KubeConfig, opts: LocalWebhookOptions): Promise<LocalWebhooks> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const rendered = renderLocalWebhooks(opts);
  const mName = rendered.mutating.metadata?.name ?? '';
  await createOrReplace(rendered.mutating, {
    read: () => api.readMutatingWebhookConfiguration({ name: mName }),
    create: (body) => api.createMutatingWebhookConfiguration({ body }),
    replace: (body) => api.replaceMutatingWebhookConfiguration({ name: mName, body }),
  });
  const vName = rendered.validating.metadata?.name ?? '';
  await createOrReplace(rendered.validating, {
    read: () => api.readValidatingWebhookConfiguration({ name: vName }),
    create: (body) => api.createValidatingWebhookConfiguration({ body }),
    replace: (body) => api.replaceValidatingWebhookConfiguration({ name: vName, body }),
  });
  return rendered;
}

/** Deletes both configurations; missing ones are fine. */
export async function deleteLocalWebhooks(kc: KubeConfig, applied: LocalWebhooks): Promise<void> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  await Promise.all([
    api
      .deleteMutatingWebhookConfiguration({ name: applied.mutating.metadata?.name ?? '' })
      .catch(ignoreNotFound),
    api
      .deleteValidatingWebhookConfiguration({ name: applied.validating.metadata?.name ?? '' })
      .catch(ignoreNotFound),
  ]);
}

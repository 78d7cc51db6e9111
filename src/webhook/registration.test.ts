import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { renderLocalWebhooks } from './registration.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('renderLocalWebhooks', () => {
  it('fills port and CA into every webhook', () => {
    const { mutating, validating } = renderLocalWebhooks({ port: 18443, caPem: CA });
    const hooks = [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])];
    expect(hooks.map((w) => w.clientConfig.url)).toEqual([
      'https://127.0.0.1:18443/mutate',
      'https://127.0.0.1:18443/validate',
      'https://127.0.0.1:18443/validate',
    ]);
    for (const w of hooks) {
      expect(Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString()).toBe(CA);
      expect(w.sideEffects).toBe('None');
      expect(w.admissionReviewVersions).toEqual(['v1']);
      expect(w.timeoutSeconds).toBeGreaterThanOrEqual(2);
      expect(w.timeoutSeconds).toBeLessThanOrEqual(3);
      expect(w.namespaceSelector?.matchExpressions?.[0]?.values).toEqual(['kube-system', 'nodeload-system']);
    }
    expect(mutating.webhooks?.[0]).toMatchObject({ failurePolicy: 'Ignore', reinvocationPolicy: 'IfNeeded' });
    expect(validating.webhooks?.map((w) => [w.name, w.failurePolicy])).toEqual([
      ['pinned-pods.nodeload.example.com', 'Fail'],
      ['rules.nodeload.example.com', 'Ignore'],
    ]);
  });

  it('suffixes names and replaces namespace selectors for scoped tests', () => {
    const sel = { matchLabels: { 'nodeload.example.com/test-webhook': 'abc' } };
    const { mutating, validating } = renderLocalWebhooks({
      port: 1,
      caPem: CA,
      nameSuffix: 'abc',
      namespaceSelector: sel,
    });
    expect(mutating.metadata?.name).toBe('nodeload-gateway-local-abc');
    expect(validating.metadata?.name).toBe('nodeload-gateway-local-abc');
    for (const w of [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])])
      expect(w.namespaceSelector).toEqual(sel);
  });

  it('rejects a bad port', () => {
    expect(() => renderLocalWebhooks({ port: 0, caPem: CA })).toThrow(/invalid webhook port/);
  });

  it('the in-cluster manifest matches the local one except for clientConfig and names', () => {
    const read = (f: string) =>
      loadAllYaml(
        readFileSync(fileURLToPath(new URL(`../../manifests/webhook/${f}`, import.meta.url)), 'utf8'),
      );
    const strip = (docs: { metadata: { name: string }; webhooks: { clientConfig: unknown }[] }[]) =>
      docs.map((d) => ({
        kind: (d as unknown as { kind: string }).kind,
        webhooks: d.webhooks.map((w) => ({ ...w, clientConfig: undefined })),
      }));
    const inCluster = read('in-cluster.yaml');
    const { mutating, validating } = renderLocalWebhooks({ port: 1, caPem: CA });
    expect(strip([mutating, validating] as never)).toEqual(strip(inCluster as never));
    expect(inCluster[0].webhooks[0].clientConfig.service).toEqual({
      name: 'nodeload-gateway',
      namespace: 'nodeload-system',
      path: '/mutate',
      port: 8443,
    });
  });
});

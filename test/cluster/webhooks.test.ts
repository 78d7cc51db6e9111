import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { DAEMONSET_ANNOTATION } from '../../src/rules/daemonset.js';
import { DAEMONSET_CONTROLLER_USERS } from '../../src/webhook/daemonset.js';
import { OPT_OUT_LABEL, OPT_OUT_VALUE } from '../../src/webhook/gate.js';
import { BREAK_GLASS_LABEL, BREAK_GLASS_VALUE } from '../../src/webhook/validate.js';
import { renderLocalWebhooks } from './webhooks.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('renderLocalWebhooks', () => {
  it('fills port and CA into every webhook', () => {
    const { mutating, validating } = renderLocalWebhooks({ port: 18443, caPem: CA });
    const hooks = [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])];
    expect(hooks.map((w) => w.clientConfig.url)).toEqual([
      'https://127.0.0.1:18443/mutate',
      'https://127.0.0.1:18443/validate',
      'https://127.0.0.1:18443/validate',
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
      ['pinned-pods-break-glass.nodeload.example.com', 'Ignore'],
      ['daemonset-pods.nodeload.example.com', 'Fail'],
      ['rules.nodeload.example.com', 'Ignore'],
    ]);
  });

  it('suffixes names and narrows namespace selectors for scoped tests (skips and opt-out kept)', () => {
    const sel = { matchLabels: { 'nodeload.example.com/test-webhook': 'abc' } };
    const plain = renderLocalWebhooks({ port: 1, caPem: CA });
    const { mutating, validating } = renderLocalWebhooks({
      port: 1,
      caPem: CA,
      nameSuffix: 'abc',
      namespaceSelector: sel,
    });
    expect(mutating.metadata?.name).toBe('nodeload-gateway-local-abc');
    expect(validating.metadata?.name).toBe('nodeload-gateway-local-abc');
    const before = [...(plain.mutating.webhooks ?? []), ...(plain.validating.webhooks ?? [])];
    [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])].forEach((w, i) => {
      expect(w.namespaceSelector).toEqual({
        matchLabels: sel.matchLabels,
        matchExpressions: before[i]?.namespaceSelector?.matchExpressions,
      });
    });
  });

  it('the opt-out label keeps pods and namespaces away from the mutating webhook only', () => {
    const optOut = { key: OPT_OUT_LABEL, operator: 'NotIn', values: [OPT_OUT_VALUE] };
    const { mutating, validating } = renderLocalWebhooks({ port: 1, caPem: CA });
    const steer = mutating.webhooks?.[0];
    expect(steer?.objectSelector).toEqual({ matchExpressions: [optOut] });
    expect(steer?.namespaceSelector?.matchExpressions).toEqual([
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'nodeload-system'] },
      optOut,
    ]);
    // Pinned pods are still validated against their rules: opting out of steering is not opting out of rules.
    for (const w of validating.webhooks ?? []) {
      expect(w.objectSelector).toBeUndefined();
      expect(w.namespaceSelector?.matchExpressions).toHaveLength(1);
    }
  });

  it('the CEL conditions name the label, annotation and users the gateway checks', () => {
    const { mutating, validating } = renderLocalWebhooks({ port: 1, caPem: CA });
    const conditions = (name: string) =>
      [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])]
        .find((w) => w.name === name)
        ?.matchConditions?.map((c) => c.expression)
        .join('\n') ?? '';
    const steer = conditions('steer-pods.nodeload.example.com');
    for (const user of DAEMONSET_CONTROLLER_USERS) expect(steer).toContain(`"${user}"`);
    expect(conditions('daemonset-pods.nodeload.example.com')).toContain(`"${DAEMONSET_ANNOTATION}"`);
    for (const hook of ['pinned-pods.nodeload.example.com', 'pinned-pods-break-glass.nodeload.example.com']) {
      expect(conditions(hook)).toContain(`"${BREAK_GLASS_LABEL}"`);
      expect(conditions(hook)).toContain(`"${BREAK_GLASS_VALUE}"`);
    }
    const policy = readFileSync(
      fileURLToPath(new URL('../../manifests/webhook/break-glass-policy.yaml', import.meta.url)),
      'utf8',
    );
    expect(policy).toContain(`"${BREAK_GLASS_LABEL}"`);
  });

  it('rejects a bad port', () => {
    expect(() => renderLocalWebhooks({ port: 0, caPem: CA })).toThrow(/invalid webhook port/);
  });

  it('the in-cluster manifest matches the local one except for clientConfig and names', () => {
    const read = (f: string) =>
      loadAllYaml(readFileSync(fileURLToPath(new URL(`../../manifests/${f}`, import.meta.url)), 'utf8'));
    const strip = (docs: { metadata: { name: string }; webhooks: { clientConfig: unknown }[] }[]) =>
      docs.map((d) => ({
        kind: (d as unknown as { kind: string }).kind,
        webhooks: d.webhooks.map((w) => ({ ...w, clientConfig: undefined })),
      }));
    const inCluster = read('base/webhooks.yaml');
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

import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { CRD_NAME } from '../rules/crd.js';
import { crdProblem, crdReplacement } from './install-crd.js';

const crd = (
  opts: { versions?: { name: string; served: boolean }[]; established?: string; message?: string } = {},
): V1CustomResourceDefinition =>
  ({
    metadata: { name: CRD_NAME },
    spec: { versions: opts.versions ?? [{ name: 'v1', served: true, storage: true }] },
    status: {
      conditions:
        opts.established === undefined
          ? []
          : [{ type: 'Established', status: opts.established, message: opts.message }],
    },
  }) as unknown as V1CustomResourceDefinition;

describe('crdProblem', () => {
  it.each([
    ['absent', undefined, /is not installed: apply it \(kubectl apply -k manifests\/crd/],
    [
      'v1 not among the versions',
      crd({ versions: [{ name: 'v2', served: true }], established: 'True' }),
      /does not serve v1/,
    ],
    [
      'v1 not served',
      crd({ versions: [{ name: 'v1', served: false }], established: 'True' }),
      /does not serve v1/,
    ],
    ['no Established condition yet', crd(), /not Established yet$/],
    [
      'Established False, with why',
      crd({ established: 'False', message: 'names conflict' }),
      /not Established yet: names conflict/,
    ],
  ])('%s: %s', (_case, object, problem) => {
    expect(crdProblem(object)).toMatch(problem);
  });

  it('none once installed, serving v1 and Established', () => {
    expect(crdProblem(crd({ established: 'True' }))).toBeUndefined();
  });
});

describe('crdReplacement', () => {
  const manifest = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME, labels: { 'app.kubernetes.io/name': 'nodeload' } },
    spec: { group: 'example.com' },
  } as unknown as V1CustomResourceDefinition;

  it.each([
    [
      'keeps Helm ownership and the resource policy',
      {
        labels: { 'app.kubernetes.io/managed-by': 'Helm' },
        annotations: { 'meta.helm.sh/release-name': 'nodeload', 'helm.sh/resource-policy': 'keep' },
      },
      {
        labels: { 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/name': 'nodeload' },
        annotations: { 'meta.helm.sh/release-name': 'nodeload', 'helm.sh/resource-policy': 'keep' },
      },
    ],
    [
      "the manifest's labels win over the installed ones",
      { labels: { 'app.kubernetes.io/name': 'old' } },
      { labels: { 'app.kubernetes.io/name': 'nodeload' } },
    ],
    ["none installed: only the manifest's", {}, { labels: { 'app.kubernetes.io/name': 'nodeload' } }],
  ])('%s', (_case, installed, expected) => {
    const current = { metadata: { name: CRD_NAME, resourceVersion: '42', ...installed } };
    const out = crdReplacement(current as V1CustomResourceDefinition, manifest);
    expect(out.metadata).toEqual({ name: CRD_NAME, resourceVersion: '42', ...expected });
    expect(out.spec).toBe(manifest.spec);
  });
});

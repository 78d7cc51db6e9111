// The chart's namespace.create: the release's namespace rendered with the kustomize base's Pod Security
// labels, for `helm template | kubectl apply` and GitOps tools (`helm install` needs the namespace to exist
// before, README). Rendering only: helm is built from its Go module like the control plane.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildHelm,
  comparable,
  helmTemplate,
  type KubeObject,
  MANIFEST_NAMESPACE,
  parseObjects,
} from '../cluster/deploy.js';
import { manifestPath } from '../cluster/manifests.js';

let helm: string;
beforeAll(async () => {
  helm = await buildHelm();
}, 1_800_000);

const namespaces = (objects: KubeObject[]) => objects.filter((o) => o.kind === 'Namespace');

describe("the Helm chart's namespace.create", () => {
  it('renders no Namespace by default: Helm installs into an existing one', async () => {
    expect(namespaces(await helmTemplate(helm))).toEqual([]);
  });

  it('renders the release namespace with the Pod Security labels of manifests/base, kept on uninstall', async () => {
    const [base] = parseObjects(readFileSync(manifestPath('base/namespace.yaml'), 'utf8'));
    expect(base?.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    for (const namespace of [MANIFEST_NAMESPACE, 'platform-nodeload']) {
      const objects = await helmTemplate(helm, { namespace, set: ['namespace.create=true'] });
      const [ns, ...more] = namespaces(objects);
      expect(more).toEqual([]);
      expect(ns?.metadata.name).toBe(namespace);
      expect(ns?.metadata.labels).toMatchObject({
        ...base?.metadata.labels,
        'pod-security.kubernetes.io/enforce': 'restricted',
      });
      expect(ns?.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
      // Nothing else changes (comparable leaves the Namespace out).
      expect(comparable(objects)).toEqual(comparable(await helmTemplate(helm, { namespace })));
    }
  });
});

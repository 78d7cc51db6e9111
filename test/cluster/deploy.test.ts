import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  addedRows,
  comparable,
  flagValue,
  gatewayContainer,
  hasWildcard,
  identityObjects,
  isolate,
  type KubeObject,
  parseCanIList,
  parseObjects,
  rulesOf,
  withFlag,
} from './deploy.js';
import { manifestPath } from './manifests.js';

const read = (file: string) => parseObjects(readFileSync(manifestPath(file), 'utf8'));
const base = () =>
  [
    'base/namespace.yaml',
    'base/rbac.yaml',
    'base/deployment.yaml',
    'base/webhooks.yaml',
    'base/apiservice.yaml',
  ].flatMap(read);
const byKind = (objects: KubeObject[], kind: string) => objects.filter((o) => o.kind === kind);

describe('isolate', () => {
  const objects = isolate([...base(), ...read('overlays/self-signed/rbac.yaml')], {
    namespace: 'it-x',
    suffix: 'abc',
  });

  it('moves every namespaced object and every mention of the namespace', () => {
    for (const o of objects) {
      expect(JSON.stringify(o)).not.toContain('nodeload-system');
    }
    expect(byKind(objects, 'Namespace')[0]?.metadata.name).toBe('it-x');
    expect(gatewayContainer(objects).args).toContain('--namespace=it-x');
    const hooks = byKind(objects, 'MutatingWebhookConfiguration')[0]?.['webhooks'] as {
      clientConfig: { service: { namespace: string } };
    }[];
    expect(hooks[0]?.clientConfig.service.namespace).toBe('it-x');
  });

  it('suffixes cluster-scoped names and the kube-system RoleBinding, with references following', () => {
    expect(byKind(objects, 'ClusterRole').map((o) => o.metadata.name)).toEqual([
      'nodeload-gateway-abc',
      'nodeload-gateway-certs-abc',
    ]);
    const binding = byKind(objects, 'ClusterRoleBinding').find(
      (o) => o.metadata.name === 'nodeload-gateway-abc',
    );
    expect(binding?.['roleRef']).toMatchObject({ kind: 'ClusterRole', name: 'nodeload-gateway-abc' });
    // Built-in roles keep their names.
    const delegator = byKind(objects, 'ClusterRoleBinding').find((o) =>
      o.metadata.name.includes('auth-delegator'),
    );
    expect(delegator?.metadata.name).toBe('nodeload-gateway:system:auth-delegator-abc');
    expect(delegator?.['roleRef']).toMatchObject({ name: 'system:auth-delegator' });
    const reader = byKind(objects, 'RoleBinding').find((o) => o.metadata.namespace === 'kube-system');
    expect(reader?.metadata.name).toBe('nodeload-gateway-auth-reader-abc');
    expect(reader?.['roleRef']).toMatchObject({
      kind: 'Role',
      name: 'extension-apiserver-authentication-reader',
    });
    // In-namespace objects keep theirs (the namespace is unique already).
    expect(byKind(objects, 'Role').map((o) => o.metadata.name)).toEqual([
      'nodeload-gateway-leader',
      'nodeload-gateway-certs',
    ]);
    expect(byKind(objects, 'MutatingWebhookConfiguration')[0]?.metadata.name).toBe('nodeload-gateway-abc');
    // Fixed by what they serve.
    expect(byKind(objects, 'APIService')[0]?.metadata.name).toBe('v1alpha1.nodeload.example.com');
  });

  it('RBAC resourceNames follow renamed objects, others stay', () => {
    const rules = rulesOf(objects);
    expect(rules.find((r) => r.resources?.includes('mutatingwebhookconfigurations'))?.resourceNames).toEqual([
      'nodeload-gateway-abc',
    ]);
    expect(rules.find((r) => r.resources?.includes('apiservices'))?.resourceNames).toEqual([
      'v1alpha1.nodeload.example.com',
    ]);
    expect(rules.find((r) => r.resources?.includes('leases') && r.resourceNames)?.resourceNames).toEqual([
      'nodeload-gateway',
    ]);
  });

  it('identityObjects keeps the namespace, the ServiceAccount, roles and bindings only', () => {
    expect([...new Set(identityObjects(objects).map((o) => o.kind))].sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Namespace',
      'Role',
      'RoleBinding',
      'ServiceAccount',
    ]);
  });
});

describe('the base manifests', () => {
  it('grant no wildcard, and only read the CRD, by its name (the Deployment runs with --install-crd=false)', () => {
    const rules = rulesOf([...base(), ...read('overlays/self-signed/rbac.yaml')]);
    for (const r of rules) {
      for (const field of [r.apiGroups, r.resources, r.resourceNames, r.verbs, r.nonResourceURLs]) {
        expect(field ?? []).not.toContain('*');
      }
    }
    const crd = rules.filter((r) => r.resources?.includes('customresourcedefinitions'));
    expect(crd).toEqual([
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['nodeloadrules.example.com'],
        verbs: ['get'],
      },
    ]);
    expect(flagValue(gatewayContainer(base()).args, 'install-crd')).toBe('false');
    // Writes other than create are limited by name wherever the object is ours.
    for (const r of rules) {
      const ours = r.resources?.some(
        (x) => ['leases', 'secrets', 'apiservices'].includes(x) || x.endsWith('webhookconfigurations'),
      );
      if (ours && r.verbs.some((v) => v !== 'create')) expect(r.resourceNames?.length).toBeGreaterThan(0);
    }
  });

  it('run the gateway hardened: numeric non-root user, read-only root, no capabilities, two replicas apart', () => {
    const deployment = byKind(base(), 'Deployment')[0] as KubeObject & {
      spec: {
        replicas: number;
        template: {
          spec: {
            securityContext: Record<string, unknown>;
            priorityClassName: string;
            affinity: {
              podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { topologyKey: string }[] };
            };
            containers: {
              securityContext: Record<string, unknown>;
              resources: { requests: Record<string, string>; limits: Record<string, string> };
              livenessProbe: { httpGet: { path: string } };
              readinessProbe: { httpGet: { path: string } };
            }[];
          };
        };
      };
    };
    const pod = deployment.spec.template.spec;
    expect(deployment.spec.replicas).toBe(2);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const c = pod.containers[0];
    expect(c?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(c?.readinessProbe.httpGet.path).toBe('/readyz');
    expect(c?.livenessProbe.httpGet.path).toBe('/livez');
    expect(c?.resources.requests).toHaveProperty('memory');
    expect(c?.resources.limits).toHaveProperty('memory');
    expect(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]?.topologyKey).toBe(
      'kubernetes.io/hostname',
    );
    expect(pod.priorityClassName).toBe('system-cluster-critical');
    // The heap — old generation plus the young one (two semi-spaces and as much again for large
    // objects at most) — stays below the memory limit with room for code, buffers and sockets.
    const options = gatewayContainer(base()).env['NODE_OPTIONS'] ?? '';
    const heapMiB = Number(/--max-old-space-size=(\d+)/.exec(options)?.[1]);
    const semiMiB = Number(/--max-semi-space-size=(\d+)/.exec(options)?.[1] ?? 16);
    const limit = c?.resources.limits['memory'] ?? '';
    const limitMiB = limit.endsWith('Gi') ? Number.parseFloat(limit) * 1024 : Number.parseFloat(limit);
    expect(heapMiB).toBeGreaterThan(0);
    expect(heapMiB + 3 * semiMiB).toBeLessThanOrEqual(0.85 * limitMiB);
    // The Dockerfile's user is the same numeric one.
    expect(readFileSync(manifestPath('../Dockerfile'), 'utf8')).toMatch(/^USER 65532(:65532)?$/m);
  });

  it('enforce the restricted Pod Security profile on the namespace', () => {
    expect(byKind(base(), 'Namespace')[0]?.metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
    });
  });
});

describe('comparable', () => {
  it("leaves out Helm's own labels, empty lists, nulls and the Namespace, and sorts by kind and name", () => {
    const helm: KubeObject[] = [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: 'b',
          labels: { 'app.kubernetes.io/name': 'nodeload', 'helm.sh/chart': 'nodeload-0.1.0' },
          annotations: { 'helm.sh/resource-policy': 'keep' },
        },
        spec: { ports: [], selector: null },
      },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } },
    ];
    const kustomized: KubeObject[] = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: {} } },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'b', labels: { 'app.kubernetes.io/name': 'nodeload' } },
        spec: {},
      },
    ];
    expect(comparable(helm)).toEqual(comparable(kustomized));
    expect(comparable(helm).map((o) => o.kind)).toEqual(['ConfigMap', 'Service']);
  });
});

describe('flags', () => {
  it('withFlag replaces a flag or adds it; flagValue reads it', () => {
    const args = withFlag(['--a=1', '--namespace=x', '--b'], 'namespace', 'y');
    expect(args).toEqual(['--a=1', '--b', '--namespace=y']);
    expect(flagValue(args, 'namespace')).toBe('y');
    expect(flagValue(args, 'missing')).toBeUndefined();
  });
});

describe('kubectl auth can-i --list', () => {
  const table = (rows: string[][]) => {
    const header = ['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)) + 3);
    return [header, ...rows]
      .map((r) =>
        r
          .map((c, i) => c.padEnd(widths[i] ?? 0))
          .join('')
          .trimEnd(),
      )
      .join('\n');
  };
  const output = table([
    ['selfsubjectreviews.authentication.k8s.io', '[]', '[]', '[create]'],
    ['leases.coordination.k8s.io', '[]', '[nodeload-gateway]', '[get update]'],
    ['', '[/api/*]', '[]', '[get]'],
  ]);

  it('parses the table by its header', () => {
    expect(parseCanIList(output)).toEqual([
      {
        resources: 'selfsubjectreviews.authentication.k8s.io',
        nonResourceURLs: '[]',
        resourceNames: '[]',
        verbs: '[create]',
      },
      {
        resources: 'leases.coordination.k8s.io',
        nonResourceURLs: '[]',
        resourceNames: '[nodeload-gateway]',
        verbs: '[get update]',
      },
      { resources: '', nonResourceURLs: '[/api/*]', resourceNames: '[]', verbs: '[get]' },
    ]);
  });

  it('addedRows leaves out what every identity has; hasWildcard finds a * in any column', () => {
    const rows = parseCanIList(output);
    const baseline = [rows[0], rows[2]].filter((r) => r !== undefined);
    expect(addedRows(rows, baseline).map((r) => r.resources)).toEqual(['leases.coordination.k8s.io']);
    expect(rows.map(hasWildcard)).toEqual([false, false, true]);
  });
});

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml, type V1APIService, type V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { APISERVICE_NAME, GROUP, NODELOADS, VERSION } from './api.js';
import { availableCondition, renderDelegationRbac, renderLocalApiService } from './registration.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('renderLocalApiService', () => {
  it('points the APIService at an ExternalName Service → localhost on the given port, trusting the CA', () => {
    const { service, apiService } = renderLocalApiService({ port: 41445, caPem: CA });
    expect(service).toMatchObject({
      kind: 'Service',
      metadata: { name: 'nodeload-api', namespace: 'kube-system' },
      spec: { type: 'ExternalName', externalName: 'localhost' },
    });
    expect(apiService.metadata?.name).toBe(APISERVICE_NAME);
    expect(apiService.spec).toMatchObject({
      group: GROUP,
      version: VERSION,
      service: { namespace: 'kube-system', name: 'nodeload-api', port: 41445 },
    });
    expect(Buffer.from(String(apiService.spec?.caBundle), 'base64').toString()).toBe(CA);
  });

  it.each([0, -1, 70000, 1.5])('rejects port %d', (port) => {
    expect(() => renderLocalApiService({ port, caPem: CA })).toThrow('invalid aggregated API port');
  });
});

describe('renderDelegationRbac', () => {
  it.each([
    [
      { kind: 'ServiceAccount', name: 'nodeload-gateway', namespace: 'nodeload-system' } as const,
      { kind: 'ServiceAccount', name: 'nodeload-gateway', namespace: 'nodeload-system' },
    ],
    [
      { kind: 'User', name: 'gateway' } as const,
      { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'gateway' },
    ],
  ])('binds %j to auth-delegator and the authentication reader', (subject, want) => {
    const { clusterRoleBinding, roleBinding } = renderDelegationRbac(subject);
    expect(clusterRoleBinding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'system:auth-delegator',
    });
    expect(roleBinding.metadata?.namespace).toBe('kube-system');
    expect(roleBinding.roleRef.name).toBe('extension-apiserver-authentication-reader');
    expect(clusterRoleBinding.subjects).toEqual([want]);
    expect(roleBinding.subjects).toEqual([want]);
  });
});

describe('manifests/aggregated', () => {
  const read = (file: string) =>
    loadAllYaml(
      readFileSync(fileURLToPath(new URL(`../../manifests/aggregated/${file}`, import.meta.url)), 'utf8'),
    );

  it('in-cluster.yaml registers the same group-version through a Service that exists on the same port', () => {
    const docs = read('in-cluster.yaml') as (V1Service | V1APIService)[];
    const svc = docs.find((d) => d.kind === 'Service') as V1Service;
    const api = docs.find((d) => d.kind === 'APIService') as V1APIService;
    expect(api.metadata?.name).toBe(APISERVICE_NAME);
    expect(api.spec).toMatchObject({ group: GROUP, version: VERSION });
    expect(api.spec?.service).toMatchObject({ name: svc.metadata?.name, namespace: svc.metadata?.namespace });
    expect(svc.spec?.ports?.map((p) => p.port)).toContain(api.spec?.service?.port);
  });

  it('rbac.yaml lets readers get, list and watch nodeloads', () => {
    const docs = read('rbac.yaml') as {
      kind: string;
      rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    }[];
    const reader = docs.find((d) => d.kind === 'ClusterRole');
    expect(reader?.rules).toEqual([
      { apiGroups: [GROUP], resources: [NODELOADS.plural], verbs: NODELOADS.verbs },
    ]);
  });
});

describe('availableCondition', () => {
  it('finds the Available condition', () => {
    expect(
      availableCondition({
        status: { conditions: [{ type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck' }] },
      } as V1APIService)?.reason,
    ).toBe('FailedDiscoveryCheck');
    expect(availableCondition({} as V1APIService)).toBeUndefined();
  });
});

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml, type V1APIService, type V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { APISERVICE_NAME, GROUP, NODELOADS, VERSION } from './api.js';

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

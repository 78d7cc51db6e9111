import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml, type V1APIService, type V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { APISERVICE_NAME, GROUP, NODELOADS, VERSION } from './api.js';

describe('manifests/base (aggregated API)', () => {
  const read = (file: string) =>
    loadAllYaml(
      readFileSync(fileURLToPath(new URL(`../../manifests/base/${file}`, import.meta.url)), 'utf8'),
    );

  it('apiservice.yaml registers the same group-version through a Service that exists on the same port', () => {
    const api = read('apiservice.yaml').find(
      (d) => (d as V1APIService).kind === 'APIService',
    ) as V1APIService;
    const svc = (read('service.yaml') as V1Service[]).find(
      (d) => d.metadata?.name === api.spec?.service?.name,
    );
    expect(api.metadata?.name).toBe(APISERVICE_NAME);
    expect(api.spec).toMatchObject({ group: GROUP, version: VERSION });
    expect(svc?.metadata?.namespace).toBe(api.spec?.service?.namespace);
    expect(svc?.spec?.ports?.map((p) => p.port)).toContain(api.spec?.service?.port);
  });

  it('nodeloads-reader.yaml lets readers get, list and watch nodeloads', () => {
    const docs = read('nodeloads-reader.yaml') as {
      kind: string;
      rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    }[];
    const reader = docs.find((d) => d.kind === 'ClusterRole');
    expect(reader?.rules).toEqual([
      { apiGroups: [GROUP], resources: [NODELOADS.plural], verbs: NODELOADS.verbs },
    ]);
  });
});

import type { V1APIService } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { APISERVICE_NAME, GROUP, VERSION } from '../../src/aggregated/api.js';
import { availableCondition, renderLocalApiService } from './apiservice.js';

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

// The gateway's KubeConfig reuses connections: 40 API calls must not mean 40 TLS handshakes
// (client-node 2.0.1 alone builds a new connection pool for every request).
import diagnostics from 'node:diagnostics_channel';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { PooledKubeConfig } from '../../src/cluster/kubeconfig.js';
import { provided } from './context.js';

async function connectionsFor(kc: KubeConfig, calls: number): Promise<number> {
  let connects = 0;
  const onConnect = () => {
    connects++;
  };
  diagnostics.subscribe('undici:client:connected', onConnect);
  try {
    const core = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < calls; i++) await core.listNamespace({ limit: 1 });
  } finally {
    diagnostics.unsubscribe('undici:client:connected', onConnect);
  }
  return connects;
}

describe('PooledKubeConfig', () => {
  it('serves sequential API calls over a handful of connections, where plain KubeConfig opens one per call', async () => {
    const plain = new KubeConfig();
    plain.loadFromFile(provided('kubeconfig'));
    const pooled = new PooledKubeConfig();
    pooled.loadFromFile(provided('kubeconfig'));

    const plainConnects = await connectionsFor(plain, 40);
    const pooledConnects = await connectionsFor(pooled, 40);
    // The baseline proves the probe sees connections at all.
    expect(plainConnects).toBeGreaterThanOrEqual(30);
    expect(pooledConnects).toBeLessThanOrEqual(2);
  });
});

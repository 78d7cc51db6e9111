// manifests/overlays/local as `npm run demo` uses it: rendered by kubectl's kustomize with the gateway's
// loopback port and CA filled in and applied (test/cluster/local-overlay.ts, the demo's own function),
// then a gateway started on this machine as the demo starts it — but with --install-crd=false, so the
// CRD it serves is the overlay's. The aggregator then proxies `kubectl get nodeloads` to it, the API
// server calls its mutating webhook by url, and a token bound to the overlay's nodeload:viewer reads
// its user port. The APIService and the webhook configurations keep their real names, so this file has
// a control plane of its own.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../cluster/controlplane.js';
import { applyLocalOverlay, renderLocalOverlay } from '../cluster/local-overlay.js';
import { createFakeNodes, waitForNodesReady } from '../cluster/nodes.js';
import { createViewer } from '../cluster/viewer.js';
import { kubeConfig, kubectl, pkiPath, provided, uniqueName, usePrivateCluster, waitFor } from './context.js';
import {
  type DeployedGateway,
  expectNodeLoadsServed,
  expectSteeredPod,
  permissionErrors,
  startDeployedGateway,
} from './deployed.js';

let gateway: DeployedGateway | undefined;

beforeAll(async () => {
  await usePrivateCluster();
});
afterAll(async () => {
  await gateway?.stop();
});

interface Hook {
  name: string;
  clientConfig: { url?: string; service?: unknown; caBundle?: string };
}

describe('overlays/local', () => {
  it('renders the CRD, the read-only roles, and webhooks and APIService on the loopback port, every placeholder filled', async () => {
    const caPem = readFileSync(pkiPath('ca.crt'), 'utf8');
    const objects = await renderLocalOverlay(provided('kubectlPath'), { port: 18443, caPem });
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'APIService/v1alpha1.nodeload.example.com',
      'ClusterRole/nodeload:nodeloadrules-reader',
      'ClusterRole/nodeload:viewer',
      'CustomResourceDefinition/nodeloadrules.example.com',
      'MutatingWebhookConfiguration/nodeload-gateway-local',
      'Service/nodeload-api',
      'ValidatingWebhookConfiguration/nodeload-gateway-local',
    ]);
    expect(JSON.stringify(objects)).not.toContain('${');
    const hooks = objects
      .filter((o) => o.kind.endsWith('WebhookConfiguration'))
      .flatMap((o) => o['webhooks'] as Hook[]);
    expect(hooks).toHaveLength(5);
    for (const h of hooks) {
      expect(h.clientConfig.url, h.name).toMatch(/^https:\/\/127\.0\.0\.1:18443\/(mutate|validate)$/);
      expect(h.clientConfig.service).toBeUndefined();
      expect(Buffer.from(h.clientConfig.caBundle ?? '', 'base64').toString()).toBe(caPem);
    }
    const api = objects.find((o) => o.kind === 'APIService')?.['spec'] as { service: { port: number } };
    expect(api.service.port).toBe(18443);
  });

  it('applied as the demo applies it, serves a gateway on this machine: aggregated API, webhook by url, the viewer', {
    timeout: 240_000,
  }, async () => {
    const [http = 0, https = 0] = await freePorts(2);
    const caPem = readFileSync(pkiPath('ca.crt'), 'utf8');
    await applyLocalOverlay(provided('kubectlPath'), provided('kubeconfig'), { port: https, caPem });
    await kubectl(['wait', '--for=condition=Established', 'crd/nodeloadrules.example.com', '--timeout=30s']);

    const node = uniqueName('nl-local-node');
    await createFakeNodes(provided('kubeconfig'), [{ name: node, cpu: 4, memory: '8Gi' }]);
    await waitForNodesReady(provided('kubeconfig'), [node]);

    // As the demo starts it (the cluster admin's kubeconfig, the test PKI's serving certificate).
    gateway = await startDeployedGateway(
      { args: [], env: {}, serviceAccountName: 'default', namespace: 'nodeload-system' },
      {
        kubeconfig: provided('kubeconfig'),
        ports: { http, https },
        flags: {
          'tls-cert-file': pkiPath('serving.crt'),
          'tls-key-file': pkiPath('serving.key'),
          'install-crd': 'false',
        },
      },
    );
    const gw = gateway;
    const base = `http://127.0.0.1:${http}`;
    await waitFor(
      'GET /readyz = 200',
      async () =>
        gw.child.exitCode !== null || (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
      { timeoutMs: 90_000 },
    );
    expect(gw.child.exitCode, gw.output().slice(-3000)).toBeNull();

    // The aggregator reaches the gateway through the overlay's ExternalName Service and caBundle.
    await expectNodeLoadsServed(gw, node);
    // The API server calls the mutating webhook at the overlay's url: a pod a rule covers is steered.
    await expectSteeredPod('nl-local-work', node);

    // The dashboard's login: a token bound to the overlay's nodeload:viewer.
    const viewer = await createViewer(kubeConfig(), { namespace: 'nodeload-demo', name: 'dashboard' });
    const status = await fetch(`${base}/scheduler/status`, {
      headers: { authorization: `Bearer ${viewer.token}` },
    });
    expect(status.status).toBe(200);

    expect(permissionErrors(gw.output())).toEqual([]);
    await waitFor('"gateway started" in the log', async () => gw.output().includes('gateway started'));
    const code = await gw.stop();
    expect(code, gw.output().slice(-3000)).toBe(0);
  });
});

// manifests/overlays/self-signed as it bootstraps in a cluster: the gateway, started as its Deployment
// starts it (the overlay's args, the ServiceAccount's TokenRequest token, exactly the overlay's RBAC),
// makes its CA and serving certificate, writes them into the Secret and the CA into the webhooks' and
// the APIService's caBundle; the aggregator then proxies `kubectl get nodeloads` to it and the API server
// calls its mutating webhook, both verifying it with that caBundle. A second replica serves the same
// certificate from the Secret and writes nothing. The overlay's objects keep their real names
// (nodeload-system, v1alpha1.nodeload.example.com), so this file has a control plane of its own; the
// Service the API server dials becomes an ExternalName to localhost (the ClusterIP is never dialled),
// with the gateway's loopback port in the webhooks and the APIService. A metrics.k8s.io backend is
// registered too, so the node metrics the gateway lists go through its RBAC as well.
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { AdmissionregistrationV1Api, ApiregistrationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../cluster/controlplane.js';
import {
  flagValue,
  GATEWAY_NAME,
  gatewayContainer,
  type KubeObject,
  kustomize,
  MANIFEST_NAMESPACE,
} from '../cluster/deploy.js';
import { createFakeNodes, waitForNodesReady } from '../cluster/nodes.js';
import { type FakeMetricsServer, startFakeMetricsServer } from '../fixtures/metrics-server.js';
import { coreApi, kubeConfig, kubectl, provided, uniqueName, usePrivateCluster, waitFor } from './context.js';
import {
  applyObjects,
  type DeployedGateway,
  expectNodeLoadsServed,
  expectSteeredPod,
  permissionErrors,
  serviceAccountKubeconfig,
  startDeployedGateway,
  tempDir,
} from './deployed.js';

let metrics: FakeMetricsServer | undefined;
const gateways: DeployedGateway[] = [];

beforeAll(async () => {
  await usePrivateCluster();
  metrics = await startFakeMetricsServer({ pkiDir: provided('pkiDir'), kubeconfig: provided('kubeconfig') });
});
afterAll(async () => {
  for (const g of gateways) await g.stop();
  await metrics?.stop();
});

/** The overlay's objects, with the gateway reached on this machine: what the test applies. */
function onLoopback(objects: KubeObject[], httpsPort: number): KubeObject[] {
  return objects
    .filter((o) => o.kind !== 'Deployment')
    .map((o) => {
      if (o.kind === 'Service' && o.metadata.name === GATEWAY_NAME) {
        return { ...o, spec: { type: 'ExternalName', externalName: 'localhost' } };
      }
      if (o.kind === 'APIService') {
        const spec = o['spec'] as { service: Record<string, unknown> };
        return { ...o, spec: { ...spec, service: { ...spec.service, port: httpsPort } } };
      }
      if (o.kind.endsWith('WebhookConfiguration')) {
        const hooks = o['webhooks'] as { clientConfig: { service: Record<string, unknown> } }[];
        return {
          ...o,
          webhooks: hooks.map((h) => ({
            ...h,
            clientConfig: { ...h.clientConfig, service: { ...h.clientConfig.service, port: httpsPort } },
          })),
        };
      }
      return o;
    });
}

/** The certificate a TLS server on this machine presents, verified against `ca` for `servername`. */
function presentedCertificate(port: number, servername: string, ca: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, ca }, () => {
      const peer = socket.getPeerX509Certificate();
      socket.end();
      if (peer) resolve(peer);
      else reject(new Error('no peer certificate'));
    });
    socket.on('error', reject);
  });
}

describe('overlays/self-signed in a cluster', () => {
  it('writes its CA into the caBundles; the aggregator and the webhook client trust it; a second replica serves the same certificate', {
    timeout: 300_000,
  }, async () => {
    const rendered = await kustomize(provided('kubectlPath'), 'overlays/self-signed');
    const container = gatewayContainer(rendered);
    const secretName = flagValue(container.args, 'cert-secret') ?? '';
    expect(flagValue(container.args, 'cert-rotation')).toBe('self-signed');
    const [http0 = 0, https0 = 0, http1 = 0, https1 = 0] = await freePorts(4);
    const objects = onLoopback(rendered, https0);
    // The CRD first, then everything else, as an admin would apply the overlay.
    await applyObjects(objects.filter((o) => o.kind === 'CustomResourceDefinition'));
    await kubectl(['wait', '--for=condition=Established', 'crd/nodeloadrules.example.com', '--timeout=30s']);
    await applyObjects(objects.filter((o) => o.kind !== 'CustomResourceDefinition'));

    const node = uniqueName('nl-ss-node');
    await createFakeNodes(provided('kubeconfig'), [{ name: node, cpu: 4, memory: '8Gi' }]);
    await waitForNodesReady(provided('kubeconfig'), [node]);
    metrics?.setUsage(node, { cpu: '1', memory: '1Gi' });

    const kubeconfig = await serviceAccountKubeconfig(
      MANIFEST_NAMESPACE,
      container.serviceAccountName,
      tempDir('nl-ss-'),
    );
    const leader = await startDeployedGateway(container, {
      kubeconfig,
      ports: { http: http0, https: https0 },
    });
    gateways.push(leader);
    const ready = (gw: DeployedGateway) =>
      waitFor(
        `${gw.identity}: GET /readyz = 200 (or a refused request in the log)`,
        async () =>
          permissionErrors(gw.output()).length > 0 ||
          (await fetch(`http://127.0.0.1:${gw.httpPort}/readyz`).catch(() => undefined))?.status === 200,
        { timeoutMs: 120_000 },
      );
    await ready(leader);
    expect(permissionErrors(leader.output())).toEqual([]);

    // The Secret and the caBundles it wrote.
    const secret = await coreApi().readNamespacedSecret({ name: secretName, namespace: MANIFEST_NAMESPACE });
    const pem = (k: string) => Buffer.from(secret.data?.[k] ?? '', 'base64').toString();
    const caBundle = secret.data?.['ca.crt'] ?? '';
    expect(new X509Certificate(pem('ca.crt')).ca).toBe(true);
    expect(new X509Certificate(pem('tls.crt')).subjectAltName).toContain(
      `DNS:${GATEWAY_NAME}.${MANIFEST_NAMESPACE}.svc`,
    );
    const admission = kubeConfig().makeApiClient(AdmissionregistrationV1Api);
    await waitFor('caBundles in both webhook configurations', async () => {
      const hooks = [
        ...((await admission.readMutatingWebhookConfiguration({ name: GATEWAY_NAME })).webhooks ?? []),
        ...((await admission.readValidatingWebhookConfiguration({ name: GATEWAY_NAME })).webhooks ?? []),
      ];
      return hooks.length === 5 && hooks.every((h) => h.clientConfig.caBundle === caBundle);
    });
    const registration = kubeConfig().makeApiClient(ApiregistrationV1Api);
    expect(
      (await registration.readAPIService({ name: 'v1alpha1.nodeload.example.com' })).spec?.caBundle,
    ).toBe(caBundle);

    // The aggregator proxies to the gateway, verifying it with that caBundle.
    await expectNodeLoadsServed(leader, node);
    // The API server calls the mutating webhook (TLS verified by the caBundle): a covered pod is steered.
    const work = await expectSteeredPod('nl-ss-work', node);
    await waitFor('the steered pod bound by the leader', async () => {
      const p = await coreApi().readNamespacedPod({ namespace: work, name: 'steered' });
      return p.spec?.nodeName === node;
    });

    // A second replica: not the leader, serves what the Secret holds, writes nothing.
    const follower = await startDeployedGateway(container, {
      kubeconfig,
      ports: { http: http1, https: https1 },
      identity: `${MANIFEST_NAMESPACE}-gateway-1`,
    });
    gateways.push(follower);
    await ready(follower);
    const presented = await presentedCertificate(
      https1,
      `${GATEWAY_NAME}.${MANIFEST_NAMESPACE}.svc`,
      pem('ca.crt'),
    );
    expect(presented.fingerprint256).toBe(new X509Certificate(pem('tls.crt')).fingerprint256);

    expect(permissionErrors(leader.output())).toEqual([]);
    expect(permissionErrors(follower.output())).toEqual([]);
    expect(leader.output().match(/serving certificate written/g)).toHaveLength(1);
    expect(follower.output()).not.toContain('serving certificate written');
    expect(follower.output()).not.toContain('caBundle updated');
    expect(await follower.stop()).toBe(0);
    expect(await leader.stop()).toBe(0);
  });
});

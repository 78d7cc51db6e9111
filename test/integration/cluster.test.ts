// Proves the local control plane is a real cluster: KWOK nodes, binding, controller manager, version stamp.
import { AppsV1Api } from '@kubernetes/client-node';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { createFakeNodes, deleteFakeNodes } from '../cluster/nodes.js';
import { coreApi, kubeConfig, kubectl, sleep, uniqueName, waitFor, withNamespace } from './context.js';

describe('local control plane', () => {
  it('keeps a pod for nodeload-scheduler Pending until it is bound, then KWOK runs it', async () => {
    const core = coreApi();
    const namespace = await withNamespace('it-bind');
    const node = uniqueName('it-node');
    await createFakeNodes(inject('kubeconfig'), [{ name: node, cpu: 4, memory: '8Gi', pods: 20 }]);
    onTestFinished(async () => {
      await deleteFakeNodes(inject('kubeconfig'), [node]);
    });
    await waitFor(`node ${node} Ready`, async () => {
      const n = await core.readNode({ name: node });
      return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    });

    const name = 'web';
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name, labels: { app: 'web' } },
        spec: {
          schedulerName: 'nodeload-scheduler',
          containers: [
            { name: 'app', image: 'registry.invalid/app:1', resources: { requests: { cpu: '100m' } } },
          ],
        },
      },
    });

    // Nobody schedules for nodeload-scheduler in this test: the pod must stay unbound.
    await sleep(3000);
    const pending = await core.readNamespacedPod({ name, namespace });
    expect(pending.spec?.nodeName).toBeUndefined();
    expect(pending.status?.phase).toBe('Pending');

    await core.createNamespacedPodBinding({
      name,
      namespace,
      body: {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name },
        target: { apiVersion: 'v1', kind: 'Node', name: node },
      },
    });

    const running = await waitFor(
      `pod ${namespace}/${name} Running on ${node}`,
      async () => {
        const p = await core.readNamespacedPod({ name, namespace });
        return p.status?.phase === 'Running' ? p : undefined;
      },
      { timeoutMs: 45_000 },
    );
    expect(running.spec?.nodeName).toBe(node);
    expect(running.status?.podIP).toBeTruthy();
  });

  it('runs the controller manager: a Deployment of 3 replicas gets 3 pods', async () => {
    const namespace = await withNamespace('it-deploy');
    const apps = kubeConfig().makeApiClient(AppsV1Api);
    const core = coreApi();
    const labels = { app: 'replicated' };
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'replicated' },
        spec: {
          replicas: 3,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              schedulerName: 'nodeload-scheduler',
              containers: [{ name: 'app', image: 'registry.invalid/app:1' }],
            },
          },
        },
      },
    });

    const pods = await waitFor(
      '3 pods created by the ReplicaSet controller',
      async () => {
        const list = await core.listNamespacedPod({ namespace, labelSelector: 'app=replicated' });
        return list.items.length === 3 ? list.items : undefined;
      },
      { timeoutMs: 45_000 },
    );
    expect(pods.every((p) => p.metadata?.ownerReferences?.[0]?.kind === 'ReplicaSet')).toBe(true);
  });

  it('reports the stamped server version v1.36.3 through kubectl', async () => {
    const out = JSON.parse(await kubectl(['version', '-o', 'json'])) as {
      clientVersion: { gitVersion: string };
      serverVersion: { gitVersion: string; major: string; minor: string };
    };
    expect(out.serverVersion.gitVersion).toBe('v1.36.3');
    expect(out.serverVersion.minor).toBe('36');
    expect(out.clientVersion.gitVersion).toBe('v1.36.3');
  });
});

// API Priority and Fairness as the deployed gateway meets it on the real API server: its requests are
// classified by the base's FlowSchema (kube-scheduler's priority level), and a bind the API server
// rejects with 429 + Retry-After is sent again within the same binding cycle, as client-go sends it —
// not failed, backed off and counted as an error.
import type { V1Pod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { KubeObject } from '../cluster/deploy.js';
import { metricSum } from '../cluster/prom-text.js';
import { coreApi, uniqueName, waitFor, withNamespace } from './context.js';
import { applyObjects, type DeployedGateway, deleteObjects, kubectlRun } from './deployed.js';

/** An API server counter (its /metrics, read as the admin) summed over the series carrying `labels`. */
async function apiserverCounter(metric: string, labels: Record<string, string>): Promise<number> {
  return metricSum((await kubectlRun(['get', '--raw', '/metrics'])).stdout, metric, labels);
}

/** Requests the API server dispatched under the FlowSchema, at the priority level. */
export const dispatched = (flowSchema: string, priorityLevel: string) =>
  apiserverCounter('apiserver_flowcontrol_dispatched_requests_total', {
    flow_schema: flowSchema,
    priority_level: priorityLevel,
  });

/** The FlowSchema's status says the API server has taken it in (its priority level found). */
async function inForce(name: string): Promise<boolean> {
  const { stdout } = await kubectlRun(['get', 'flowschema', name, '-o', 'json']);
  const conditions = (JSON.parse(stdout) as { status?: { conditions?: { type: string; status: string }[] } })
    .status?.conditions;
  return conditions?.some((c) => c.type === 'Dangling' && c.status === 'False') ?? false;
}

/**
 * A priority level of no seats that rejects (a request is admitted only while none of its flow runs) and
 * a FlowSchema sending the gateway's binds in a namespace of the test's there, ahead of the base's. Pods
 * are created 16 at a time until the API server has rejected one of those binds; then the throttle is
 * removed and every pod must be bound with no bind failed in the gateway's log.
 */
export async function expectThrottledBindsRetried(o: {
  gw: DeployedGateway;
  schedulerName: string;
  serviceAccount: { namespace: string; name: string };
  /** Where the pods go (a node of the test's, so they take nothing from other tests' nodes). */
  node: string;
  /** Cluster-scoped objects to remove after the file (the throttle, if the test fails before). */
  cleanup: KubeObject[];
}): Promise<void> {
  const ns = await withNamespace('nl-deploy-apf');
  const name = uniqueName('nl-deploy-apf');
  const throttle: KubeObject[] = [
    {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: 0,
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: { type: 'Reject' },
        },
      },
    },
    {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name },
      spec: {
        priorityLevelConfiguration: { name },
        matchingPrecedence: 500,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'ServiceAccount', serviceAccount: o.serviceAccount }],
            resourceRules: [
              { verbs: ['create'], apiGroups: [''], resources: ['pods/binding'], namespaces: [ns] },
            ],
          },
        ],
      },
    },
  ];
  o.cleanup.push(...throttle);
  await applyObjects(throttle);
  await waitFor(`FlowSchema ${name} in force`, () => inForce(name));

  const core = coreApi();
  const pod = (podName: string): V1Pod => ({
    metadata: { name: podName },
    spec: {
      schedulerName: o.schedulerName,
      nodeSelector: { 'kubernetes.io/hostname': o.node },
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
  });
  const rejected = () =>
    apiserverCounter('apiserver_flowcontrol_rejected_requests_total', { flow_schema: name });
  let created = 0;
  await waitFor(
    'the API server rejected a bind of the gateway (429)',
    async () => {
      if ((await rejected()) > 0) return true;
      if (created >= 64) return false;
      const batch = Array.from({ length: 16 }, (_, i) => `p-${created + i}`);
      created += batch.length;
      await Promise.all(batch.map((n) => core.createNamespacedPod({ namespace: ns, body: pod(n) })));
      return false;
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
  // Out of the way: the retries now get through.
  await deleteObjects(throttle);

  await waitFor(`all ${created} pods bound`, async () => {
    const pods = (await core.listNamespacedPod({ namespace: ns })).items;
    return pods.length === created && pods.every((p) => p.spec?.nodeName === o.node);
  });
  const failedBinds = o.gw
    .output()
    .split('\n')
    .filter((l) => l.includes('bind failed') && l.includes(ns));
  expect(failedBinds).toEqual([]);
}

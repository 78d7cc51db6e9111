// The webhook bench's workload: the NodeLoadRules put in the cluster and the AdmissionReview sent.
import { BENCH_NODE_PREFIX, ZONE_LABEL } from './lib.js';

export const WEBHOOK_NAMESPACE = 'bench-webhook';
/** Replaced by each request's uid in the serialised review. */
export const UID_MARK = '@@UID@@';

const nodeName = (i: number) => `${BENCH_NODE_PREFIX}-${String(i).padStart(3, '0')}`;

/** Five rules: three cover the benchmark pod (their restrictions intersect to 20 nodes), two do not. */
export function webhookRules(nodes: number) {
  const range = (from: number, to: number) =>
    Array.from({ length: Math.max(0, Math.min(to, nodes) - from) }, (_, i) => nodeName(from + i));
  return [
    {
      name: 'web-pool',
      spec: {
        maxCPU: 80,
        maxMemory: 80,
        podSelector: { matchLabels: { app: 'web' } },
        allowedNodes: range(0, 40),
      },
    },
    {
      name: 'frontend-zones',
      spec: {
        podSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['frontend', 'edge'] }] },
        nodeSelector: {
          matchExpressions: [{ key: ZONE_LABEL, operator: 'In', values: ['zone-a', 'zone-b'] }],
        },
      },
    },
    { name: 'namespace-headroom', spec: { maxCPU: 90, maxMemory: 90 } },
    {
      name: 'batch-only',
      spec: { podSelector: { matchLabels: { app: 'batch' } }, allowedNodes: range(nodes - 10, nodes) },
    },
    {
      name: 'gpu',
      spec: {
        podSelector: { matchLabels: { accelerator: 'gpu' } },
        nodeSelector: { matchLabels: { 'nvidia.com/gpu.present': 'true' } },
      },
    },
  ];
}

/**
 * The AdmissionReview the API server sends for a Deployment's pod: after ServiceAccount admission (the
 * projected token volume) and default tolerations, two containers with env, probes and mounts. ~5 KB.
 */
export function podReviewTemplate(namespace: string): string {
  const env = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      name: `${prefix}_SETTING_${i}`,
      value: `value-${i}`,
    }));
  const probe = (p: string) => ({
    httpGet: { path: p, port: 8080, scheme: 'HTTP' },
    initialDelaySeconds: 5,
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
  });
  const mounts = [
    { name: 'config', mountPath: '/etc/web', readOnly: true },
    { name: 'cache', mountPath: '/var/cache/web' },
    {
      name: 'kube-api-access-7xk2p',
      mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
      readOnly: true,
    },
  ];
  const container = (name: string, image: string, envCount: number) => ({
    name,
    image,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: env(name.toUpperCase(), envCount),
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    volumeMounts: mounts,
    livenessProbe: probe('/healthz'),
    readinessProbe: probe('/readyz'),
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  });
  const pod = {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      generateName: 'web-7c9f8d6b5-',
      namespace,
      labels: {
        app: 'web',
        tier: 'frontend',
        version: 'v2.14.1',
        team: 'storefront',
        'pod-template-hash': '7c9f8d6b5',
      },
      annotations: {
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9090',
        'kubectl.kubernetes.io/restartedAt': '2026-11-29T08:12:44Z',
        'example.com/owner': 'storefront-oncall@example.com',
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-7c9f8d6b5',
          uid: '5b0c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-11-29T08:12:45Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {} } } },
        },
      ],
    },
    spec: {
      volumes: [
        { name: 'config', configMap: { name: 'web-config', defaultMode: 420 } },
        { name: 'cache', emptyDir: { sizeLimit: '1Gi' } },
        {
          name: 'kube-api-access-7xk2p',
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [
                    { path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
                  ],
                },
              },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [
        container('web', 'registry.example.com/storefront/web:v2.14.1', 8),
        container('proxy', 'registry.example.com/platform/envoy:v1.33.2', 4),
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      securityContext: { runAsUser: 10001, fsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: ZONE_LABEL,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { app: 'web' } },
        },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {},
  };
  const review = {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid: UID_MARK,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      namespace,
      operation: 'CREATE',
      userInfo: {
        username: 'system:serviceaccount:kube-system:replicaset-controller',
        uid: '0f1e2d3c-4b5a-4968-8776-655443322110',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
      },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
  return JSON.stringify(review);
}

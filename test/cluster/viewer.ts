/**
 * A read-only user of the gateway's port 8080, as an admin would hand one out: a ServiceAccount bound to
 * a ClusterRole that lists exactly what the dashboard and GraphiQL read, and a token for it from
 * TokenRequest. The demo prints a login link with it; the browser test signs in with one.
 */
import {
  CoreV1Api,
  type KubeConfig,
  RbacAuthorizationV1Api,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { isApiException } from './nodes.js';

/** Everything the dashboard shows: pods, pending pods and decisions, rules and what-ifs, nodes, metrics. */
export const DASHBOARD_VIEWER_RULES: V1PolicyRule[] = [
  { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['list'] },
  { apiGroups: ['example.com'], resources: ['nodeloadrules'], verbs: ['get', 'list'] },
  { nonResourceURLs: ['/metrics', '/scheduler/status'], verbs: ['get'] },
];

async function created(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!isApiException(err, 409)) throw err; // a demo run again on the same cluster
  }
}

export interface Viewer {
  /** The ServiceAccount's user name, as the gateway sees it. */
  user: string;
  token: string;
  /** Deletes the ClusterRole and its binding (the ServiceAccount goes with its namespace). */
  remove(): Promise<void>;
}

export async function createViewer(
  kc: KubeConfig,
  opts: { namespace: string; name: string; expirationSeconds?: number },
): Promise<Viewer> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const { namespace, name } = opts;
  const role = `nodeload-viewer:${namespace}:${name}`;
  await created(() => core.createNamespace({ body: { metadata: { name: namespace } } }));
  await created(() => core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }));
  await created(() =>
    rbac.createClusterRole({ body: { metadata: { name: role }, rules: DASHBOARD_VIEWER_RULES } }),
  );
  await created(() =>
    rbac.createClusterRoleBinding({
      body: {
        metadata: { name: role },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ kind: 'ServiceAccount', namespace, name }],
      },
    }),
  );
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: opts.expirationSeconds ?? 12 * 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  return {
    user: `system:serviceaccount:${namespace}:${name}`,
    token,
    async remove() {
      for (const del of [
        () => rbac.deleteClusterRoleBinding({ name: role }),
        () => rbac.deleteClusterRole({ name: role }),
      ]) {
        try {
          await del();
        } catch (err) {
          if (!isApiException(err, 404)) throw err;
        }
      }
    },
  };
}

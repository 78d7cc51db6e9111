/**
 * A read-only user of the gateway's port 8080, as an admin would hand one out: a ServiceAccount bound
 * with a ClusterRoleBinding to the role nodeload ships for it (manifests/viewer/viewer-clusterrole.yaml,
 * nodeload:viewer; created from that file where the cluster lacks it), and a token for it from
 * TokenRequest. The demo prints a login link with it; the browser test signs in with one.
 */
import { readFileSync } from 'node:fs';
import {
  CoreV1Api,
  type KubeConfig,
  loadAllYaml,
  RbacAuthorizationV1Api,
  type V1ClusterRole,
} from '@kubernetes/client-node';
import { manifestPath } from './manifests.js';
import { isApiException } from './nodes.js';

/** The shipped file and the role in it that the dashboard's users are bound to. */
export const VIEWER_MANIFEST = manifestPath('viewer/viewer-clusterrole.yaml');
export const VIEWER_ROLE = 'nodeload:viewer';

/** The ClusterRoles of the shipped file, as written. */
export function shippedViewerRoles(): V1ClusterRole[] {
  return (loadAllYaml(readFileSync(VIEWER_MANIFEST, 'utf8')) as V1ClusterRole[]).filter(
    (o) => o?.kind === 'ClusterRole',
  );
}

async function created(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!isApiException(err, 409)) throw err; // a demo run again on the same cluster, a parallel test
  }
}

/** Creates the shipped roles where absent and brings existing ones to the shipped rules. */
async function ensureShippedRoles(rbac: RbacAuthorizationV1Api): Promise<void> {
  for (const role of shippedViewerRoles()) {
    const name = role.metadata?.name ?? '';
    try {
      const current = await rbac.readClusterRole({ name });
      if (JSON.stringify(current.rules) === JSON.stringify(role.rules)) continue;
      await rbac.replaceClusterRole({
        name,
        body: { ...role, metadata: { ...role.metadata, resourceVersion: current.metadata?.resourceVersion } },
      });
    } catch (err) {
      if (isApiException(err, 404)) await created(() => rbac.createClusterRole({ body: role }));
      else if (!isApiException(err, 409)) throw err; // replaced by a parallel caller: the same rules
    }
  }
}

export interface Viewer {
  /** The ServiceAccount's user name, as the gateway sees it. */
  user: string;
  token: string;
  /** Deletes the binding (the ServiceAccount goes with its namespace; the shipped role stays, as the CRD). */
  remove(): Promise<void>;
}

export async function createViewer(
  kc: KubeConfig,
  opts: { namespace: string; name: string; expirationSeconds?: number },
): Promise<Viewer> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const { namespace, name } = opts;
  const binding = `${VIEWER_ROLE}:${namespace}:${name}`;
  await created(() => core.createNamespace({ body: { metadata: { name: namespace } } }));
  await created(() => core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }));
  await ensureShippedRoles(rbac);
  await created(() =>
    rbac.createClusterRoleBinding({
      body: {
        metadata: { name: binding },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: VIEWER_ROLE },
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
      try {
        await rbac.deleteClusterRoleBinding({ name: binding });
      } catch (err) {
        if (!isApiException(err, 404)) throw err;
      }
    },
  };
}

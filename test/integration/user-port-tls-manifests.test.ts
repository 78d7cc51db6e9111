// The user port's TLS in the deployable manifests: the chart's userPort.tls values and the kustomize
// components user-port-tls and user-port-client-ca mount the Secret (and the CA's ConfigMap), pass
// --user-tls-cert-file/--user-tls-key-file (and --user-client-ca-file) and probe 8080 over HTTPS; without
// them nothing of it is rendered. Rendering only: helm is built from its Go module like the control plane
// (deploy.test.ts dry-runs a rendering with these values against the API server).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildHelm,
  comparable,
  gatewayContainer,
  helmTemplate,
  type KubeObject,
  kustomize,
  kustomizeWithComponents,
} from '../cluster/deploy.js';
import { provided } from './context.js';

let helm: string;
beforeAll(async () => {
  helm = await buildHelm();
}, 1_800_000);

interface Named {
  name: string;
  [field: string]: unknown;
}
type Probe = { httpGet: { scheme?: string } };
interface GatewayPod {
  volumes?: Named[];
  containers: {
    name: string;
    volumeMounts?: Named[];
    startupProbe: Probe;
    readinessProbe: Probe;
    livenessProbe: Probe;
  }[];
}

/** What the user port's TLS adds to the gateway's pod: flags, mounts and volumes (by name), probe schemes. */
function userPortTls(objects: KubeObject[]) {
  const deployment = objects.find((o) => o.kind === 'Deployment');
  if (!deployment) throw new Error('no Deployment in the rendering');
  const pod = (deployment['spec'] as { template: { spec: GatewayPod } }).template.spec;
  const container = pod.containers.find((c) => c.name === 'gateway');
  const ours = (list: Named[] | undefined) =>
    (list ?? []).filter((x) => x.name.startsWith('user-')).sort((a, b) => a.name.localeCompare(b.name));
  return {
    flags: gatewayContainer(objects).args.filter((a) => a.startsWith('--user-')),
    mounts: ours(container?.volumeMounts),
    volumes: ours(pod.volumes),
    probeSchemes: [container?.startupProbe, container?.readinessProbe, container?.livenessProbe].map(
      (p) => p?.httpGet.scheme ?? 'HTTP',
    ),
  };
}

const NONE = { flags: [], mounts: [], volumes: [], probeSchemes: ['HTTP', 'HTTP', 'HTTP'] };
const SERVING = {
  flags: [
    '--user-tls-cert-file=/etc/nodeload/user-tls/tls.crt',
    '--user-tls-key-file=/etc/nodeload/user-tls/tls.key',
  ],
  mount: { name: 'user-tls', mountPath: '/etc/nodeload/user-tls', readOnly: true },
  volume: (secretName: string) => ({ name: 'user-tls', secret: { secretName } }),
};
const CLIENT_CA = {
  flag: '--user-client-ca-file=/etc/nodeload/user-client-ca/ca.crt',
  mount: { name: 'user-client-ca', mountPath: '/etc/nodeload/user-client-ca', readOnly: true },
  volume: (name: string) => ({ name: 'user-client-ca', configMap: { name } }),
};
const HTTPS = ['HTTPS', 'HTTPS', 'HTTPS'];

/** Every object but the Deployment, comparably: what the user port's TLS must leave alone. */
const allButDeployment = (objects: KubeObject[]) =>
  comparable(objects.filter((o) => o.kind !== 'Deployment'));

describe("the Helm chart's userPort.tls", () => {
  it('renders none of it by default', async () => {
    expect(userPortTls(await helmTemplate(helm))).toEqual(NONE);
  });

  it('secretName: 8080 serves HTTPS with the Secret mounted, probed over HTTPS; nothing else changes', async () => {
    const defaults = await helmTemplate(helm);
    for (const set of [
      [],
      ['certificates.mode=provided', 'certificates.provided.caBundle=Zm9v', 'mode=extender'],
    ]) {
      const objects = await helmTemplate(helm, { set: [...set, 'userPort.tls.secretName=my-user-tls'] });
      expect(userPortTls(objects), set.join()).toEqual({
        flags: SERVING.flags,
        mounts: [SERVING.mount],
        volumes: [SERVING.volume('my-user-tls')],
        probeSchemes: HTTPS,
      });
      if (set.length === 0) expect(allButDeployment(objects)).toEqual(allButDeployment(defaults));
    }
  });

  it('clientCAConfigMap as well: --user-client-ca-file from the ConfigMap', async () => {
    const objects = await helmTemplate(helm, {
      set: ['userPort.tls.secretName=my-user-tls', 'userPort.tls.clientCAConfigMap=my-user-ca'],
    });
    expect(userPortTls(objects)).toEqual({
      flags: [...SERVING.flags, CLIENT_CA.flag],
      mounts: [CLIENT_CA.mount, SERVING.mount],
      volumes: [CLIENT_CA.volume('my-user-ca'), SERVING.volume('my-user-tls')],
      probeSchemes: HTTPS,
    });
  });

  it('refuses clientCAConfigMap without secretName, as the gateway would', async () => {
    await expect(helmTemplate(helm, { set: ['userPort.tls.clientCAConfigMap=my-user-ca'] })).rejects.toThrow(
      'userPort.tls.clientCAConfigMap authenticates TLS client certificates: give userPort.tls.secretName too',
    );
  });
});

describe('the kustomize components user-port-tls and user-port-client-ca', () => {
  it.each(['base', 'overlays/self-signed'])(
    'add to %s what the chart renders for the same Secret and ConfigMap, and nothing else',
    async (resource) => {
      const kubectl = provided('kubectlPath');
      const plain = await kustomize(kubectl, resource);
      expect(userPortTls(plain)).toEqual(NONE);
      const serving = await kustomizeWithComponents(kubectl, resource, ['components/user-port-tls']);
      expect(userPortTls(serving)).toEqual(
        userPortTls(await helmTemplate(helm, { set: ['userPort.tls.secretName=nodeload-user-tls'] })),
      );
      expect(allButDeployment(serving)).toEqual(allButDeployment(plain));
      const withCa = await kustomizeWithComponents(kubectl, resource, [
        'components/user-port-tls',
        'components/user-port-client-ca',
      ]);
      expect(userPortTls(withCa)).toEqual({
        flags: [...SERVING.flags, CLIENT_CA.flag],
        mounts: [CLIENT_CA.mount, SERVING.mount],
        volumes: [CLIENT_CA.volume('nodeload-user-client-ca'), SERVING.volume('nodeload-user-tls')],
        probeSchemes: HTTPS,
      });
    },
  );
});

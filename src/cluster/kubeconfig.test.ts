// Without --kubeconfig the gateway takes the in-cluster configuration, as in its Deployment: the API
// server from KUBERNETES_SERVICE_HOST/PORT, the ServiceAccount's token, CA and namespace from the files
// the kubelet mounts — under $NODELOAD_SERVICEACCOUNT_ROOT when the deploy test sets it.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadKubeConfig, SERVICEACCOUNT_ROOT_ENV } from './kubeconfig.js';

const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/** What the kubelet sets in every container; `root` is the test seam (unset in a pod). */
function stubInCluster(host: string, port: string, root: string | undefined): void {
  vi.stubEnv('KUBERNETES_SERVICE_HOST', host);
  vi.stubEnv('KUBERNETES_SERVICE_PORT', port);
  vi.stubEnv(SERVICEACCOUNT_ROOT_ENV, root);
}

describe('loadKubeConfig without a kubeconfig path', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.unstubAllEnvs();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('reads the in-cluster environment and the ServiceAccount files under the seam root', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'nl-sa-'));
    dirs.push(root);
    const mount = path.join(root, MOUNT);
    mkdirSync(mount, { recursive: true });
    writeFileSync(path.join(mount, 'token'), 'sa-token');
    writeFileSync(path.join(mount, 'ca.crt'), 'not checked here');
    writeFileSync(path.join(mount, 'namespace'), 'nodeload-system');
    stubInCluster('127.0.0.1', '6443', root);

    const kc = loadKubeConfig(undefined);
    expect(kc.getCurrentCluster()).toMatchObject({
      server: 'https://127.0.0.1:6443',
      caFile: path.join(mount, 'ca.crt'),
      skipTLSVerify: false,
    });
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('nodeload-system');
    const opts: RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    expect(opts.headers).toMatchObject({ Authorization: 'Bearer sa-token' });
    expect(String(opts.ca)).toBe('not checked here');
  });

  it('reads the kubelet’s mount itself when the seam is unset', () => {
    stubInCluster('fd00::1', '443', undefined);
    const kc = loadKubeConfig(undefined);
    expect(kc.getCurrentCluster()).toMatchObject({
      server: 'https://[fd00::1]:443',
      caFile: `${MOUNT}/ca.crt`,
    });
    expect(kc.getCurrentUser()?.authProvider?.config?.tokenFile).toBe(`${MOUNT}/token`);
  });
});

// The gateway's CRD handling and the base's RBAC agree: the Deployment runs with --install-crd=false and
// the ServiceAccount may only get the CRD, so a gateway started before the CRD is applied (exactly as the
// Deployment starts it, with a TokenRequest token of the base's RBAC) makes no request the API server
// refuses: it says in its log that the CRD is missing and is not live, and becomes ready once an admin
// applies the CRD; one stopped (SIGTERM) while it waits exits 0 and says so. The CRD is cluster-wide and
// other files need it, so this file has a control plane of its own, where the CRD starts absent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flagValue, gatewayContainer, identityObjects, kustomize } from '../cluster/deploy.js';
import { kubectl, pkiPath, provided, usePrivateCluster, waitFor } from './context.js';
import {
  applyObjects,
  type DeployedGateway,
  kubectlRun,
  permissionErrors,
  serviceAccountKubeconfig,
  startDeployedGateway,
  tempDir,
} from './deployed.js';

const CRD = 'customresourcedefinitions.apiextensions.k8s.io/nodeloadrules.example.com';
let gateway: DeployedGateway | undefined;

beforeAll(async () => {
  await usePrivateCluster();
});
afterAll(async () => {
  await gateway?.stop();
});

/** The base rendered, its ServiceAccount and roles applied (not its CRD): the Deployment's gateway. */
async function deployedBase() {
  const rendered = await kustomize(provided('kubectlPath'), 'base');
  const container = gatewayContainer(rendered);
  expect(flagValue(container.args, 'install-crd')).toBe('false');
  await applyObjects(identityObjects(rendered));
  return { rendered, container };
}

/** A gateway started as the Deployment starts it, with a TokenRequest token of the base's RBAC. */
async function startAsDeployed(container: Awaited<ReturnType<typeof deployedBase>>['container']) {
  const kubeconfig = await serviceAccountKubeconfig(
    container.namespace,
    container.serviceAccountName,
    tempDir('nl-crd-'),
  );
  return startDeployedGateway(container, {
    kubeconfig,
    // The kubelet would mount the Secret here; the cluster's test PKI stands in (SANs for loopback).
    flags: { 'tls-cert-file': pkiPath('serving.crt'), 'tls-key-file': pkiPath('serving.key') },
  });
}

describe('the base without its CRD applied yet', () => {
  // The kubelet sends SIGTERM to a pod deleted (or rolled) while it still waits for the CRD.
  it('a gateway waiting for the CRD stops cleanly on SIGTERM: exit code 0 and a log line', {
    timeout: 120_000,
  }, async () => {
    const { container } = await deployedBase();
    await expect(kubectl(['get', CRD])).rejects.toThrow(/NotFound|not found/);
    const gw = await startAsDeployed(container);
    try {
      const waiting = await waitFor(
        'the gateway logs that the CRD is missing',
        async () =>
          gw.child.exitCode !== null || gw.output().includes('nodeloadrules.example.com is not installed'),
        { timeoutMs: 90_000 },
      );
      expect(waiting).toBe(true);
      expect(gw.child.exitCode, gw.output().slice(-2000)).toBeNull();
    } finally {
      // SIGTERM, then the exit code.
      const code = await gw.stop();
      expect(code, gw.output().slice(-2000)).toBe(0);
    }
    const lines = gw
      .output()
      .split('\n')
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as { msg?: string; signal?: string; started?: boolean }];
        } catch {
          return [];
        }
      });
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM', started: false }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'stopped before the start finished' }));
    expect(gw.output()).not.toContain('gateway started');
    expect(permissionErrors(gw.output())).toEqual([]);
  });

  it('the ServiceAccount may get the CRD only; the gateway waits for it without a refused request, then gets ready', {
    timeout: 180_000,
  }, async () => {
    const { rendered, container } = await deployedBase();
    const sa = `system:serviceaccount:${container.namespace}:${container.serviceAccountName}`;
    // kubectl auth can-i answers "no" with exit code 1.
    const canI = (verb: string, resource: string) =>
      kubectlRun(['auth', 'can-i', verb, resource, `--as=${sa}`]).then(
        (r) => r.stdout.trim() === 'yes',
        () => false,
      );
    // What --install-crd=true would need, and the base does not grant (create cannot be limited by name).
    expect(await canI('get', CRD)).toBe(true);
    expect(await canI('create', 'customresourcedefinitions.apiextensions.k8s.io')).toBe(false);
    expect(await canI('update', CRD)).toBe(false);
    await expect(kubectl(['get', CRD])).rejects.toThrow(/NotFound|not found/);

    gateway = await startAsDeployed(container);
    const gw = gateway;
    const base = `http://127.0.0.1:${gw.httpPort}`;
    const waiting = await waitFor(
      'the gateway logs that the CRD is missing (or a refused request)',
      async () =>
        permissionErrors(gw.output()).length > 0 ||
        gw.child.exitCode !== null ||
        gw.output().includes('nodeloadrules.example.com is not installed'),
      { timeoutMs: 90_000 },
    );
    expect(waiting).toBe(true);
    expect(permissionErrors(gw.output())).toEqual([]);
    expect(gw.child.exitCode, gw.output().slice(-2000)).toBeNull();
    expect(gw.output()).toContain('kubectl apply -k manifests/crd');
    // Its ports open only once the CRD serves it: the startup probe sees a pod that is not live.
    expect(await fetch(`${base}/livez`).catch(() => undefined)).toBeUndefined();

    // The admin applies the CRD: the gateway starts.
    await applyObjects(rendered.filter((o) => o.kind === 'CustomResourceDefinition'));
    const ready = await waitFor(
      'GET /readyz = 200 after the CRD is applied (or a refused request)',
      async () =>
        permissionErrors(gw.output()).length > 0 ||
        gw.child.exitCode !== null ||
        (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
      { timeoutMs: 90_000 },
    );
    expect(ready).toBe(true);
    expect(gw.child.exitCode, gw.output().slice(-2000)).toBeNull();
    expect(gw.output()).toContain('CRD installed and Established');
    expect(permissionErrors(gw.output())).toEqual([]);
    // Ready answers before the start has finished (the leader election's first round is still to come).
    await waitFor('"gateway started" in the log', async () => gw.output().includes('gateway started'));
    expect(await gw.stop()).toBe(0);
    expect(permissionErrors(gw.output())).toEqual([]);
  });
});

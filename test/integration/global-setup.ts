// Starts ONE local control plane (etcd, kube-apiserver, kube-controller-manager, kwok) for the whole
// integration run and provides its paths to the tests (see context.ts). A cluster that cannot be built or
// started fails the run; nothing is skipped.
//
//   NODELOAD_IT_CLUSTER_DIR=.run/cluster   reuse a cluster started with `npm run cluster:up` (not stopped here)
//   NODELOAD_IT_KEEP=1                      keep .run/it-<pid> (logs, pki) after the run
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { ensureCrd } from '../../src/operator/install-crd.js';
import {
  type Cluster,
  type ClusterState,
  clusterStatus,
  killClusterSync,
  readClusterState,
  startCluster,
  stopCluster,
} from '../cluster/controlplane.js';
import type {} from './context.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The NodeLoadRule CRD, installed once before any file runs. Files that start a gateway install it too;
 * were the first install left to them, a file that dry-runs the base's CRD (kubectl apply reads, then
 * creates) could see it created between the read and the create, and fail with AlreadyExists.
 */
async function installRuleCrd(kubeconfigPath: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  await ensureCrd(kc, pino({ level: 'silent' }));
}

function provideCluster(project: TestProject, state: ClusterState): void {
  project.provide('kubeconfig', state.kubeconfig);
  project.provide('clusterDir', state.dir);
  project.provide('binDir', state.binDir);
  project.provide('pkiDir', state.pkiDir);
  project.provide('kubectlPath', state.kubectl);
  project.provide('apiserverUrl', state.apiserverUrl);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const reuse = process.env['NODELOAD_IT_CLUSTER_DIR'];
  if (reuse) {
    const status = await clusterStatus(path.resolve(reuse));
    const state = readClusterState(path.resolve(reuse));
    if (!status || !state || !status.readyz.ok || status.components.some((c) => !c.alive)) {
      throw new Error(
        `NODELOAD_IT_CLUSTER_DIR=${reuse}: no healthy cluster there (npm run cluster:status / cluster:up)`,
      );
    }
    provideCluster(project, state);
    await installRuleCrd(state.kubeconfig);
    return async () => {};
  }

  const dir = path.join(REPO_ROOT, '.run', `it-${process.pid}`);
  const keep = process.env['NODELOAD_IT_KEEP'] === '1';
  // Last resort when vitest exits without running the teardown (Ctrl-C, fatal error): SIGKILL the recorded PIDs.
  const onExit = () => {
    killClusterSync(dir);
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const started = Date.now();
  let cluster: Cluster;
  try {
    cluster = await startCluster({ dir, log: (line) => process.stderr.write(`[integration] ${line}\n`) });
  } catch (err) {
    // startCluster already stopped what it started; keep the dir: the error names the log to read.
    process.off('exit', onExit);
    throw err;
  }
  process.stderr.write(
    `[integration] control plane ready in ${((Date.now() - started) / 1000).toFixed(1)}s\n`,
  );
  provideCluster(project, cluster);
  try {
    await installRuleCrd(cluster.kubeconfig);
  } catch (err) {
    await stopCluster(dir, { graceMs: 5000 });
    process.off('exit', onExit);
    throw err;
  }

  return async () => {
    try {
      await stopCluster(dir, { graceMs: 5000 });
    } finally {
      process.off('exit', onExit);
    }
    if (!keep) await rm(dir, { recursive: true, force: true });
  };
}

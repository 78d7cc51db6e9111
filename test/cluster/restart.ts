// Kill and restart one cluster's kube-apiserver in place (same binary, flags, ports, PKI and etcd data), for
// tests of how clients survive an API server restart. Works on a cluster started by controlplane.ts: it
// reads and updates that cluster's state.json. Use a private cluster (startCluster({ dir })) — restarting
// the shared integration cluster would disturb every other test file.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type ClusterState,
  type ComponentState,
  isComponentAlive,
  probe,
  readClusterState,
  statePath,
} from './controlplane.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function stateOf(dir: string): ClusterState {
  const state = readClusterState(dir);
  if (!state) throw new Error(`no cluster state in ${dir}`);
  return state;
}

function apiServerOf(state: ClusterState): ComponentState {
  const c = state.components.find((x) => x.name === 'kube-apiserver');
  if (!c) throw new Error(`no kube-apiserver recorded in ${state.dir}`);
  return c;
}

async function writeState(state: ClusterState): Promise<void> {
  const file = statePath(state.dir);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`);
  await rename(tmp, file);
}

/** Kills the cluster's kube-apiserver (SIGKILL by default: no graceful close of watches) and waits until it is gone. */
export async function killApiServer(dir: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const apiserver = apiServerOf(stateOf(dir));
  if (!isComponentAlive(apiserver)) return;
  try {
    // Spawned detached by controlplane.ts, so it leads its own process group.
    process.kill(-apiserver.pid, signal);
  } catch {
    process.kill(apiserver.pid, signal);
  }
  const deadline = Date.now() + 15_000;
  while (isComponentAlive(apiserver)) {
    if (Date.now() > deadline)
      throw new Error(`kube-apiserver pid ${apiserver.pid} still alive after ${signal}`);
    await sleep(50);
  }
}

/**
 * Starts kube-apiserver again with its recorded binary and flags, appending to the same log, records the new
 * PID in state.json and waits for /readyz.
 */
export async function startApiServer(dir: string, opts: { readyTimeoutMs?: number } = {}): Promise<number> {
  const state = stateOf(dir);
  const apiserver = apiServerOf(state);
  if (isComponentAlive(apiserver)) throw new Error(`kube-apiserver pid ${apiserver.pid} is still running`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    KWOK_WORKDIR: path.join(state.dir, 'kwok'),
  };
  delete env['KUBECONFIG'];
  const fd = openSync(apiserver.log, 'a');
  let exited: string | undefined;
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(apiserver.bin, apiserver.args, {
      cwd: state.dir,
      env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  child.on('error', (err) => {
    exited = `could not be spawned: ${err.message}`;
  });
  child.on('exit', (code, sig) => {
    exited = `exited with ${sig ?? `code ${code}`}`;
  });
  child.unref();
  if (!child.pid) throw new Error(`kube-apiserver did not start: ${exited ?? 'no pid'}`);
  apiserver.pid = child.pid;
  await writeState(state);

  const tls = {
    ca: readFileSync(state.pki.caCert),
    cert: readFileSync(state.pki.adminCert),
    key: readFileSync(state.pki.adminKey),
  };
  const readyz = `${state.apiserverUrl}/readyz`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 120_000);
  let last = '';
  for (;;) {
    if (exited) throw new Error(`kube-apiserver ${exited} before becoming ready (log: ${apiserver.log})`);
    const r = await probe(readyz, tls);
    if (r.status === 200) return child.pid;
    last = `${r.status || 'no answer'} ${r.body.slice(0, 200)}`;
    if (Date.now() > deadline)
      throw new Error(`kube-apiserver not ready after restart (${last}; log: ${apiserver.log})`);
    await sleep(200);
  }
}

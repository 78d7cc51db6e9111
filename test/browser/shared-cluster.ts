/**
 * One local control plane per vitest process, whichever project asks first. globalSetup files of
 * different projects are loaded as separate module instances, so the registry lives on globalThis;
 * the last user to release it stops the cluster. NODELOAD_IT_CLUSTER_DIR reuses a cluster started by
 * `npm run cluster:up` (never stopped here), as in test/integration/global-setup.ts.
 */
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ClusterState,
  clusterStatus,
  killClusterSync,
  readClusterState,
  startCluster,
  stopCluster,
} from '../cluster/controlplane.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REGISTRY = Symbol.for('nodeload.test.sharedCluster');

interface Entry {
  state: Promise<ClusterState>;
  users: number;
  stop(): Promise<void>;
}

type Registry = { [REGISTRY]?: Entry };

export interface SharedCluster {
  state: ClusterState;
  release(): Promise<void>;
}

async function reuse(dir: string): Promise<SharedCluster> {
  const status = await clusterStatus(dir);
  const state = readClusterState(dir);
  if (!status || !state || !status.readyz.ok || status.components.some((c) => !c.alive)) {
    throw new Error(
      `NODELOAD_IT_CLUSTER_DIR=${dir}: no healthy cluster there (npm run cluster:status / cluster:up)`,
    );
  }
  return { state, release: async () => {} };
}

export async function acquireCluster(opts: {
  label: string;
  log: (line: string) => void;
}): Promise<SharedCluster> {
  const existing = process.env['NODELOAD_IT_CLUSTER_DIR'];
  if (existing) return reuse(path.resolve(existing));

  const registry = globalThis as Registry;
  let entry = registry[REGISTRY];
  if (!entry) {
    const dir = path.join(REPO_ROOT, '.run', `${opts.label}-${process.pid}`);
    const keep = process.env['NODELOAD_IT_KEEP'] === '1';
    // Last resort when vitest exits without running the teardown: SIGKILL the recorded PIDs.
    const onExit = () => {
      killClusterSync(dir);
      if (!keep) rmSync(dir, { recursive: true, force: true });
    };
    process.once('exit', onExit);
    const started = Date.now();
    const state = startCluster({ dir, log: opts.log }).then((cluster) => {
      opts.log(`control plane ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      return cluster as ClusterState;
    });
    const created: Entry = {
      state,
      users: 0,
      async stop() {
        try {
          await stopCluster(dir, { graceMs: 5000 });
        } finally {
          process.off('exit', onExit);
        }
        if (!keep) await rm(dir, { recursive: true, force: true });
      },
    };
    entry = created;
    registry[REGISTRY] = created;
    state.catch(() => {
      process.off('exit', onExit);
      if (registry[REGISTRY] === created) delete registry[REGISTRY];
    });
  }
  const held = entry;
  held.users++;
  let state: ClusterState;
  try {
    state = await held.state;
  } catch (err) {
    held.users--;
    throw err;
  }
  let released = false;
  return {
    state,
    async release() {
      if (released) return;
      released = true;
      if (--held.users > 0) return;
      if (registry[REGISTRY] === held) delete registry[REGISTRY];
      await held.stop();
    },
  };
}

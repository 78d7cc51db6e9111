// Browser tests' global setup: builds the dashboard (web/ → web/dist, which the gateway serves), checks
// that Debian's Chromium is there, and provides a local control plane with the same keys as the
// integration setup (test/integration/context.ts), so the tests use the same helpers.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import type { TestProject } from 'vitest/node';
import type {} from '../integration/context.js';
import { CHROMIUM_PATH } from './chromium.js';
import { acquireCluster } from './shared-cluster.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const log = (line: string) => process.stderr.write(`[browser] ${line}\n`);

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `${CHROMIUM_PATH} is missing: run 'bash test/browser/ensure-chromium.sh' (installs Debian's chromium)`,
    );
  }
  const started = Date.now();
  await build({ configFile: path.join(REPO_ROOT, 'web', 'vite.config.ts'), logLevel: 'warn' });
  log(`dashboard built in ${((Date.now() - started) / 1000).toFixed(1)}s`);

  const cluster = await acquireCluster({ label: 'browser', log });
  const { state } = cluster;
  project.provide('kubeconfig', state.kubeconfig);
  project.provide('clusterDir', state.dir);
  project.provide('binDir', state.binDir);
  project.provide('pkiDir', state.pkiDir);
  project.provide('kubectlPath', state.kubectl);
  project.provide('apiserverUrl', state.apiserverUrl);
  return () => cluster.release();
}

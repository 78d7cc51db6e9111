import { defineConfig } from 'vitest/config';

// Three projects: `unit` (fast, no cluster: src/, the dashboard's pure code, test/cluster's renderers), `integration` (one real
// local control plane per run, started by test/integration/global-setup.ts) and `browser` (Debian's
// Chromium against a gateway serving the built dashboard). 2 workers: this runs on 2 cores and the
// control plane needs CPU too.
export default defineConfig({
  test: {
    maxWorkers: 2,
    // globalSetup teardown stops the control plane (SIGTERM, SIGKILL after 5 s per stage)
    teardownTimeout: 30_000,
    projects: [
      {
        test: {
          name: 'unit',
          // test/cluster's own tests render manifests and need no cluster; test/bench's test its pure helpers.
          include: [
            'src/**/*.test.ts',
            'web/src/**/*.test.ts',
            'test/cluster/**/*.test.ts',
            'test/differential/**/*.test.ts',
            'test/bench/**/*.test.ts',
          ],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Files run in parallel: each test uses its own namespace and unique node names.
          fileParallelism: true,
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/browser/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});

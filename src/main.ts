/**
 * nodeload gateway entry point: `tsx src/main.ts --kubeconfig ~/.kube/config` (flags or NODELOAD_* env).
 */
import { type Gateway, startGateway } from './app.js';
import { allComponents } from './components.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './server/log.js';

/**
 * A stop still running after this exits 1: under the Deployment's 30 s terminationGracePeriodSeconds, so
 * the process ends itself (and says so) before the kubelet's SIGKILL. The scheduler finishes its binds
 * and the lease is released first, which on a loaded API server can take several seconds.
 */
const FORCE_EXIT_MS = 25_000;

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.argv.slice(2));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`nodeload: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  // The handlers come first: a SIGTERM while the start still waits (for the CRD with --install-crd=false,
  // for the API server) aborts it and the process exits 0, as after a start that finished.
  const aborting = new AbortController();
  let gateway: Gateway | undefined;
  let signals = 0;
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      if (++signals > 1) process.exit(1);
      log.info({ signal: sig, started: gateway !== undefined }, 'shutting down');
      const force = setTimeout(() => {
        log.error({ signal: sig, afterMs: FORCE_EXIT_MS }, 'shutdown did not finish in time; exiting');
        process.exit(1);
      }, FORCE_EXIT_MS);
      force.unref();
      if (gateway) void gateway.stop().then(() => process.exit(0));
      else aborting.abort(new Error(`${sig} during start`));
    });
  }
  try {
    gateway = await startGateway(config, allComponents(), { log, signal: aborting.signal });
  } catch (err) {
    if (!aborting.signal.aborted) throw err;
    log.info('stopped before the start finished');
    process.exit(0);
  }
}

main().catch((err) => {
  process.stderr.write(`nodeload: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

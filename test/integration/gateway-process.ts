// The gateway as its own process, started from this checkout's sources.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * `node --import tsx src/main.ts …args`, in the repository root. Node itself with tsx as a loader, not the
 * tsx CLI: the CLI relays SIGTERM and, when the child has not acknowledged it within 30 ms (a busy
 * machine), kills it and exits 143, and it cannot relay SIGKILL at all — so a test's signal reaches the
 * gateway, and the exit code it reads is the gateway's.
 */
export function spawnGateway(
  args: string[],
  opts: Pick<SpawnOptions, 'env' | 'stdio'> = { stdio: ['ignore', 'pipe', 'pipe'] },
): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: root, ...opts });
}

/** Everything the process writes to stdout and stderr (when piped), as it comes. */
export function collectOutput(child: ChildProcess): () => string {
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  return () => out;
}

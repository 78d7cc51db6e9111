// The gateway as an operator runs it: its own process started from src/main.ts with flags, ready only
// once synced with the API server, answering health, metrics and the original design's routes, and
// shutting down cleanly on SIGTERM. Bad flags fail fast with a message naming the flag.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { freePorts } from '../cluster/controlplane.js';
import { pkiPath, provided, uniqueName, waitFor } from './context.js';
import { collectOutput, spawnGateway } from './gateway-process.js';

function startGatewayProcess(args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawnGateway(args);
  return { child, output: collectOutput(child) };
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('gateway process', () => {
  it('turns ready after syncing, serves health, metrics and the original routes, and stops on SIGTERM', async () => {
    const [httpPort, httpsPort] = await freePorts(2);
    const base = `http://127.0.0.1:${httpPort}`;
    const gw = startGatewayProcess([
      `--kubeconfig=${provided('kubeconfig')}`,
      `--http-port=${httpPort}`,
      `--https-port=${httpsPort}`,
      '--bind-address=127.0.0.1',
      // Reads the user port without a token (test/integration/authz.test.ts covers tokens).
      '--anonymous-user-port=true',
      `--tls-cert-file=${pkiPath('serving.crt')}`,
      `--tls-key-file=${pkiPath('serving.key')}`,
      // Its own scheduler name and lease: other files' pods and gateways are not its business.
      `--scheduler-name=${uniqueName('nodeload-gw')}`,
      `--namespace=${uniqueName('it-gw-lease')}`,
      '--log-level=info',
    ]);
    children.push(gw.child);

    const ready = await waitFor(
      'GET /readyz = 200',
      async () => {
        const res = await fetch(`${base}/readyz`).catch(() => undefined);
        return res?.status === 200 ? res : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(await ready.text()).toBe('ok');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'nodeload_build_info',
      'nodeload_leader',
      'nodeload_scheduler_pending_pods',
      'nodeload_admission_requests_total',
      'nodeload_process_resident_memory_bytes',
    ]) {
      expect(metrics).toContain(name);
    }

    const status = (await (await fetch(`${base}/scheduler/status`)).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ running: true, cacheSynced: true });
    expect(Array.isArray(await (await fetch(`${base}/operator/suggestions`)).json())).toBe(true);
    const nodeLoad = (await (await fetch(`${base}/api/node-load`)).json()) as { nodes: unknown[] };
    expect(Array.isArray(nodeLoad.nodes)).toBe(true);

    const missing = await fetch(`${base}/no/such/route`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: 'NotFound' });

    // Logs are JSON lines with one child logger per component.
    const components = new Set(
      gw
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => (JSON.parse(l) as { component?: string }).component),
    );
    expect(components).toContain('gateway');

    gw.child.kill('SIGTERM');
    const [code] = await once(gw.child, 'exit');
    expect(code).toBe(0);
    expect(gw.output()).toContain('gateway stopped');
  });

  it('refuses bad flags with a message naming the flag, before touching the cluster', async () => {
    const gw = startGatewayProcess(['--http-port=not-a-port', '--kubeconfig=/nonexistent']);
    children.push(gw.child);
    const [code] = await once(gw.child, 'exit');
    expect(code).toBe(2);
    expect(gw.output()).toContain('--http-port (NODELOAD_HTTP_PORT)');
    expect(gw.output()).not.toMatch(/at .*\.ts:\d+/); // no stack trace
  });

  it('refuses to serve tokenless requests on an address other machines reach', async () => {
    const gw = startGatewayProcess([
      '--anonymous-user-port=true',
      '--bind-address=0.0.0.0',
      '--kubeconfig=/nonexistent',
    ]);
    children.push(gw.child);
    const [code] = await once(gw.child, 'exit');
    expect(code).toBe(2);
    expect(gw.output()).toContain('--anonymous-user-port (NODELOAD_ANONYMOUS_USER_PORT)');
    expect(gw.output()).toContain('needs a loopback --bind-address');
  });
});

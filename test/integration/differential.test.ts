// Differential test: every scenario of test/differential/scenarios is run through the stock kube-scheduler
// (the oracle) and through nodeload, in one private control plane started with `scheduler: true`, each run
// on its own KWOK nodes and namespaces; the independent checker judges both final states, and the two
// engines' Unschedulable sets are compared. One `it` per scenario; up to 4 scenarios run at once.
//
// A scenario fails when either engine's final state violates a hard constraint, misses the scenario's
// expectation, or nodeload's outcome differs from kube-scheduler's (or, for load-aware scenarios, from the
// documented difference). The full report is also written to .run/differential-report.txt.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { schedulerComponent } from '../../src/scheduler/component.js';
import { formatReport, runProblems, summaryLine } from '../differential/report.js';
import { runAll, type ScenarioResult } from '../differential/runner.js';
import { scenarios } from '../differential/scenarios/index.js';
import { SCHEDULER_NAMES } from '../differential/types.js';
import { coreApi, kubeConfig, provided, uniqueName, usePrivateCluster, waitFor } from './context.js';

const CONCURRENCY = Number(process.env['NODELOAD_DIFF_CONCURRENCY'] ?? 4);
// Comma-separated substrings of scenario names or areas, e.g. "Volume,Preemption".
const ONLY = process.env['NODELOAD_DIFF_ONLY']?.split(',').filter(Boolean);
const REPORT = fileURLToPath(new URL('../../.run/differential-report.txt', import.meta.url));

const selected = ONLY?.length
  ? scenarios.filter((s) => ONLY.some((o) => s.name.includes(o) || s.area.includes(o)))
  : scenarios;
const leaseNamespace = uniqueName('diff-lease');
let gateway: Gateway | undefined;
let results = new Map<string, Promise<ScenarioResult>>();
const finished: ScenarioResult[] = [];

beforeAll(async () => {
  await usePrivateCluster({ scheduler: true });
  const config = parseConfig({
    kubeconfig: provided('kubeconfig'),
    httpPort: 0,
    bindAddress: '127.0.0.1',
    schedulerName: SCHEDULER_NAMES.nodeload,
    leaderElect: true,
    namespace: leaseNamespace,
    leaseName: 'nodeload-differential',
    identity: uniqueName('gw-diff'),
    installCrd: true,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
  });
  const gw = await startGateway(config, [(ctx) => schedulerComponent(ctx, { leader: ctx.leader })]);
  gateway = gw;
  await gw.cache.ready();
  await waitFor('the gateway to lead', () => gw.leader.isLeader(), { timeoutMs: 60_000 });
  results = runAll(
    {
      kubeConfig: kubeConfig(),
      waitForRule: async (namespace, name) => {
        await waitFor(`rule ${namespace}/${name} in the gateway cache`, () =>
          gw.cache.rules.has(`${namespace}/${name}`),
        );
      },
    },
    selected,
    CONCURRENCY,
  );
}, 300_000);

afterAll(async () => {
  // Let runs still in flight (a failed beforeAll, an aborted test) finish their teardown first.
  await Promise.allSettled(results.values());
  await gateway?.stop();
  try {
    await coreApi().deleteNamespace({ name: leaseNamespace });
  } catch {
    // gone with the private cluster anyway
  }
  if (!finished.length) return;
  const order = new Map(selected.map((s, i) => [s.name, i]));
  finished.sort((a, b) => (order.get(a.scenario.name) ?? 0) - (order.get(b.scenario.name) ?? 0));
  const summary = finished.map(summaryLine).join('\n');
  mkdirSync(path.dirname(REPORT), { recursive: true });
  writeFileSync(REPORT, `${summary}\n\n${finished.map(formatReport).join('\n\n')}\n`);
  console.log(`differential summary (full report: ${REPORT})\n${summary}`);
}, 120_000);

describe('differential: kube-scheduler vs nodeload', () => {
  for (const s of selected) {
    it(`${s.area}: ${s.name}`, async () => {
      const pending = results.get(s.name);
      if (!pending) throw new Error('scenario was not started (beforeAll failed?)');
      const res = await pending;
      finished.push(res);
      const report = formatReport(res);
      console.log(report);
      const kube = runProblems(res.runs['kube-scheduler']).map((p) => `kube-scheduler: ${p}`);
      const nodeload = [...runProblems(res.runs.nodeload).map((p) => `nodeload: ${p}`), ...res.differences];
      expect([...kube, ...nodeload], report).toEqual([]);
    }, 600_000);
  }
});

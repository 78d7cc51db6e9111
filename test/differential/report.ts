// Human-readable per-scenario report: each engine's placements, checker violations and mismatches.
import { comparisonOf } from './compare.js';
import type { RunResult, ScenarioResult } from './runner.js';
import { ENGINES } from './types.js';

function shortMessage(m: string): string {
  // kube-scheduler's message lists every node of the cluster (other runs' too); keep it readable.
  return m.length > 240 ? `${m.slice(0, 237)}...` : m;
}

export function runProblems(r: RunResult): string[] {
  return [
    ...(r.error ? [`error: ${r.error}`] : []),
    ...r.violations.map((v) => `violation [${v.plugin}] ${v.pod} on ${v.node}: ${v.message}`),
    ...r.expectation.map((e) => `expectation: ${e}`),
  ];
}

export function formatReport(res: ScenarioResult): string {
  const s = res.scenario;
  const lines = [
    `=== ${s.area}: ${s.name} (${s.orderIndependent ? 'order-independent' : 'sequential'}, compare: ${
      s.expectDifference ? 'expected difference' : comparisonOf(s)
    })`,
  ];
  for (const engine of ENGINES) {
    const r = res.runs[engine];
    const problems = runProblems(r);
    lines.push(
      `  [${engine}] run ${r.runId}, ${(r.ms / 1000).toFixed(1)}s: ${problems.length ? 'FAIL' : 'ok'}`,
    );
    for (const o of r.outcomes) {
      lines.push(
        o.node
          ? `    ${o.pod} → ${o.node}`
          : `    ${o.pod} → ${o.unschedulable?.reason}${o.nominated ? ` (nominated ${o.nominated})` : ''}: ${shortMessage(o.unschedulable?.message ?? '')}`,
      );
    }
    if (r.victims.length) lines.push(`    preempted: ${r.victims.join(', ')}`);
    for (const p of problems) lines.push(`    ✗ ${p}`);
  }
  if (s.expectDifference) lines.push(`  expected difference: ${s.expectDifference.why}`);
  for (const d of res.differences) lines.push(`  ✗ ${d}`);
  return lines.join('\n');
}

/** One line per scenario for the summary at the end of the file. */
export function summaryLine(res: ScenarioResult): string {
  const k = runProblems(res.runs['kube-scheduler']).length === 0;
  const n = runProblems(res.runs.nodeload).length === 0 && res.differences.length === 0;
  return `${k ? 'ok  ' : 'FAIL'} kube-scheduler | ${n ? 'ok  ' : 'FAIL'} nodeload | ${res.scenario.area}: ${res.scenario.name}`;
}

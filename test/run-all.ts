/**
 * The whole test suite, as the README's test command and CI run it: typecheck, lint, then every
 * vitest project (unit, integration on the real local control plane, browser). Ends with the plain
 * line `N passed, N failed` counted from vitest's JSON report, plus one entry per static check.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(
    `nodeload's tests need Node.js >= 22 (running ${process.version}); run them with 'npm test'.`,
  );
  process.exit(1);
}

let passed = 0;
let failed = 0;
const failures: string[] = [];

function step(name: string, cmd: string, args: string[]): boolean {
  console.log(`\n=== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  const ok = r.status === 0;
  if (ok) passed++;
  else {
    failed++;
    failures.push(name);
  }
  return ok;
}

step('control plane build (cached after the first run)', 'bash', ['test/cluster/build.sh']);
// helm for the chart's lint/template tests (test/integration/deploy.test.ts), its own pinned Go module.
step('helm build (cached after the first run)', 'bash', ['test/cluster/build-helm.sh']);
step('chromium for the browser tests (Debian package)', 'bash', ['test/browser/ensure-chromium.sh']);
step('typecheck', 'npx', ['tsc', '--noEmit']);
// web/src/gql is generated from schema/schema.graphql and the dashboard's operations: fails when stale.
step('dashboard GraphQL types up to date (npm run codegen)', 'npx', [
  'graphql-codegen',
  '--config',
  'codegen.ts',
  '--check',
]);
step('typecheck dashboard', 'npx', ['tsc', '--noEmit', '-p', 'web/tsconfig.json']);
step('lint', 'npx', ['biome', 'check', '.']);
// No import cycles, and src/'s folders in layers (each imports only lower ones): .dependency-cruiser.cjs.
step('import rules: cycles, layers (npm run check:imports)', 'npm', ['run', '--silent', 'check:imports']);
// Unused files, exports and dependencies (knip.json names the entry points).
step('unused code and dependencies (npm run check:unused)', 'npm', ['run', '--silent', 'check:unused']);

mkdirSync('.run', { recursive: true });
const report = '.run/vitest-report.json';
rmSync(report, { force: true });
console.log('\n=== tests: vitest run (unit, integration, browser)');
const vitest = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`],
  {
    stdio: 'inherit',
  },
);
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numTotalTests: number;
    numFailedTestSuites: number;
    testResults: { name: string; status: string; message?: string }[];
  };
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  // A file that fails to load or a failing global setup has no failed test but is a failure.
  const brokenFiles = r.testResults.filter((t) => t.status === 'failed' && t.message);
  failed += brokenFiles.length;
  for (const f of brokenFiles) failures.push(`${f.name}: ${f.message?.split('\n')[0]}`);
  if (r.numTotalTests === 0) {
    failed++;
    failures.push('vitest ran no test');
  }
} else {
  failed++;
  failures.push(`vitest wrote no report (exit ${vitest.status})`);
}
if (vitest.status !== 0 && failed === 0) {
  failed++;
  failures.push(`vitest exited with ${vitest.status}`);
}

if (failures.length) console.log(`\nfailed: ${failures.join('\n        ')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

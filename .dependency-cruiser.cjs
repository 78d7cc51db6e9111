/**
 * The import rules of `npm test` (step "import rules" in test/run-all.ts): no cycles, and src/'s folders
 * in layers. A module may import only folders of a LOWER rank; folders of the same rank may not import
 * each other. Top-level src/*.ts is the composition root, the top.
 *
 * Tests (`*.test.ts`) and test kits (`testing*.ts`, `*.testing.ts`) follow the same ranks. Their one
 * exemption: they may import a test kit of a same-rank folder. They may never reach an upper layer, not
 * even through a kit under test/kit/ (the `*-test-reaches-up` rules follow every path, not only the
 * direct import).
 */

/** Lowest first. Each entry is one rank; a folder name is under src/ ('' is top-level src/*.ts). */
const RANKS = [
  ['events', 'server'], // HTTP and process plumbing: bus, logging, metrics registry, HTTP servers
  ['cluster', 'leader'],
  ['load'],
  ['rules'],
  ['scheduler', 'operator'],
  ['webhook', 'aggregated', 'extender'],
  ['graphql'],
  [''], // composition root: app.ts, components.ts, config.ts, main.ts
];

// `x.test.ts`; a kit is `testing.ts`, `testing-pki.ts` or `pod-topology-spread.testing.ts`.
const TEST_FILE = '(\\.test|[/.]testing[^/]*)\\.ts$';
const TEST_KIT = '[/.]testing[^/]*\\.ts$';

/** The regular expression of the modules of a folder ('' = top-level src/*.ts). */
const inFolder = (folder) => (folder === '' ? '^src/[^/]+\\.tsx?$' : `^src/${folder}/`);
const anyOf = (folders) => folders.map(inFolder).join('|');

const layerRules = RANKS.flatMap((rank, r) => {
  const upper = RANKS.slice(r + 1).flat();
  return rank.flatMap((folder) => {
    const peers = rank.filter((f) => f !== folder);
    const name = folder === '' ? 'src-root' : folder;
    const rules = [];
    if (upper.length > 0) {
      rules.push(
        {
          name: `${name}-imports-up`,
          comment: `src/${folder} (rank ${r}) imports a folder of a higher rank`,
          severity: 'error',
          from: { path: inFolder(folder) },
          to: { path: anyOf(upper) },
        },
        {
          // Production code is covered edge by edge above; a test could reach up through a kit in test/.
          name: `${name}-test-reaches-up`,
          comment: `a test of src/${folder} (rank ${r}) reaches a higher rank through the modules it imports`,
          severity: 'error',
          from: { path: `${inFolder(folder)}.*${TEST_FILE}` },
          to: { path: anyOf(upper), reachable: true },
        },
      );
    }
    if (peers.length > 0) {
      rules.push(
        {
          name: `${name}-imports-peer`,
          comment: `src/${folder} imports a folder of the same rank (${rank.join(', ')})`,
          severity: 'error',
          from: { path: inFolder(folder), pathNot: TEST_FILE },
          to: { path: anyOf(peers) },
        },
        {
          name: `${name}-test-imports-peer`,
          comment: `a test of src/${folder} imports a same-rank folder's code other than its test kit`,
          severity: 'error',
          from: { path: `${inFolder(folder)}.*${TEST_FILE}` },
          to: { path: anyOf(peers), pathNot: TEST_KIT },
        },
      );
    }
    return rules;
  });
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import cycle',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that does not resolve to a file (a typo, or a file moved without its importers)',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'production-imports-test-code',
      comment: 'production code in src/ imports a test, a test kit or test/',
      severity: 'error',
      from: { path: '^src/', pathNot: TEST_FILE },
      to: { path: `${TEST_FILE}|^test/` },
    },
    ...layerRules,
  ],
  options: {
    includeOnly: '^(src|test|web/src)/',
    exclude: { path: '^web/src/gql/' },
    // Type-only imports count: a type from an upper layer couples the folders just the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};

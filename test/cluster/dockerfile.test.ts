import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dockerIgnore, parseDockerfile } from './dockerfile.js';
import { manifestPath } from './manifests.js';

describe('parseDockerfile', () => {
  it('splits stages, joins continuation lines and keeps instructions in order', () => {
    const stages = parseDockerfile(
      [
        'ARG IMG=node:24',
        '# comment',
        `FROM \${IMG} AS build`,
        'WORKDIR /app',
        'RUN npm ci \\',
        '      --omit=dev',
        '',
        `FROM \${IMG}`,
        'COPY --from=build /app/dist ./dist',
        'ENTRYPOINT ["node", "dist/main.js"]',
      ].join('\n'),
    );
    expect(stages.map((s) => [s.name, s.from])).toEqual([
      ['build', `\${IMG}`],
      ['1', `\${IMG}`],
    ]);
    expect(stages[0]?.instructions).toEqual([
      { op: 'WORKDIR', args: '/app' },
      { op: 'RUN', args: 'npm ci --omit=dev' },
    ]);
    expect(stages[1]?.instructions.map((i) => i.op)).toEqual(['COPY', 'ENTRYPOINT']);
  });

  it("the project's Dockerfile: multi-stage, the bundle and the dashboard only, a base image pinnable by ARG, no HEALTHCHECK", () => {
    const text = readFileSync(manifestPath('../Dockerfile'), 'utf8');
    const stages = parseDockerfile(text);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^ARG NODE_IMAGE=/m);
    expect(stages.every((s) => s.from === `\${NODE_IMAGE}`)).toBe(true);
    const runs = stages.flatMap((s) => s.instructions.filter((i) => i.op === 'RUN').map((i) => i.args));
    expect(
      runs.some((r) => /npm run build &&.*npm run build:bundle/.test(r) && r.includes('npm run build:web')),
    ).toBe(true);
    const final = stages.at(-1);
    // The final stage copies built output only: no node_modules, no sources.
    const copies = final?.instructions.filter((i) => i.op === 'COPY').map((i) => i.args) ?? [];
    expect(copies.some((c) => c.includes('node_modules'))).toBe(false);
    expect(copies).toContain('--from=build /app/dist/bundle ./dist/bundle');
    expect(final?.instructions.find((i) => i.op === 'ENTRYPOINT')?.args).toBe(
      '["node", "dist/bundle/main.mjs"]',
    );
    expect(final?.instructions.some((i) => i.op === 'HEALTHCHECK')).toBe(false);
    expect(final?.instructions.find((i) => i.op === 'USER')?.args).toMatch(/^\d+(:\d+)?$/);
  });
});

describe('dockerIgnore', () => {
  const ignored = dockerIgnore(readFileSync(manifestPath('../.dockerignore'), 'utf8'));

  it('sends only what the Dockerfile copies, without tests, builds or node_modules', () => {
    for (const p of [
      'package.json',
      'src/main.ts',
      'web/index.html',
      'manifests/crd/nodeloadrules.example.com.yaml',
    ]) {
      expect(ignored(p), p).toBe(false);
    }
    for (const p of [
      'node_modules/x/index.js',
      'dist/main.js',
      'web/dist/index.html',
      'src/app.test.ts',
      'test/integration/deploy.test.ts',
      '.git/HEAD',
      'manifests/base/deployment.yaml',
      '.run/cluster/state.json',
    ]) {
      expect(ignored(p), p).toBe(true);
    }
  });

  it('last match wins, parents count, ** spans folders', () => {
    const m = dockerIgnore('*\n!keep/\nkeep/**/*.tmp\n!keep/a.tmp');
    expect(m('other.txt')).toBe(true);
    expect(m('keep/x/y.ts')).toBe(false);
    expect(m('keep/x/y.tmp')).toBe(true);
    expect(m('keep/y.tmp')).toBe(true);
    expect(m('keep/a.tmp')).toBe(false);
  });
});

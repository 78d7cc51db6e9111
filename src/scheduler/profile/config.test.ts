import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProfileConfig, parseSchedulerConfig } from './config.js';

const HEAD = 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n';

describe('parseSchedulerConfig', () => {
  it('parses a valid configuration, with defaults for what it leaves out', () => {
    const config = parseSchedulerConfig(`${HEAD}
profiles:
  - schedulerName: nodeload-scheduler
    plugins:
      multiPoint:
        disabled:
          - name: ImageLocality
      score:
        enabled:
          - name: LoadAware
            weight: 7
    pluginConfig:
      - name: NodeResourcesFit
        args:
          ignoredResources: [example.com/gpu]
      - name: LoadAware
`);
    expect(config.profiles).toHaveLength(1);
    const p = config.profiles[0];
    expect(p?.schedulerName).toBe('nodeload-scheduler');
    expect(p?.plugins?.multiPoint?.disabled).toEqual([{ name: 'ImageLocality' }]);
    expect(p?.plugins?.score?.enabled).toEqual([{ name: 'LoadAware', weight: 7 }]);
    expect(p?.pluginConfig).toEqual([
      { name: 'NodeResourcesFit', args: { ignoredResources: ['example.com/gpu'] } },
      { name: 'LoadAware', args: {} },
    ]);
  });

  it('accepts and drops the fields nodeload does not use; keeps percentageOfNodesToScore', () => {
    const config = parseSchedulerConfig(`${HEAD}
clientConnection: { kubeconfig: /etc/kubernetes/scheduler.conf }
leaderElection: { leaderElect: true }
percentageOfNodesToScore: 20
profiles:
  - schedulerName: a
    percentageOfNodesToScore: 50
`);
    expect(config).toEqual({
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      percentageOfNodesToScore: 20,
      profiles: [{ schedulerName: 'a', percentageOfNodesToScore: 50, pluginConfig: [] }],
    });
  });

  it('refuses a percentageOfNodesToScore outside 0–100, naming it', () => {
    expect(() =>
      parseSchedulerConfig(`${HEAD}\nprofiles:\n  - schedulerName: a\n    percentageOfNodesToScore: 101\n`),
    ).toThrow(/profiles\.0\.percentageOfNodesToScore/);
  });

  it.each([
    {
      name: 'another apiVersion',
      text: 'apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\nprofiles: [{}]',
      path: 'apiVersion',
    },
    {
      name: 'another kind',
      text: 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: Config\nprofiles: [{}]',
      path: 'kind',
    },
    { name: 'no profiles', text: `${HEAD}profiles: []`, path: 'profiles' },
    { name: 'profiles missing', text: HEAD, path: 'profiles' },
    {
      name: 'a weight that is not a number',
      text: `${HEAD}profiles:\n  - plugins:\n      score:\n        enabled:\n          - name: LoadAware\n            weight: heavy`,
      path: 'profiles.0.plugins.score.enabled.0.weight',
    },
    {
      name: 'a negative weight',
      text: `${HEAD}profiles:\n  - plugins:\n      score:\n        enabled: [{ name: LoadAware, weight: -1 }]`,
      path: 'profiles.0.plugins.score.enabled.0.weight',
    },
    {
      name: 'a fractional weight',
      text: `${HEAD}profiles:\n  - plugins:\n      score:\n        enabled: [{ name: LoadAware, weight: 1.5 }]`,
      path: 'profiles.0.plugins.score.enabled.0.weight',
    },
    {
      name: 'an empty plugin name',
      text: `${HEAD}profiles:\n  - {}\n  - plugins:\n      filter:\n        disabled: [{ name: '' }]`,
      path: 'profiles.1.plugins.filter.disabled.0.name',
    },
    {
      name: 'pluginConfig args that are not a map',
      text: `${HEAD}profiles:\n  - pluginConfig: [{ name: LoadAware, args: [1, 2] }]`,
      path: 'profiles.0.pluginConfig.0.args',
    },
    { name: 'not a mapping at all', text: '- just\n- a list', path: '(root)' },
  ])('refuses $name, naming the field ($path)', ({ text, path }) => {
    const escaped = path.replace(/[.()]/g, (c) => `\\${c}`);
    expect(() => parseSchedulerConfig(text)).toThrow(
      new RegExp(`^invalid KubeSchedulerConfiguration: ${escaped}: `),
    );
  });

  it('reports malformed YAML', () => {
    expect(() => parseSchedulerConfig(`${HEAD}profiles: [`)).toThrow();
  });
});

describe('loadProfileConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodeload-profile-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    `${HEAD}profiles:
  - schedulerName: first
    plugins: { score: { enabled: [{ name: LoadAware, weight: 1 }] } }
  - schedulerName: second
    plugins: { score: { enabled: [{ name: LoadAware, weight: 2 }] } }
`,
  );

  it('takes the profile named like the scheduler, else the first', () => {
    expect(loadProfileConfig(file, 'second').plugins?.score?.enabled?.[0]?.weight).toBe(2);
    expect(loadProfileConfig(file, 'first').schedulerName).toBe('first');
    expect(loadProfileConfig(file, 'unnamed').schedulerName).toBe('first');
  });

  it("applies the file's percentageOfNodesToScore to a profile that sets none", () => {
    const pct = join(dir, 'pct.yaml');
    writeFileSync(
      pct,
      `${HEAD}percentageOfNodesToScore: 30\nprofiles:\n  - schedulerName: a\n  - schedulerName: b\n    percentageOfNodesToScore: 70\n`,
    );
    expect(loadProfileConfig(pct, 'a').percentageOfNodesToScore).toBe(30);
    expect(loadProfileConfig(pct, 'b').percentageOfNodesToScore).toBe(70);
    expect(loadProfileConfig(file, 'first').percentageOfNodesToScore).toBeUndefined();
  });

  it('fails on a missing file', () => {
    expect(() => loadProfileConfig(join(dir, 'nope.yaml'), 'x')).toThrow(/ENOENT/);
  });
});

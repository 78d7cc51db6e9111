// Isolation rewrites: a run's pods may only ever find that run's nodes and namespaces.
import { describe, expect, it } from 'vitest';
import {
  affinity,
  expr,
  HOSTNAME,
  node,
  pod,
  podTerm,
  requiredNodeAffinity,
  selector,
  spread,
  ZONE,
} from './build.js';
import { planRun, RUN_LABEL } from './isolate.js';
import type { Scenario } from './types.js';

const base: Scenario = {
  name: 't',
  area: 't',
  description: '',
  orderIndependent: true,
  nodes: [node('n1', { labels: { [ZONE]: 'a', disk: 'ssd' } })],
  pods: [],
};

describe('planRun', () => {
  it('prefixes node names, hostname and zone values, and labels nodes with the run', () => {
    const plan = planRun(base, 'nodeload', 'r1');
    const labels = plan.nodes[0]?.metadata?.labels ?? {};
    expect(plan.nodes[0]?.metadata?.name).toBe('r1-n1');
    expect(labels).toMatchObject({ [HOSTNAME]: 'r1-n1', [ZONE]: 'r1-a', disk: 'ssd', [RUN_LABEL]: 'r1' });
    expect(plan.logicalNode('r1-n1')).toBe('n1');
  });

  it('ANDs the run requirement into every non-empty term and maps names in it', () => {
    const s: Scenario = {
      ...base,
      pods: [
        pod('p', {
          spec: {
            nodeSelector: { [HOSTNAME]: 'n1' },
            affinity: requiredNodeAffinity(
              { exprs: [expr(ZONE, 'In', ['a'])] },
              { fields: [expr('metadata.name', 'In', ['n1'])] },
              {},
            ),
          },
        }),
        pod('q'),
      ],
    };
    const [p, q] = planRun(s, 'kube-scheduler', 'r1').incoming;
    const run = { key: RUN_LABEL, operator: 'In', values: ['r1'] };
    expect(p?.spec?.schedulerName).toBe('default-scheduler');
    expect(p?.spec?.nodeSelector).toEqual({ [HOSTNAME]: 'r1-n1' });
    expect(
      p?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    ).toEqual([
      { matchExpressions: [expr(ZONE, 'In', ['r1-a']), run] },
      { matchFields: [expr('metadata.name', 'In', ['r1-n1'])], matchExpressions: [run] },
      {},
    ]);
    expect(
      q?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    ).toEqual([{ matchExpressions: [run] }]);
  });

  it('maps namespaces, confines namespaceSelectors and renames private keys', () => {
    const s: Scenario = {
      ...base,
      privateKeys: [ZONE],
      namespaces: [{ name: 'other', labels: { team: 'a' } }],
      pods: [
        pod('p', {
          namespace: 'other',
          spec: {
            affinity: affinity(
              podTerm(HOSTNAME, selector({ app: 'x' }), { namespaces: ['main'] }),
              podTerm(ZONE, selector({ app: 'x' }), { namespaceSelector: {} }),
            ),
            topologySpreadConstraints: [spread(ZONE, selector({ app: 'x' }))],
          },
        }),
      ],
    };
    const plan = planRun(s, 'nodeload', 'r2');
    const p = plan.incoming[0];
    const terms = p?.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    expect(p?.metadata?.namespace).toBe('r2-other');
    expect(p?.spec?.schedulerName).toBe('nodeload-scheduler');
    expect(terms[0]?.namespaces).toEqual(['r2-main']);
    expect(terms[1]?.namespaceSelector).toEqual({ matchLabels: { [RUN_LABEL]: 'r2' } });
    expect(terms[1]?.topologyKey).toBe(`r2.${ZONE}`);
    expect(p?.spec?.topologySpreadConstraints?.[0]?.topologyKey).toBe(`r2.${ZONE}`);
    expect(plan.nodes[0]?.metadata?.labels?.[`r2.${ZONE}`]).toBe('r2-a');
    expect(plan.namespaces.map((n) => n.metadata?.labels)).toEqual([
      { [RUN_LABEL]: 'r2', 'nodeload.test/integration': 'true' },
      { team: 'a', [RUN_LABEL]: 'r2', 'nodeload.test/integration': 'true' },
    ]);
  });
});

describe('planRun: storage, priority and disruption objects', () => {
  const s: Scenario = {
    ...base,
    objects: {
      storageClasses: [
        { name: 'dyn', provisioner: 'dynamic', allowedTopologies: { [ZONE]: ['a'] } },
        { name: 'local' },
      ],
      persistentVolumes: [
        { name: 'pv', storageClass: 'local', nodes: ['n1'], zones: ['a'], claim: 'data' },
        { name: 'csi', csiDriver: 'd.test' },
      ],
      persistentVolumeClaims: [{ name: 'data', storageClass: 'local', volume: 'pv' }],
      priorityClasses: [{ name: 'high', value: 1000 }],
      podDisruptionBudgets: [{ name: 'guard', matchLabels: { app: 'x' }, minAvailable: 1 }],
      csiNodes: [{ node: 'n1', drivers: { 'd.test': 2 } }],
      volumeAttachments: [{ node: 'n1', volume: 'csi' }],
    },
    pods: [pod('p', { spec: { priorityClassName: 'high' } })],
  };
  const { objects, incoming } = planRun(s, 'kube-scheduler', 'r1');

  it('names cluster-scoped objects per run and maps every reference to them', () => {
    expect(objects.storageClasses.map((c) => [c.metadata?.name, c.provisioner])).toEqual([
      ['r1-dyn', 'r1.nodeload.test'],
      ['r1-local', 'kubernetes.io/no-provisioner'],
    ]);
    expect(objects.dynamicProvisioner).toBe('r1.nodeload.test');
    expect(objects.storageClasses[0]?.allowedTopologies).toEqual([
      { matchLabelExpressions: [{ key: ZONE, values: ['r1-a'] }] },
    ]);
    const v = objects.volumes[0];
    expect(v?.metadata?.name).toBe('r1-pv');
    expect(v?.spec?.storageClassName).toBe('r1-local');
    expect(v?.spec?.claimRef).toMatchObject({ namespace: 'r1-main', name: 'data' });
    expect(v?.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions).toEqual([
      { key: HOSTNAME, operator: 'In', values: ['r1-n1'] },
      { key: ZONE, operator: 'In', values: ['r1-a'] },
    ]);
    expect(objects.claims[0]?.metadata?.namespace).toBe('r1-main');
    expect(objects.claims[0]?.spec).toMatchObject({ storageClassName: 'r1-local', volumeName: 'r1-pv' });
    expect(objects.priorityClasses[0]?.metadata?.name).toBe('r1-high');
    expect(incoming[0]?.spec?.priorityClassName).toBe('r1-high');
    expect(objects.budgets[0]?.metadata?.namespace).toBe('r1-main');
    expect(objects.csiNodes[0]?.metadata?.name).toBe('r1-n1');
    expect(objects.volumeAttachments[0]?.metadata?.name).toBe('r1-va-0');
    expect(objects.volumeAttachments[0]?.spec).toEqual({
      attacher: 'd.test',
      nodeName: 'r1-n1',
      source: { persistentVolumeName: 'r1-csi' },
    });
  });

  it('has no provisioner when no class is dynamic', () => {
    expect(planRun(base, 'nodeload', 'r2').objects.dynamicProvisioner).toBeUndefined();
  });
});

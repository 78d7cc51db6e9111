import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../cluster/model.js';
import { specPod } from '../plugins/plugin.testing.js';
import { node } from '../testing.js';
import { Snapshot } from './snapshot.js';
import type { TermKind } from './term-index.js';

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON
type Json = any;

const antiTerm = (app: string, extra: Json = {}) => ({
  labelSelector: { matchLabels: { app } },
  topologyKey: 'zone',
  ...extra,
});

function withTerms(
  name: string,
  nodeName: string | undefined,
  affinity: Json,
  o: { ns?: string; labels?: Json } = {},
) {
  return specPod(
    name,
    { nodeName, affinity },
    { meta: { namespace: o.ns ?? 'default', labels: o.labels ?? {} } },
  );
}
const anti = (name: string, nodeName: string | undefined, term: Json = antiTerm('web'), o = {}) =>
  withTerms(
    name,
    nodeName,
    { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } },
    o,
  );

/** The groups of a kind as "<owner ns>|<weight>|<selector app>|<key>" → { domain: "count pods…" }. */
function view(s: Snapshot, kind: TermKind = 'requiredAntiAffinity'): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const g of s.termGroups(kind)) {
    const name = `${g.ownerNamespace}|${g.weight}|${g.term.labelSelector?.matchLabels?.['app']}|${g.term.topologyKey}`;
    out[name] = Object.fromEntries(
      [...g.domains].map(([v, d]) => [v, `${d.count} ${[...d.pods.keys()].join(',')}`]),
    );
  }
  return out;
}

function zones(...spec: [string, string | undefined][]): Snapshot {
  const s = new Snapshot();
  for (const [name, zone] of spec) s.setNode(node(name, { labels: zone ? { zone } : {} }));
  return s;
}

describe('TermIndex through the Snapshot', () => {
  const cases: { name: string; run: (s: Snapshot) => void; want: Record<string, Record<string, string>> }[] =
    [
      {
        name: 'add: one group per distinct term, counted per topology value',
        run: (s) => {
          s.upsertPod(anti('e1', 'a'));
          s.upsertPod(anti('e2', 'b'));
          s.upsertPod(anti('e3', 'c'));
        },
        want: { 'default|1|web|zone': { z1: '2 default/e1,default/e2', z2: '1 default/e3' } },
      },
      {
        name: 'remove: counts drop, an empty domain and an empty group disappear',
        run: (s) => {
          s.upsertPod(anti('e1', 'a'));
          s.upsertPod(anti('e3', 'c'));
          s.deletePod(anti('e3', 'c'));
        },
        want: { 'default|1|web|zone': { z1: '1 default/e1' } },
      },
      {
        name: 'assume counts at once, forget takes it back',
        run: (s) => {
          s.assume(anti('kept', undefined), 'a');
          s.assume(anti('gone', undefined), 'c');
          s.forget('default/gone');
        },
        want: { 'default|1|web|zone': { z1: '1 default/kept' } },
      },
      {
        name: 'a pod label change re-counts the pod once (its terms do not depend on its labels)',
        run: (s) => {
          s.upsertPod(anti('e1', 'a'));
          s.upsertPod(anti('e1', 'a', antiTerm('web'), { labels: { app: 'x' } }));
        },
        want: { 'default|1|web|zone': { z1: '1 default/e1' } },
      },
      {
        name: 'a node label change moves its pods to the new domain',
        run: (s) => {
          s.upsertPod(anti('e1', 'a'));
          s.upsertPod(anti('e2', 'b'));
          s.setNode(node('a', { labels: { zone: 'z3' } }));
        },
        want: { 'default|1|web|zone': { z1: '1 default/e2', z3: '1 default/e1' } },
      },
      {
        name: 'a node without the topology key counts nowhere, until it gets the key',
        run: (s) => {
          s.upsertPod(anti('e1', 'bare'));
          s.upsertPod(anti('e2', 'late-bare'));
          s.setNode(node('bare', { labels: { zone: 'z9' } }));
        },
        want: { 'default|1|web|zone': { z9: '1 default/e1' } },
      },
      {
        name: 'a deleted node uncounts its pods, its return counts them again',
        run: (s) => {
          s.upsertPod(anti('e1', 'a'));
          s.upsertPod(anti('e3', 'c'));
          s.deleteNode('c');
          s.upsertPod(anti('e4', 'unknown'));
          s.deleteNode('a');
          s.setNode(node('a', { labels: { zone: 'z5' } }));
        },
        want: { 'default|1|web|zone': { z5: '1 default/e1' } },
      },
      {
        name: '"my namespace" terms group per namespace; terms naming namespaces group across them',
        run: (s) => {
          s.upsertPod(anti('e1', 'a', antiTerm('web'), { ns: 'x' }));
          s.upsertPod(anti('e2', 'a', antiTerm('web'), { ns: 'y' }));
          s.upsertPod(anti('n1', 'a', antiTerm('db', { namespaces: ['x'] }), { ns: 'x' }));
          s.upsertPod(anti('n2', 'c', antiTerm('db', { namespaces: ['x'] }), { ns: 'y' }));
        },
        want: {
          'x|1|web|zone': { z1: '1 x/e1' },
          'y|1|web|zone': { z1: '1 y/e2' },
          'x|1|db|zone': { z1: '1 x/n1', z2: '1 y/n2' },
        },
      },
      {
        name: 'a pod with the same term twice counts twice',
        run: (s) => {
          s.upsertPod(
            withTerms('twice', 'a', {
              podAntiAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [antiTerm('web'), antiTerm('web')],
              },
            }),
          );
        },
        want: { 'default|1|web|zone': { z1: '2 default/twice' } },
      },
    ];
  for (const c of cases) {
    it(c.name, () => {
      const s = zones(['a', 'z1'], ['b', 'z1'], ['c', 'z2'], ['bare', undefined]);
      c.run(s);
      expect(view(s)).toEqual(c.want);
    });
  }

  it('keeps each kind apart, preferred terms per weight', () => {
    const s = zones(['a', 'z1']);
    const pref = (weight: number, app: string) => ({ weight, podAffinityTerm: antiTerm(app) });
    const p: PodInfo = withTerms('all', 'a', {
      podAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [antiTerm('req')],
        preferredDuringSchedulingIgnoredDuringExecution: [pref(5, 'soft'), pref(7, 'soft')],
      },
      podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [pref(3, 'away')] },
    });
    s.upsertPod(p);
    expect(view(s, 'requiredAffinity')).toEqual({ 'default|1|req|zone': { z1: '1 default/all' } });
    expect(view(s, 'preferredAffinity')).toEqual({
      'default|5|soft|zone': { z1: '1 default/all' },
      'default|7|soft|zone': { z1: '1 default/all' },
    });
    expect(view(s, 'preferredAntiAffinity')).toEqual({ 'default|3|away|zone': { z1: '1 default/all' } });
    expect(view(s, 'requiredAntiAffinity')).toEqual({});
    s.deletePod(p);
    expect(view(s, 'preferredAffinity')).toEqual({});
  });

  it('a what-if edit counts its changes and undo restores the groups exactly', () => {
    const s = zones(['a', 'z1'], ['c', 'z2']);
    s.upsertPod(anti('e1', 'a'));
    const before = view(s);
    const edit = s.edit();
    edit.remove('default/e1');
    edit.add('default/x', anti('x', 'c'), 'c');
    expect(view(s)).toEqual({ 'default|1|web|zone': { z2: '1 default/x' } });
    edit.undo();
    expect(view(s)).toEqual(before);
  });
});

/**
 * InterPodAffinity over one long-lived snapshot: what changes between cycles — namespace labels, pod
 * labels, node labels — must show in the next cycle, although the counts it reads are kept across cycles.
 */
import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../../load/types.js';
import { Snapshot } from '../framework/snapshot.js';
import { type CycleContext, CycleState } from '../framework/types.js';
import type { NodeVerdict } from '../framework/verdict.js';
import { node } from '../testing.js';
import { interPodAffinity } from './inter-pod-affinity.js';
import { specPod } from './plugin.testing.js';

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON
type Json = any;

const redWeb = {
  labelSelector: { matchLabels: { app: 'web' } },
  topologyKey: 'zone',
  namespaceSelector: { matchLabels: { team: 'red' } },
};
const antiOf = (term: Json) => ({
  podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] },
});

function pod(name: string, ns: string, app: string, nodeName?: string, affinity?: Json): PodInfo {
  return specPod(name, { nodeName, affinity }, { meta: { namespace: ns, labels: { app } } });
}

function world() {
  const snapshot = new Snapshot();
  snapshot.setNode(node('n1', { labels: { zone: 'z1' } }));
  snapshot.setNode(node('n2', { labels: { zone: 'z2' } }));
  const ns = new Map<string, Record<string, string>>([
    ['ns-a', {}],
    ['ns-b', { team: 'blue' }],
  ]);
  const plugin = interPodAffinity();
  /** Filter codes per node for `p`, now. */
  const filter = (p: PodInfo) => {
    const ctx: CycleContext = {
      pod: p,
      snapshot,
      rules: [],
      loadOptions: DEFAULT_LOAD_OPTIONS,
      now: 0,
      namespaceLabels: (x) => ns.get(x),
    };
    const state = new CycleState();
    if (plugin.preFilter(state, ctx)?.skip) return 'skip';
    return snapshot.list().map((n) => {
      const v: NodeVerdict = { node: n.name, feasible: false, reasons: [], rules: [] };
      plugin.filter(state, ctx, n, v);
      return v.reasons[0]?.code ?? '-';
    });
  };
  return { snapshot, ns, filter };
}

describe('InterPodAffinity across cycles on one snapshot', () => {
  it("the pod's namespaceSelector follows namespace label changes", () => {
    const w = world();
    w.snapshot.upsertPod(pod('web', 'ns-b', 'web', 'n1'));
    const p = pod('p', 'ns-a', 'x', undefined, antiOf(redWeb));
    expect(w.filter(p)).toEqual(['-', '-']);
    w.ns.set('ns-b', { team: 'red' });
    expect(w.filter(p)).toEqual(['AntiAffinityRulesNotMatch', '-']);
    w.ns.set('ns-b', {});
    expect(w.filter(p)).toEqual(['-', '-']);
  });

  it("an existing pod's namespaceSelector is matched against the incoming pod's namespace labels now", () => {
    const w = world();
    w.snapshot.upsertPod(pod('guard', 'ns-a', 'x', 'n1', antiOf(redWeb)));
    const p = pod('p', 'ns-b', 'web');
    expect(w.filter(p)).toEqual('skip');
    w.ns.set('ns-b', { team: 'red' });
    expect(w.filter(p)).toEqual(['ExistingAntiAffinityRulesNotMatch', '-']);
  });

  it('pod label and node label changes show in the next cycle', () => {
    const w = world();
    w.ns.set('ns-b', { team: 'red' });
    w.snapshot.upsertPod(pod('web', 'ns-b', 'web', 'n1'));
    const p = pod('p', 'ns-a', 'x', undefined, antiOf(redWeb));
    expect(w.filter(p)).toEqual(['AntiAffinityRulesNotMatch', '-']);
    w.snapshot.setNode(node('n2', { labels: { zone: 'z1' } }));
    expect(w.filter(p)).toEqual(['AntiAffinityRulesNotMatch', 'AntiAffinityRulesNotMatch']);
    w.snapshot.upsertPod(pod('web', 'ns-b', 'db', 'n1'));
    expect(w.filter(p)).toEqual(['-', '-']);
  });
});

/**
 * InterPodAffinity and PodTopologySpread read the snapshot's incremental counts (framework/pod-counts.ts,
 * framework/term-index.ts) and cached eligible domains; their answers must be the ones a walk over every
 * pod gives (walk-reference.testing.ts). Random clusters, fixed seeds: one snapshot lives through a
 * random history — nodes added, relabelled, retainted, deleted; pods bound, relabelled, marked
 * terminating, deleted, assumed, forgotten, confirmed; namespace labels changed; what-if edits — and
 * after every step a few random pods are run through both, so caches built at one step must still be
 * right at the next.
 */
import { describe, expect, it } from 'vitest';
import { toNodeInfo, toPodInfo } from '../../cluster/convert.js';
import { type NodeInfo, type PodInfo, podKey } from '../../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS } from '../../load/types.js';
import { Snapshot } from '../framework/snapshot.js';
import { type CycleContext, CycleState } from '../framework/types.js';
import type { NodeVerdict } from '../framework/verdict.js';
import { workloadSelectors } from './default-selector.testing.js';
import {
  FILTER_STATE_KEY,
  type InterPodAffinityFilterState,
  interPodAffinity,
} from './inter-pod-affinity.js';
import { podTopologySpread, SYSTEM_DEFAULT_CONSTRAINTS } from './pod-topology-spread.js';
import {
  interPodAffinityFilterByWalk,
  interPodAffinityScoreByWalk,
  podTopologySpreadFilterByWalk,
  podTopologySpreadScoreByWalk,
} from './walk-reference.testing.js';

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON
type Json = any;

/** mulberry32: a small seeded generator, so a failing seed replays exactly. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
  const chance = (p: number) => next() < p;
  return { int, pick, chance };
}
type Rng = ReturnType<typeof rng>;

const NAMESPACES = ['ns-a', 'ns-b', 'ns-c'];
const KEYS = ['zone', 'kubernetes.io/hostname', 'rack'];
const APPS = ['web', 'db', 'cache'];

function selector(r: Rng): Json {
  if (r.chance(0.05)) return undefined;
  if (r.chance(0.05)) return {};
  if (r.chance(0.5)) return { matchLabels: { app: r.pick(APPS) } };
  const op = r.pick(['In', 'NotIn', 'Exists', 'DoesNotExist']);
  const key = r.pick(['app', 'tier']);
  const values = op === 'In' || op === 'NotIn' ? [r.pick([...APPS, '1', '2'])] : undefined;
  return { matchExpressions: [{ key, operator: op, values }] };
}

function term(r: Rng): Json {
  const t: Json = { topologyKey: r.pick(KEYS), labelSelector: selector(r) };
  const ns = r.int(5);
  if (ns === 1) t.namespaces = [r.pick(NAMESPACES)];
  if (ns === 2) t.namespaceSelector = {};
  if (ns === 3) t.namespaceSelector = { matchLabels: { team: r.pick(['red', 'blue']) } };
  if (ns === 4) t.namespaceSelector = { matchExpressions: [{ key: 'team', operator: 'Exists' }] };
  return t;
}

function terms(r: Rng, weighted: boolean): Json[] | undefined {
  if (!r.chance(0.3)) return undefined;
  return Array.from({ length: 1 + r.int(2) }, () =>
    weighted ? { weight: r.pick([1, 50, 100]), podAffinityTerm: term(r) } : term(r),
  );
}

function spread(r: Rng): Json[] | undefined {
  if (!r.chance(0.35)) return undefined;
  return Array.from({ length: 1 + r.int(2) }, () => ({
    maxSkew: 1 + r.int(3),
    topologyKey: r.pick(KEYS),
    whenUnsatisfiable: r.pick(['DoNotSchedule', 'ScheduleAnyway']),
    labelSelector: selector(r),
    ...(r.chance(0.3) ? { minDomains: 1 + r.int(4) } : {}),
    ...(r.chance(0.3) ? { nodeAffinityPolicy: r.pick(['Honor', 'Ignore']) } : {}),
    ...(r.chance(0.3) ? { nodeTaintsPolicy: r.pick(['Honor', 'Ignore']) } : {}),
    ...(r.chance(0.2) ? { matchLabelKeys: ['tier'] } : {}),
  }));
}

let seq = 0;
function randomPod(r: Rng, node?: string): PodInfo {
  const name = `p${seq++}`;
  const labels: Record<string, string> = {};
  if (r.chance(0.85)) labels['app'] = r.pick(APPS);
  if (r.chance(0.5)) labels['tier'] = r.pick(['1', '2']);
  return toPodInfo({
    metadata: {
      namespace: r.pick(NAMESPACES),
      name,
      uid: `uid-${name}`,
      labels,
      ...(r.chance(0.4)
        ? {
            ownerReferences: [
              { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `rs-${r.pick(APPS)}`, controller: true },
            ],
          }
        : {}),
      ...(r.chance(0.05) ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      nodeName: node,
      containers: [{ name: 'c' }],
      ...(r.chance(0.15) ? { nodeSelector: { zone: r.pick(['z1', 'z2']) } } : {}),
      ...(r.chance(0.15) ? { tolerations: [{ key: 'dedicated', operator: 'Exists' }] } : {}),
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: terms(r, false),
          preferredDuringSchedulingIgnoredDuringExecution: terms(r, true),
        },
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: terms(r, false),
          preferredDuringSchedulingIgnoredDuringExecution: terms(r, true),
        },
      },
      topologySpreadConstraints: spread(r),
    },
    status: { phase: node ? 'Running' : 'Pending' },
  });
}

function randomNode(r: Rng, name: string): NodeInfo {
  const labels: Record<string, string> = {};
  if (r.chance(0.9)) labels['zone'] = r.pick(['z1', 'z2', 'z3']);
  if (r.chance(0.9)) labels['kubernetes.io/hostname'] = name;
  if (r.chance(0.5)) labels['rack'] = r.pick(['r1', 'r2']);
  const taints = r.chance(0.2) ? [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] : [];
  return toNodeInfo({
    metadata: { name, labels },
    spec: { taints },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
}

interface World {
  snapshot: Snapshot;
  nodes: Map<string, NodeInfo>;
  /** Pods the informer shows, by key. */
  pods: Map<string, PodInfo>;
  nsLabels: Map<string, Record<string, string>>;
}

/** One random change to the cluster or the scheduler's view of it. */
function step(r: Rng, w: World): void {
  const { snapshot } = w;
  const nodeNames = [...w.nodes.keys()];
  const podKeys = [...w.pods.keys()];
  switch (r.int(12)) {
    case 0: {
      const name = r.chance(0.1) ? 'ghost0' : `n${r.int(14)}`;
      const n = randomNode(r, name);
      w.nodes.set(name, n);
      snapshot.setNode(n);
      return;
    }
    case 1: {
      if (nodeNames.length < 3) return;
      const name = r.pick(nodeNames);
      w.nodes.delete(name);
      snapshot.deleteNode(name);
      return;
    }
    case 2:
    case 3: {
      const p = randomPod(r, r.chance(0.9) && nodeNames.length ? r.pick(nodeNames) : `ghost${r.int(2)}`);
      w.pods.set(podKey(p), p);
      snapshot.upsertPod(p);
      return;
    }
    case 4: {
      if (!podKeys.length) return;
      const key = r.pick(podKeys);
      const old = w.pods.get(key) as PodInfo;
      const labels = { ...old.labels, app: r.pick(APPS) };
      // A status-only update (the snapshot swaps the record), an in-place resize, or new labels.
      const status = { ...old, phase: old.phase === 'Running' ? 'Pending' : 'Running' };
      const resized = { ...old, resourceRequests: { ...old.resourceRequests, cpu: 100 * (1 + r.int(8)) } };
      const p = r.chance(0.3)
        ? status
        : r.chance(0.2)
          ? resized
          : r.chance(0.2)
            ? { ...old, labels, deleting: true }
            : { ...old, labels };
      w.pods.set(key, p);
      snapshot.upsertPod(p);
      return;
    }
    case 5: {
      if (!podKeys.length) return;
      const key = r.pick(podKeys);
      snapshot.deletePod(w.pods.get(key) as PodInfo);
      w.pods.delete(key);
      return;
    }
    case 6: {
      if (!nodeNames.length) return;
      const p = randomPod(r);
      w.pods.set(podKey(p), p);
      snapshot.assume(p, r.pick(nodeNames));
      return;
    }
    case 7: {
      const assumed = podKeys.filter((k) => snapshot.isAssumed(k));
      if (!assumed.length) return;
      const key = r.pick(assumed);
      const p = w.pods.get(key) as PodInfo;
      if (r.chance(0.5)) {
        snapshot.forget(key);
        w.pods.delete(key);
      } else {
        const bound = { ...p, nodeName: snapshot.nodeOf(key) as string, phase: 'Running' };
        w.pods.set(key, bound);
        snapshot.upsertPod(bound);
      }
      return;
    }
    case 8: {
      w.nsLabels.set(r.pick(NAMESPACES), r.chance(0.5) ? { team: r.pick(['red', 'blue']) } : {});
      return;
    }
    case 9: {
      // Taints alone change: the eligible domains of nodeTaintsPolicy Honor must follow.
      if (!nodeNames.length) return;
      const name = r.pick(nodeNames);
      const old = w.nodes.get(name) as NodeInfo;
      const n = {
        ...old,
        taints: old.taints.length ? [] : [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }],
      };
      w.nodes.set(name, n);
      snapshot.setNode(n);
      return;
    }
    default: {
      if (!nodeNames.length) return;
      const name = r.pick(nodeNames);
      const n = randomNode(r, name);
      w.nodes.set(name, n);
      snapshot.setNode(n);
    }
  }
}

function ctxOf(w: World, pod: PodInfo): CycleContext {
  return {
    pod,
    snapshot: w.snapshot,
    rules: [],
    loadOptions: DEFAULT_LOAD_OPTIONS,
    now: 0,
    namespaceLabels: (ns) => w.nsLabels.get(ns),
  };
}

const ipa = interPodAffinity();
/**
 * Each namespace's ReplicaSet rs-<app> selects app=<app> (and a pod may carry another app's RS as owner:
 * its default selector then selects nothing of it); ns-a's Service `front` selects tier=1.
 */
const WORKLOADS = workloadSelectors({
  replicaSets: NAMESPACES.flatMap((ns) =>
    APPS.map((app) => ({ namespace: ns, name: `rs-${app}`, selector: { matchLabels: { app } } })),
  ),
  services: [{ namespace: 'ns-a', name: 'front', selector: { matchLabels: { tier: '1' } } }],
});
const pts = podTopologySpread({}, WORKLOADS);

/** PreFilter, then Filter per node: the first failure's code ('' = passes), and the state PreFilter wrote. */
function filtered(plugin: typeof ipa | typeof pts, ctx: CycleContext) {
  const state = new CycleState();
  if (plugin.preFilter(state, ctx)?.skip) return 'skip';
  const codes = ctx.snapshot.list().map((n) => {
    const v: NodeVerdict = { node: n.name, feasible: false, reasons: [], rules: [] };
    plugin.filter(state, ctx, n, v);
    return v.reasons[0]?.code ?? '';
  });
  return { codes, state };
}

function interPodAffinityFiltered(ctx: CycleContext) {
  const f = filtered(ipa, ctx);
  if (f === 'skip') return f;
  const s = f.state.read<InterPodAffinityFilterState>(FILTER_STATE_KEY) as InterPodAffinityFilterState;
  const record = (m: Map<string, number>) => Object.fromEntries(m);
  return {
    codes: f.codes,
    existingAnti: record(s.existingAntiCounts),
    anti: record(s.antiCounts),
    affinity: record(s.affinityCounts),
  };
}

/** PodTopologySpread's PreFilter state, read by its key (the plugin keeps its shape private). */
interface SpreadState {
  counts: Map<string, number>[];
  domains: number[];
  min: number[];
}

function podTopologySpreadFiltered(ctx: CycleContext) {
  const f = filtered(pts, ctx);
  if (f === 'skip') return f;
  const s = f.state.read<SpreadState>('PodTopologySpread/preFilter') as SpreadState;
  return {
    codes: f.codes,
    constraints: s.counts.map((m, i) => ({
      counts: Object.fromEntries(m),
      domains: s.domains[i],
      min: s.min[i],
    })),
  };
}

function rawScores(plugin: typeof ipa | typeof pts, ctx: CycleContext, nodes = ctx.snapshot.list()) {
  const state = new CycleState();
  if (plugin.preScore(state, ctx, nodes) === 'skip') return 'skip';
  return nodes.map((n) => plugin.score(state, ctx, n));
}

/** Both plugins against the walk, for `pod` on the world as it is now. */
function compare(r: Rng, w: World, pod: PodInfo, where: string): void {
  const ctx = ctxOf(w, pod);
  const ns = (x: string) => w.nsLabels.get(x);
  const feasible = ctx.snapshot.list().filter(() => r.chance(0.7));
  expect(interPodAffinityFiltered(ctx), `${where} InterPodAffinity Filter`).toEqual(
    interPodAffinityFilterByWalk(w.snapshot, pod, ns),
  );
  expect(rawScores(ipa, ctx), `${where} InterPodAffinity Score`).toEqual(
    interPodAffinityScoreByWalk(w.snapshot, pod, ns),
  );
  expect(podTopologySpreadFiltered(ctx), `${where} PodTopologySpread Filter`).toEqual(
    podTopologySpreadFilterByWalk(w.snapshot, pod, SYSTEM_DEFAULT_CONSTRAINTS, WORKLOADS),
  );
  expect(rawScores(pts, ctx, feasible), `${where} PodTopologySpread Score`).toEqual(
    podTopologySpreadScoreByWalk(w.snapshot, pod, feasible, SYSTEM_DEFAULT_CONSTRAINTS, true, WORKLOADS),
  );
}

describe('InterPodAffinity and PodTopologySpread: incremental counts agree with a walk over every pod', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
    it(`seed ${seed}`, () => {
      const r = rng(seed);
      const w: World = { snapshot: new Snapshot(), nodes: new Map(), pods: new Map(), nsLabels: new Map() };
      for (const ns of NAMESPACES) w.nsLabels.set(ns, r.chance(0.5) ? { team: r.pick(['red', 'blue']) } : {});
      for (let i = 0; i < 6; i++) step(r, w);
      // The same pods asked at every step: what they cached at one step must be right at the next.
      const probes = Array.from({ length: 6 }, () => randomPod(r));
      for (let s = 0; s < 100; s++) {
        step(r, w);
        for (const p of probes) compare(r, w, p, `seed ${seed} step ${s} probe ${p.name}`);
        compare(r, w, randomPod(r), `seed ${seed} step ${s}`);
        // A what-if (preemption, nominated pods): counts follow the edit and return after undo.
        if (s % 10 === 0 && w.nodes.size > 0) {
          const edit = w.snapshot.edit();
          const placedKeys = [...w.pods.keys()].filter((k) => w.snapshot.nodeOf(k) !== undefined);
          if (placedKeys.length) edit.remove(r.pick(placedKeys));
          const extra = randomPod(r);
          edit.add(podKey(extra), extra, r.pick([...w.nodes.keys()]));
          compare(r, w, randomPod(r), `seed ${seed} step ${s} (edit)`);
          edit.undo();
          compare(r, w, randomPod(r), `seed ${seed} step ${s} (undone)`);
        }
      }
    });
  }
});

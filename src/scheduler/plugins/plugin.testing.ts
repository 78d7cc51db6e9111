/**
 * Harness for the per-plugin tests: pods and nodes from raw specs (through toPodInfo/toNodeInfo, so
 * the resource model is production's), a profile holding just the plugin under test, and one cycle of
 * it through the real runtime (PreFilter → Filter → PreScore → Score → NormalizeScore).
 */
import { toNodeInfo, toPodInfo } from '../../cluster/convert.js';
import type { NodeInfo, PodInfo } from '../../cluster/model.js';
import { DEFAULT_LOAD_OPTIONS, type LoadOptions, type NodeLoad } from '../../load/types.js';
import { rulesForPod } from '../../rules/rule.js';
import type { NodeLoadRule } from '../../rules/types.js';
import { type CycleResult, runCycle } from '../cycle.js';
import type { Profile } from '../framework/runtime.js';
import type { AnyPlugin } from '../framework/types.js';
import type { FilterReason, NodeVerdict } from '../framework/verdict.js';
import { loadsFor, NOW, snapshotOf } from '../testing.js';

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON, as a user writes it.
export type Json = any;

/** A pod from a raw spec; `spec.containers` defaults to one container without requests. */
export function specPod(name: string, spec: Json = {}, o: { meta?: Json; phase?: string } = {}): PodInfo {
  return toPodInfo({
    metadata: { namespace: 'default', name, uid: `uid-${name}`, resourceVersion: '1', ...o.meta },
    spec: { schedulerName: 'nodeload-scheduler', containers: [{ name: 'c' }], ...spec },
    status: { phase: o.phase ?? (spec.nodeName ? 'Running' : 'Pending') },
  });
}

/** A container with the given requests (and optional extra fields: restartPolicy, image, ports). */
export function container(name: string, requests: Record<string, string> = {}, extra: Json = {}): Json {
  return { name, resources: { requests }, ...extra };
}

export interface SpecNode {
  allocatable?: Record<string, string>;
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  images?: { names: string[]; sizeBytes: number }[];
  unschedulable?: boolean;
  /** status.declaredFeatures. */
  declaredFeatures?: string[];
}

/** A node; allocatable defaults to 4 cpu, 8Gi memory, 110 pods (a given map replaces it entirely). */
export function specNode(name: string, o: SpecNode = {}): NodeInfo {
  const allocatable = o.allocatable ?? { cpu: '4', memory: '8Gi', pods: '110' };
  return toNodeInfo({
    metadata: { name, uid: `uid-${name}`, resourceVersion: '1', labels: o.labels ?? {} },
    spec: { taints: o.taints, unschedulable: o.unschedulable },
    status: {
      capacity: allocatable,
      allocatable,
      images: o.images,
      ...(o.declaredFeatures ? { declaredFeatures: o.declaredFeatures } : {}),
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  });
}

const has = (p: AnyPlugin, m: keyof AnyPlugin) => typeof p[m] === 'function';

/** A profile with only these plugins, at every point each implements (Score weight 1 unless given). */
export function profileOf(...plugins: (AnyPlugin | [AnyPlugin, number])[]): Profile {
  const list = plugins.map((p) => (Array.isArray(p) ? p : ([p, 1] as [AnyPlugin, number])));
  // biome-ignore lint/suspicious/noExplicitAny: narrowed by the method check.
  const at = (m: keyof AnyPlugin): any[] => list.filter(([p]) => has(p, m)).map(([p]) => p);
  return {
    schedulerName: 'test',
    preEnqueue: at('preEnqueue'),
    preFilter: at('preFilter'),
    filter: at('filter'),
    postFilter: at('postFilter'),
    preScore: at('preScore'),
    // biome-ignore lint/suspicious/noExplicitAny: narrowed by the method check.
    score: list.filter(([p]) => has(p, 'score')).map(([p, weight]) => ({ plugin: p as any, weight })),
    reserve: at('reserve'),
    permit: at('permit'),
    preBind: at('preBind'),
    postBind: at('postBind'),
  };
}

export interface World {
  nodes: readonly NodeInfo[];
  /** Pods bound to the nodes. */
  pods?: readonly PodInfo[];
  /** Every rule; those covering the pod apply. */
  rules?: readonly NodeLoadRule[];
  /** Defaults to requests-based loads of `nodes` with `pods`. */
  loads?: ReadonlyMap<string, NodeLoad>;
  loadOptions?: LoadOptions;
}

/** One cycle of `plugin` (or a prepared profile) for `pod`. */
export function cycleOf(plugin: AnyPlugin | Profile, pod: PodInfo, w: World): CycleResult {
  const profile = 'schedulerName' in plugin ? plugin : profileOf(plugin);
  const pods = w.pods ?? [];
  const loadOptions = w.loadOptions ?? DEFAULT_LOAD_OPTIONS;
  return runCycle({
    profile,
    pod,
    snapshot: snapshotOf(w.nodes, pods),
    rules: rulesForPod(w.rules ?? [], pod),
    loads: w.loads ?? loadsFor([...w.nodes], [...pods], loadOptions),
    loadOptions,
    now: NOW,
  });
}

/** The verdict of the plugin for the pod on a single node. */
export function verdictOn(
  plugin: AnyPlugin,
  pod: PodInfo,
  n: NodeInfo,
  w: Omit<World, 'nodes'> = {},
): NodeVerdict {
  const v = cycleOf(plugin, pod, { ...w, nodes: [n] }).verdicts[0];
  if (!v) throw new Error('no verdict');
  return v;
}

/** Aggregatable texts of the reasons. */
export function reasonsOf(v: NodeVerdict): string[] {
  return v.reasons.map((r: FilterReason) => r.reason);
}

/**
 * The plugin's normalized score per node (before the weight), or undefined for every node when
 * PreScore skipped it.
 */
export function scoresOf(plugin: AnyPlugin, pod: PodInfo, w: World): Record<string, number | undefined> {
  const { ranked } = cycleOf(plugin, pod, w);
  const out: Record<string, number | undefined> = {};
  for (const r of ranked) out[r.node] = r.scores.find((s) => s.plugin === plugin.name)?.score;
  return out;
}

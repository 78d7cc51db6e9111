/**
 * PodTopologySpread's constraints as a cycle uses them (the formulas are in pod-topology-spread.ts): the
 * selector each counts with, the node inclusion policies, the matching pods per node (read from the
 * snapshot's incremental counts) and the eligible topology domains (cached while the nodes do not change).
 */
import { selectorAnchors, selectorMatches, withMatchLabelKeys } from '../../cluster/labels.js';
import type { NodeInfo, PodInfo, TopologySpreadConstraint } from '../../cluster/model.js';
import type { Snapshot } from '../framework/snapshot.js';
import { nodeAffinityMatches, untoleratedTaint } from '../predicates.js';
import { defaultSelectorOf, type WorkloadSelectors } from './default-selector.js';

export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';

/** Which pods a constraint counts. */
interface Selector {
  /** Counting short-circuits to 0 (nil selector, or v1.36's treatment of an empty one). */
  readonly countsNone: boolean;
  /** Names the selector, for the snapshot's cached counts. */
  readonly key: string;
  /** Labels every pod it selects carries (selectorAnchors), for the snapshot's index. */
  readonly anchors?: readonly string[];
  matches(pod: PodInfo): boolean;
}

export interface Constraint {
  maxSkew: number;
  key: string;
  hostname: boolean;
  minDomains: number;
  honorAffinity: boolean;
  honorTaints: boolean;
  selector: Selector;
}

const NOTHING: Selector = { countsNone: true, key: '', matches: () => false };

function labelSelectorOf(c: TopologySpreadConstraint, podLabels: Record<string, string>): Selector {
  if (!c.labelSelector) return NOTHING;
  const sel = withMatchLabelKeys(c.labelSelector, c.matchLabelKeys, podLabels) ?? {};
  const empty = Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions?.length ?? 0) === 0;
  return {
    countsNone: empty,
    key: `labels:${JSON.stringify(sel)}`,
    anchors: selectorAnchors(sel),
    matches: (p) => selectorMatches(sel, p.labels),
  };
}

/** Default constraints count with the pod's default selector (default-selector.ts), undefined when empty. */
function defaultSelector(pod: PodInfo, workloads: WorkloadSelectors): Selector | undefined {
  const sel = defaultSelectorOf(pod, workloads);
  if (!sel) return undefined;
  return {
    countsNone: false,
    key: `default:${JSON.stringify(sel)}`,
    anchors: selectorAnchors(sel),
    matches: (p) => selectorMatches(sel, p.labels),
  };
}

/**
 * Counted pods per node name: same namespace as the incoming pod, not terminating, selected — the
 * snapshot keeps these per selector (pod-counts.ts), so a cycle reads them instead of walking every pod.
 */
export function matchingPerNode(
  snapshot: Snapshot,
  selector: Selector,
  namespace: string,
): ReadonlyMap<string, number> {
  if (selector.countsNone) return NO_COUNTS;
  return snapshot.podCounts({
    key: `spread|${namespace}|${selector.key}`,
    namespaces: new Set([namespace]),
    anchors: selector.anchors,
    matches: (p) => !p.deleting && p.namespace === namespace && selector.matches(p),
  });
}

const NO_COUNTS: ReadonlyMap<string, number> = new Map();

function toConstraint(c: TopologySpreadConstraint, selector: Selector): Constraint {
  return {
    maxSkew: c.maxSkew,
    key: c.topologyKey,
    hostname: c.topologyKey === LABEL_HOSTNAME,
    minDomains: c.minDomains ?? 1,
    honorAffinity: (c.nodeAffinityPolicy || 'Honor') === 'Honor',
    honorTaints: c.nodeTaintsPolicy === 'Honor',
    selector,
  };
}

export function constraintsOf(
  pod: PodInfo,
  action: 'DoNotSchedule' | 'ScheduleAnyway',
  defaults: readonly TopologySpreadConstraint[],
  workloads: WorkloadSelectors,
): Constraint[] {
  if (pod.topologySpreadConstraints.length > 0) {
    return pod.topologySpreadConstraints
      .filter((c) => c.whenUnsatisfiable === action)
      .map((c) => toConstraint(c, labelSelectorOf(c, pod.labels)));
  }
  const list = defaults.filter((c) => c.whenUnsatisfiable === action);
  if (list.length === 0) return [];
  const selector = defaultSelector(pod, workloads);
  return selector ? list.map((c) => toConstraint(c, selector)) : [];
}

export function labelOf(labels: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

export function hasAllKeys(labels: Record<string, string>, cs: readonly Constraint[]): boolean {
  for (const c of cs) if (!Object.hasOwn(labels, c.key)) return false;
  return true;
}

/** matchNodeInclusionPolicies, with the two node-wide checks computed at most once per node. */
export class Inclusion {
  private affinity: boolean | undefined;
  private taints: boolean | undefined;

  constructor(
    private readonly pod: PodInfo,
    private readonly node: NodeInfo,
  ) {}

  admits(c: Constraint): boolean {
    if (c.honorAffinity) {
      if (this.affinity === undefined) this.affinity = nodeAffinityMatches(this.pod, this.node);
      if (!this.affinity) return false;
    }
    if (c.honorTaints) {
      if (this.taints === undefined) this.taints = !untoleratedTaint(this.node.taints, this.pod.tolerations);
      if (!this.taints) return false;
    }
    return true;
  }
}

/** Per snapshot: constraint shape → eligible domain → eligible nodes there, valid for one node generation. */
interface DomainCache {
  generation: number;
  shapes: Map<string, ReadonlyMap<string, number>>;
}

/** Upper bound on the shapes kept per snapshot (pods differ in node affinity and tolerations). */
const MAX_SHAPES = 128;

/**
 * The eligible domains of one constraint: the values of c.key over the nodes that have every
 * constraint's key and pass c's inclusion policies. They depend on the nodes and on the pod only through
 * its node affinity (nodeAffinityPolicy Honor) and tolerations (nodeTaintsPolicy Honor), so pods of one
 * shape share them until a node arrives, leaves or changes labels or taints.
 */
export class EligibleDomains {
  private readonly caches = new WeakMap<Snapshot, DomainCache>();

  of(
    snapshot: Snapshot,
    pod: PodInfo,
    constraints: readonly Constraint[],
    c: Constraint,
  ): ReadonlyMap<string, number> {
    let cache = this.caches.get(snapshot);
    if (!cache || cache.generation !== snapshot.nodeGeneration) {
      cache = { generation: snapshot.nodeGeneration, shapes: new Map() };
      this.caches.set(snapshot, cache);
    }
    const shape = JSON.stringify([
      constraints.map((x) => x.key),
      c.key,
      c.honorAffinity ? [pod.nodeSelector, pod.requiredNodeAffinity] : 0,
      c.honorTaints ? pod.tolerations : 0,
    ]);
    let domains = cache.shapes.get(shape);
    if (!domains) {
      const m = new Map<string, number>();
      for (const n of snapshot.list()) {
        const node = n.node;
        if (!node || !hasAllKeys(node.labels, constraints) || !new Inclusion(pod, node).admits(c)) continue;
        const v = node.labels[c.key] as string;
        m.set(v, (m.get(v) ?? 0) + 1);
      }
      if (cache.shapes.size >= MAX_SHAPES) cache.shapes.clear();
      cache.shapes.set(shape, m);
      domains = m;
    }
    return domains;
  }
}

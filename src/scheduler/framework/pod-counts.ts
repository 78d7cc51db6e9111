/**
 * How many counted pods on each node a selector matches, kept up to date instead of recounted per cycle.
 * PodTopologySpread and InterPodAffinity ask, per cycle, "how many pods matching S are in each topology
 * domain"; walking every pod of the cluster for that made their PreFilter cost grow with the cluster.
 * Here each selector a plugin asked about (a PodMatcher, named by a key) keeps its per-node count, and
 * every pod the snapshot places or removes is tested against the matchers of its namespace only:
 *
 *   count[m][node] = #{pods p counted on node : m.matches(p)}      (entries at 0 are dropped)
 *   first ask for m: built from the pods of m's namespaces (every pod when m spans all namespaces);
 *   afterwards:      count[m][node] ± 1 on each place/remove of a pod p with m.matches(p).
 *
 * A matcher that names labels every match carries (its anchors, "key=value") is tested only against
 * pods carrying one of them, its entry's anchor: with hundreds of selectors in one namespace (a matcher
 * per Deployment's anti-affinity or spread), each pod event then tests the few whose anchor it has
 * instead of all of them. The anchor is the one fewest counted pods carry, checked again each time the
 * matcher is asked: selectors often share a label (app=shop) beside the one that tells them apart
 * (shard=7), and anchored on the shared one every shop pod would be tested against every shop selector
 * (the scheduler bench's backlog profile: a tenth of the gateway's CPU). Any of them is correct, since
 * every match carries all of them; the choice is only how many non-matching pods get tested.
 *
 * At most `capacity` matchers are kept, least recently asked dropped first: a dropped one is simply
 * rebuilt when asked again, so the bound costs time, never correctness. A matcher must be pure (same key,
 * same answer for a pod, at any time): anything that changes with the cluster — a namespaceSelector's
 * answer, say — is resolved by the caller into the key (a concrete namespace set) before asking.
 */
import type { PodInfo } from '../../cluster/model.js';

export interface PodMatcher {
  /** Names the predicate: two matchers with one key must answer alike for every pod. */
  readonly key: string;
  /** The only namespaces whose pods can match; undefined: any namespace. */
  readonly namespaces: ReadonlySet<string> | undefined;
  /** Labels ("key=value", see selectorAnchors) every matching pod carries; none known: empty or absent. */
  readonly anchors?: readonly string[] | undefined;
  matches(pod: PodInfo): boolean;
}

interface Entry {
  readonly matcher: PodMatcher;
  /** Node name → matching pods counted there (> 0). */
  readonly perNode: Map<string, number>;
  /** The one of the matcher's anchors it is indexed by (the rarest when last checked). */
  anchor: string | undefined;
}

/**
 * What building a new entry needs from the snapshot: the counted pods of a namespace, with their node —
 * or, given an anchor, at least every counted pod carrying that label (the matcher sorts out the rest).
 */
export type PodsOf = (namespace: string | undefined, anchor?: string) => Iterable<readonly [PodInfo, string]>;

/** How many counted pods carry the label "key=value" now. */
export type Carriers = (anchor: string) => number;

export class PodCountIndex {
  /** Key → entry, least recently asked first. */
  private readonly entries = new Map<string, Entry>();
  /** Entries without an anchor, by the namespaces they are limited to, or for any namespace. */
  private readonly byNamespace = new Map<string, Set<Entry>>();
  private readonly anyNamespace = new Set<Entry>();
  /** Entries with an anchor, by it. */
  private readonly byAnchor = new Map<string, Set<Entry>>();

  constructor(
    private readonly podsOf: PodsOf,
    private readonly carriers: Carriers,
    private readonly capacity = 256,
  ) {}

  /** Matching pods per node name (live: read it before the snapshot changes again). */
  counts(matcher: PodMatcher): ReadonlyMap<string, number> {
    const known = this.entries.get(matcher.key);
    if (known) {
      this.entries.delete(matcher.key);
      this.entries.set(matcher.key, known);
      this.reanchor(known);
      return known.perNode;
    }
    const anchor = this.rarest(matcher.anchors, undefined);
    const entry: Entry = { matcher, perNode: new Map(), anchor };
    // An anchored matcher only needs the pods carrying its label, not every pod of its namespaces.
    const sources = anchor !== undefined ? [this.podsOf(undefined, anchor)] : [];
    for (const ns of anchor !== undefined ? [] : (matcher.namespaces ?? [undefined])) {
      sources.push(this.podsOf(ns));
    }
    for (const pods of sources) {
      for (const [pod, node] of pods) if (matcher.matches(pod)) bump(entry.perNode, node, 1);
    }
    this.entries.set(matcher.key, entry);
    if (anchor !== undefined) addTo(this.byAnchor, anchor, entry);
    else if (matcher.namespaces === undefined) this.anyNamespace.add(entry);
    else for (const ns of matcher.namespaces) addTo(this.byNamespace, ns, entry);
    if (this.entries.size > this.capacity) this.drop(this.entries.keys().next().value as string);
    return entry.perNode;
  }

  /** The anchor fewest counted pods carry; `current` unless another is strictly rarer. */
  private rarest(anchors: readonly string[] | undefined, current: string | undefined): string | undefined {
    if (!anchors || anchors.length === 0) return undefined;
    let best = current ?? (anchors[0] as string);
    if (anchors.length === 1) return best;
    let fewest = this.carriers(best);
    for (const a of anchors) {
      if (fewest === 0) break;
      const n = this.carriers(a);
      if (n < fewest) {
        best = a;
        fewest = n;
      }
    }
    return best;
  }

  /** Moves an entry to a rarer anchor when one is now rarer than its own (a few lookups per ask). */
  private reanchor(e: Entry): void {
    const best = this.rarest(e.matcher.anchors, e.anchor);
    if (best === e.anchor) return;
    // A matcher with anchors always has an entry anchor, so both are set here.
    removeFrom(this.byAnchor, e.anchor as string, e);
    e.anchor = best;
    addTo(this.byAnchor, best as string, e);
  }

  /** A pod was placed on (delta 1) or removed from (delta −1) `node`. */
  changed(pod: PodInfo, node: string, delta: 1 | -1): void {
    for (const e of this.anyNamespace) if (e.matcher.matches(pod)) bump(e.perNode, node, delta);
    const set = this.byNamespace.get(pod.namespace);
    if (set) for (const e of set) if (e.matcher.matches(pod)) bump(e.perNode, node, delta);
    if (this.byAnchor.size === 0) return;
    const labels = pod.labels;
    for (const key in labels) {
      const anchored = this.byAnchor.get(`${key}=${labels[key]}`);
      if (anchored) for (const e of anchored) if (e.matcher.matches(pod)) bump(e.perNode, node, delta);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    if (e.anchor !== undefined) removeFrom(this.byAnchor, e.anchor, e);
    else if (e.matcher.namespaces === undefined) this.anyNamespace.delete(e);
    else for (const ns of e.matcher.namespaces) removeFrom(this.byNamespace, ns, e);
  }
}

function addTo(index: Map<string, Set<Entry>>, key: string, e: Entry): void {
  let set = index.get(key);
  if (!set) {
    set = new Set();
    index.set(key, set);
  }
  set.add(e);
}

function removeFrom(index: Map<string, Set<Entry>>, key: string, e: Entry): void {
  const set = index.get(key);
  set?.delete(e);
  if (set?.size === 0) index.delete(key);
}

function bump(m: Map<string, number>, key: string, delta: number): void {
  const n = (m.get(key) ?? 0) + delta;
  if (n > 0) m.set(key, n);
  else m.delete(key);
}

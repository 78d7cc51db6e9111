/**
 * The scheduler's view of every node, as kube-scheduler's cache and NodeInfo keep it: the node, the
 * pods on it (bound and assumed; terminal pods no longer count), and what PreFilter/Filter read
 * aggregated — requests per resource name, used host ports, pods with (anti-)affinity terms, claims in
 * use. Kept incrementally from the shared cache's events and the scheduler's assumptions, never rebuilt
 * per cycle; a cycle runs synchronously, so the live structure is that cycle's consistent snapshot.
 * Beside the nodes it keeps what PodTopologySpread and InterPodAffinity would otherwise recount from every
 * pod each cycle: matching pods per node for the selectors they ask about (pod-counts.ts) and the placed
 * pods' affinity terms per topology domain (term-index.ts), both updated on every place and remove.
 */
import {
  type HostPort,
  type NodeInfo,
  type PodInfo,
  podKey,
  type ResourceList,
  type Taint,
} from '../../cluster/model.js';
import type { NodeLoad } from '../../load/types.js';
import { PodCountIndex, type PodMatcher } from './pod-counts.js';
import { hasTerms, type TermGroup, TermIndex, type TermKind } from './term-index.js';

function counts(pod: PodInfo): boolean {
  return !pod.terminal;
}

function sameRecord(a: Record<string, string | number>, b: Record<string, string | number>): boolean {
  if (a === b) return true;
  let n = 0;
  for (const k in a) {
    if (a[k] !== b[k] || !Object.hasOwn(b, k)) return false;
    n++;
  }
  for (const _ in b) n--;
  return n === 0;
}

/**
 * Whether a newer record of a counted pod changes nothing the snapshot aggregates: the node's requests,
 * the selector counts (labels, owner, deletion), the term index (labels; the terms themselves, host ports
 * and volumes are immutable in a pod's spec). Most pod events are status updates (a kubelet reporting
 * Running, conditions, IPs): those only swap the record, instead of un-counting and re-counting the pod
 * in every index.
 */
function sameCountedFacts(a: PodInfo, b: PodInfo): boolean {
  return (
    a.uid === b.uid &&
    a.nodeName === b.nodeName &&
    a.deleting === b.deleting &&
    a.terminal === b.terminal &&
    a.ownerKind === b.ownerKind &&
    a.ownerName === b.ownerName &&
    a.priority === b.priority &&
    a.noRequests === b.noRequests &&
    sameRecord(a.labels, b.labels) &&
    sameRecord(a.resourceRequests, b.resourceRequests)
  );
}

export class NodeSnapshot {
  /** Undefined while pods name a node the cache has not shown yet. */
  node: NodeInfo | undefined;
  readonly pods = new Map<string, PodInfo>();
  /** Σ resourceRequests of the counted pods, per resource name. */
  readonly requested: ResourceList = {};
  /** Pods with (anti-)affinity terms: re-indexed when the node's labels change. */
  readonly podsWithAffinity = new Map<string, PodInfo>();
  /** Host ports in use, per pod. */
  readonly usedPorts = new Map<string, readonly HostPort[]>();
  /** PVC (namespace/claim) → how many pods here use it. */
  readonly claims = new Map<string, number>();
  /** Pods here that request neither cpu nor memory (LoadAware counts them with the estimate). */
  noRequestPods = 0;
  /** The node's effective load for this cycle (set by the runtime from the load tracker). */
  load: NodeLoad | undefined;
  /**
   * cpu% and memory% with the cycle's pod placed, memoised for that cycle (plugins/load-after.ts): valid
   * while the cycle's state and the node's load are the ones they were computed for. Numbers on the node,
   * not a record: a record (or a placed-load view) per node per cycle was 48–110 bytes of garbage each,
   * and double fields of a long-lived object are overwritten in place. NaN until first placed.
   */
  cpuPercentAfter = Number.NaN;
  memoryPercentAfter = Number.NaN;
  placedState: object | undefined = undefined;
  placedBase: NodeLoad | undefined = undefined;

  constructor(readonly name: string) {}

  get podCount(): number {
    return this.pods.size;
  }

  add(key: string, pod: PodInfo): void {
    this.pods.set(key, pod);
    if (pod.noRequests) this.noRequestPods++;
    const req = pod.resourceRequests;
    for (const r in req) this.requested[r] = (this.requested[r] ?? 0) + (req[r] as number);
    if (hasTerms(pod)) this.podsWithAffinity.set(key, pod);
    if (pod.hostPorts.length > 0) this.usedPorts.set(key, pod.hostPorts);
    for (const v of pod.volumes) {
      if (!v.claimName) continue;
      const c = `${pod.namespace}/${v.claimName}`;
      this.claims.set(c, (this.claims.get(c) ?? 0) + 1);
    }
  }

  /** The newer record of a pod counted here whose counted facts are unchanged (sameCountedFacts). */
  replace(key: string, pod: PodInfo): void {
    this.pods.set(key, pod);
    if (this.podsWithAffinity.has(key)) this.podsWithAffinity.set(key, pod);
  }

  remove(key: string): PodInfo | undefined {
    const pod = this.pods.get(key);
    if (!pod) return undefined;
    this.pods.delete(key);
    if (pod.noRequests) this.noRequestPods--;
    const req = pod.resourceRequests;
    for (const r in req) {
      const left = (this.requested[r] ?? 0) - (req[r] as number);
      if (left > 0) this.requested[r] = left;
      else delete this.requested[r];
    }
    this.podsWithAffinity.delete(key);
    this.usedPorts.delete(key);
    for (const v of pod.volumes) {
      if (!v.claimName) continue;
      const c = `${pod.namespace}/${v.claimName}`;
      const n = (this.claims.get(c) ?? 0) - 1;
      if (n > 0) this.claims.set(c, n);
      else this.claims.delete(c);
    }
    return pod;
  }
}

/** Every node the scheduler may place on, with its pods; updated from events, read by plugins. */
/**
 * A what-if over the snapshot (preemption's victims taken off a node, nominated pods put on one): every
 * change is journaled and `undo()` restores the exact state before it, assumptions included. Meant for
 * one synchronous block — no informer event can be applied in between — so always undo in a `finally`.
 */
export interface SnapshotEdit {
  /** Takes the pod off the node it is counted on; false when it is counted nowhere. */
  remove(key: string): boolean;
  /** Counts a pod the snapshot does not hold yet on `node`. */
  add(key: string, pod: PodInfo, node: string): void;
  /** Reverts every change of this edit, newest first. */
  undo(): void;
}

type EditStep = { removed: true; key: string; pod: PodInfo; node: string } | { removed: false; key: string };

export class Snapshot {
  private readonly byName = new Map<string, NodeSnapshot>();
  /** Pod key → the node it is counted on. */
  private readonly placed = new Map<string, string>();
  private readonly assumedKeys = new Set<string>();
  /** Namespace → keys of the pods counted in it. */
  private readonly byNamespace = new Map<string, Set<string>>();
  /** "key=value" → keys of the counted pods carrying that label: a new anchored selector counts these only. */
  private readonly byLabel = new Map<string, Set<string>>();
  private readonly counts = new PodCountIndex(
    (ns, anchor) => this.podsOf(ns, anchor),
    (anchor) => this.byLabel.get(anchor)?.size ?? 0,
  );
  private readonly terms = new TermIndex();
  /** Image name → how many nodes hold it (upstream's ImageStateSummary.NumNodes), kept as nodes change. */
  private readonly imageNodes = new Map<string, number>();
  private generation = 0;
  private listCache: NodeSnapshot[] | undefined;

  /** Nodes known to the cache, in insertion order (stable across cycles). */
  list(): readonly NodeSnapshot[] {
    this.listCache ??= [...this.byName.values()].filter((n) => n.node !== undefined);
    return this.listCache;
  }

  get(name: string): NodeSnapshot | undefined {
    const n = this.byName.get(name);
    return n?.node ? n : undefined;
  }

  get size(): number {
    return this.list().length;
  }

  /**
   * Bumped whenever a node arrives, leaves, or changes its labels or taints: what a plugin derived from
   * the nodes alone (eligible topology domains, say) is valid while this stays the same.
   */
  get nodeGeneration(): number {
    return this.generation;
  }

  /** Pods matching `matcher` per node name, counted pods only, kept incrementally (pod-counts.ts). */
  podCounts(matcher: PodMatcher): ReadonlyMap<string, number> {
    return this.counts.counts(matcher);
  }

  /** The placed pods' (anti-)affinity terms of one kind, per distinct term and topology domain. */
  termGroups(kind: TermKind): Iterable<TermGroup> {
    return this.terms.of(kind);
  }

  /** How many nodes list an image under this name in their status (ImageLocality's spread). */
  nodesWithImage(name: string): number {
    return this.imageNodes.get(name) ?? 0;
  }

  /** Namespaces with at least one counted pod. */
  namespacesWithPods(): Iterable<string> {
    return this.byNamespace.keys();
  }

  isAssumed(key: string): boolean {
    return this.assumedKeys.has(key);
  }

  /** Where the pod is counted (bound or assumed), if anywhere. */
  nodeOf(key: string): string | undefined {
    return this.placed.get(key);
  }

  /** Starts a what-if (see SnapshotEdit). */
  edit(): SnapshotEdit {
    const journal: EditStep[] = [];
    return {
      remove: (key) => {
        const node = this.placed.get(key);
        const pod = node === undefined ? undefined : this.byName.get(node)?.pods.get(key);
        if (node === undefined || !pod) return false;
        this.removeKey(key);
        journal.push({ removed: true, key, pod, node });
        return true;
      },
      add: (key, pod, node) => {
        if (this.placed.has(key)) throw new Error(`pod ${key} is already counted on ${this.placed.get(key)}`);
        this.place(key, pod, node);
        journal.push({ removed: false, key });
      },
      undo: () => {
        for (let step = journal.pop(); step; step = journal.pop()) {
          if (step.removed) this.place(step.key, step.pod, step.node);
          else this.removeKey(step.key);
        }
      },
    };
  }

  // ---- updates ----

  setNode(node: NodeInfo): void {
    const n = this.entry(node.name);
    const old = n.node;
    const added = old === undefined;
    const relabelled = !added && !sameRecord(old.labels, node.labels);
    if (added || relabelled || !sameTaints(old.taints, node.taints)) this.generation++;
    if (relabelled) this.indexTerms(n, -1);
    if (old?.images !== node.images) {
      this.countImages(old, -1);
      this.countImages(node, 1);
    }
    n.node = node;
    if (added || relabelled) this.indexTerms(n, 1);
    if (added) this.listCache = undefined;
  }

  deleteNode(name: string): void {
    const n = this.byName.get(name);
    if (!n) return;
    if (n.node) {
      this.indexTerms(n, -1);
      this.countImages(n.node, -1);
      this.generation++;
    }
    n.node = undefined;
    if (n.pods.size === 0) this.byName.delete(name);
    this.listCache = undefined;
  }

  /** A pod as the informer shows it: counted on its node while bound and not terminal. */
  upsertPod(pod: PodInfo): void {
    const key = podKey(pod);
    if (!pod.nodeName) {
      // An assumed pod's own status updates (our PodScheduled patch, say) must not drop the assumption.
      if (!this.assumedKeys.has(key)) this.removeKey(key);
      return;
    }
    this.assumedKeys.delete(key);
    const n = this.placed.get(key) === pod.nodeName ? this.byName.get(pod.nodeName) : undefined;
    const counted = n?.pods.get(key);
    if (n && counted && counts(pod) && sameCountedFacts(counted, pod)) {
      n.replace(key, pod);
      return;
    }
    this.removeKey(key);
    if (counts(pod)) this.place(key, pod, pod.nodeName);
  }

  deletePod(pod: PodInfo): void {
    const key = podKey(pod);
    this.assumedKeys.delete(key);
    this.removeKey(key);
  }

  /** Counts the pod on `node` before the API server confirms the bind. */
  assume(pod: PodInfo, node: string): void {
    const key = podKey(pod);
    this.removeKey(key);
    this.assumedKeys.add(key);
    this.place(key, { ...pod, nodeName: node }, node);
  }

  /** Takes an assumption back (the bind failed); a pod the informer already shows bound stays. */
  forget(key: string): void {
    if (!this.assumedKeys.delete(key)) return;
    this.removeKey(key);
  }

  private place(key: string, pod: PodInfo, node: string): void {
    const n = this.entry(node);
    n.add(key, pod);
    this.placed.set(key, node);
    let keys = this.byNamespace.get(pod.namespace);
    if (!keys) {
      keys = new Set();
      this.byNamespace.set(pod.namespace, keys);
    }
    keys.add(key);
    for (const k in pod.labels) {
      const label = `${k}=${pod.labels[k]}`;
      let withLabel = this.byLabel.get(label);
      if (!withLabel) {
        withLabel = new Set();
        this.byLabel.set(label, withLabel);
      }
      withLabel.add(key);
    }
    this.counts.changed(pod, node, 1);
    if (n.node) this.terms.changed(key, pod, n.node.labels, 1);
  }

  private removeKey(key: string): void {
    const node = this.placed.get(key);
    if (node === undefined) return;
    this.placed.delete(key);
    const n = this.byName.get(node);
    if (!n) return;
    const pod = n.remove(key);
    if (pod) {
      const keys = this.byNamespace.get(pod.namespace);
      keys?.delete(key);
      if (keys?.size === 0) this.byNamespace.delete(pod.namespace);
      for (const k in pod.labels) {
        const label = `${k}=${pod.labels[k]}`;
        const withLabel = this.byLabel.get(label);
        withLabel?.delete(key);
        if (withLabel?.size === 0) this.byLabel.delete(label);
      }
      this.counts.changed(pod, node, -1);
      if (n.node) this.terms.changed(key, pod, n.node.labels, -1);
    }
    if (!n.node && n.pods.size === 0) this.byName.delete(node);
  }

  /** (Un)counts the node's images in the per-image node counts. */
  private countImages(node: NodeInfo | undefined, delta: 1 | -1): void {
    for (const img of node?.images ?? []) {
      for (const name of img.names) {
        const count = (this.imageNodes.get(name) ?? 0) + delta;
        if (count > 0) this.imageNodes.set(name, count);
        else this.imageNodes.delete(name);
      }
    }
  }

  /** (Un)counts the affinity terms of the node's pods under its current labels. */
  private indexTerms(n: NodeSnapshot, delta: 1 | -1): void {
    const labels = n.node?.labels;
    if (!labels) return;
    for (const [key, pod] of n.podsWithAffinity) this.terms.changed(key, pod, labels, delta);
  }

  /**
   * The counted pods of a namespace (every namespace when undefined), each with its node; with an anchor
   * ("key=value"), only those carrying that label (of any namespace: the caller's matcher checks).
   */
  private *podsOf(namespace: string | undefined, anchor?: string): Iterable<readonly [PodInfo, string]> {
    const namespaces =
      anchor !== undefined
        ? [this.byLabel.get(anchor)]
        : namespace === undefined
          ? [...this.byNamespace.values()]
          : [this.byNamespace.get(namespace)];
    for (const keys of namespaces) {
      for (const key of keys ?? []) {
        const node = this.placed.get(key) as string;
        const pod = this.byName.get(node)?.pods.get(key);
        if (pod) yield [pod, node];
      }
    }
  }

  private entry(name: string): NodeSnapshot {
    let n = this.byName.get(name);
    if (!n) {
      n = new NodeSnapshot(name);
      this.byName.set(name, n);
    }
    return n;
  }
}

function sameTaints(a: readonly Taint[], b: readonly Taint[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((t, i) => t.key === b[i]?.key && t.value === b[i]?.value && t.effect === b[i]?.effect);
}

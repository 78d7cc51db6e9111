/**
 * Keeps every node's NodeLoad current from the shared cluster cache, and holds the scheduler's assume
 * cache: a pod the scheduler has placed but the informer has not yet shown bound counts against its
 * node at once, so two decisions in a row cannot both take the same headroom.
 *
 * Changes only recompute the nodes they touch; a burst of events (a relist, a busy watch chunk) is
 * coalesced into one recompute per node. A periodic refresh lets loads turn stale when metrics stop
 * arriving (no event would otherwise say so).
 */
import { type PodInfo, podKey } from '../cluster/model.js';
import type { ClusterTopics, ClusterView } from '../cluster/view.js';
import { EventBus, type Subscribable } from '../events/bus.js';
import { computeNodeLoad, sameLoad } from './model.js';
import { DEFAULT_LOAD_OPTIONS, type LoadOptions, type NodeLoad } from './types.js';

/** `load` is undefined when the node went away; `previous` is undefined for a new node. */
export interface LoadChange {
  node: string;
  load: NodeLoad | undefined;
  previous: NodeLoad | undefined;
}

export type LoadTopics = { load: LoadChange };

/**
 * The one read-only view of the load tracker: what its readers are handed (the operator, the
 * aggregated API, the GraphQL sources; the scheduler, which also writes the assume cache, takes this
 * plus those methods). LoadTracker implements it; unit tests hand in test/kit/fake-cluster.ts's FakeLoads.
 */
export interface LoadView {
  /** A `load` event whenever a node's figure changes (or the node goes away). */
  readonly bus: Subscribable<LoadTopics>;
  /** The options the figures are computed with. */
  readonly options: LoadOptions;
  /** The node's current load; undefined when the tracker has none (an unknown node). */
  loadOf(node: string): NodeLoad | undefined;
  /** Every node's load, by node name. */
  all(): ReadonlyMap<string, NodeLoad>;
}

export interface LoadTrackerOptions {
  /** Of any rule kind: loads do not depend on rules. */
  cache: ClusterView;
  /**
   * A function is asked on every recompute (it must report metricsServed itself); a partial object
   * is merged over the defaults and metricsServed is taken from the cache.
   */
  options?: (() => LoadOptions) | Partial<Omit<LoadOptions, 'metricsServed'>>;
  /** Default: the cache's clock. */
  now?: () => number;
  /** Recompute every node this often so stale metrics are noticed; 0 disables. Default 15. */
  refreshSeconds?: number;
  onListenerError?: (err: unknown, topic: string) => void;
}

export class LoadTracker implements LoadView {
  readonly bus: EventBus<LoadTopics>;

  private readonly cache: ClusterView;
  private readonly optionsOf: () => LoadOptions;
  private readonly now: () => number;
  private readonly refreshMs: number;
  private readonly loads = new Map<string, NodeLoad>();
  /** Pod key → the pod as assumed (nodeName set to its node). */
  private readonly assumedPods = new Map<string, PodInfo>();
  private readonly assumedByNode = new Map<string, Map<string, PodInfo>>();
  private readonly dirty = new Set<string>();
  private flushScheduled: NodeJS.Immediate | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void)[] = [];

  constructor(opts: LoadTrackerOptions) {
    this.cache = opts.cache;
    this.now = opts.now ?? opts.cache.now;
    this.refreshMs = (opts.refreshSeconds ?? 15) * 1000;
    this.bus = new EventBus<LoadTopics>(
      opts.onListenerError ? { onListenerError: opts.onListenerError } : {},
    );
    const o = opts.options;
    if (typeof o === 'function') this.optionsOf = o;
    else {
      const base: LoadOptions = {
        ...DEFAULT_LOAD_OPTIONS,
        ...o,
        estimate: { ...DEFAULT_LOAD_OPTIONS.estimate, ...o?.estimate },
      };
      this.optionsOf = () => ({ ...base, metricsServed: this.cache.metricsServed });
    }
  }

  /** The options every figure is computed with (the scheduler's what-ifs must use the same). */
  get options(): LoadOptions {
    return this.optionsOf();
  }

  start(): void {
    if (this.unsubscribe.length > 0) return;
    const { bus } = this.cache;
    this.unsubscribe = [
      bus.on('node', (c) => this.markDirty((c.new ?? c.old)?.name)),
      bus.on('metrics', (c) => this.markDirty((c.new ?? c.old)?.name)),
      bus.on('pod', (c) => this.onPod(c)),
      bus.on('metricsServed', () => this.recomputeAll()),
      bus.on('synced', () => this.recomputeAll()),
    ];
    this.recomputeAll();
    if (this.refreshMs > 0) {
      this.refreshTimer = setInterval(() => this.recomputeAll(), this.refreshMs);
      this.refreshTimer.unref();
    }
  }

  stop(): void {
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    clearInterval(this.refreshTimer);
    if (this.flushScheduled) clearImmediate(this.flushScheduled);
    this.flushScheduled = undefined;
  }

  /** The node's current load (pending changes for it are applied first). */
  loadOf(node: string): NodeLoad | undefined {
    if (this.dirty.has(node)) this.recompute(node);
    return this.loads.get(node);
  }

  /** Every node's load, by node name. */
  all(): ReadonlyMap<string, NodeLoad> {
    this.flush();
    return this.loads;
  }

  /**
   * Counts `pod` against `node` until the informer shows it bound (or deleted, or finished), or
   * forget() is called — e.g. when the binding fails. A pod the cache already shows bound is not
   * assumed (it is counted already).
   */
  assume(pod: PodInfo, node: string): void {
    const key = podKey(pod);
    const previousNode = this.dropAssumption(key);
    if (previousNode !== undefined && previousNode !== node) this.recompute(previousNode);
    if (this.cache.pods.get(key)?.nodeName) {
      this.recompute(node);
      return;
    }
    const assumed: PodInfo = { ...pod, nodeName: node, scheduledAt: new Date(this.now()).toISOString() };
    this.assumedPods.set(key, assumed);
    let onNode = this.assumedByNode.get(node);
    if (!onNode) {
      onNode = new Map();
      this.assumedByNode.set(node, onNode);
    }
    onNode.set(key, assumed);
    this.recompute(node);
  }

  forget(key: string): void {
    const node = this.dropAssumption(key);
    if (node !== undefined) this.recompute(node);
  }

  isAssumed(key: string): boolean {
    return this.assumedPods.has(key);
  }

  /** The node an assumed pod was placed on. */
  assumedNode(key: string): string | undefined {
    return this.assumedPods.get(key)?.nodeName;
  }

  assumedCount(): number {
    return this.assumedPods.size;
  }

  /** Applies every pending change now (otherwise done on the next turn of the event loop). */
  flush(): void {
    if (this.flushScheduled) clearImmediate(this.flushScheduled);
    this.flushScheduled = undefined;
    if (this.dirty.size === 0) return;
    const options = this.optionsOf();
    for (const node of [...this.dirty]) this.recompute(node, options);
  }

  /** Recomputes every node (options or metrics availability changed; periodic staleness check). */
  recomputeAll(): void {
    for (const node of this.cache.nodes.keys()) this.dirty.add(node);
    for (const node of this.loads.keys()) this.dirty.add(node);
    this.flush();
  }

  private onPod(c: ClusterTopics['pod']): void {
    const pod = c.new ?? c.old;
    if (!pod) return;
    const key = podKey(pod);
    const assumed = this.assumedPods.get(key);
    if (assumed) {
      const replaced =
        c.new !== undefined && assumed.uid !== '' && c.new.uid !== '' && c.new.uid !== assumed.uid;
      const settled =
        c.type === 'delete' || replaced || (c.new?.nodeName ?? '') !== '' || c.new?.terminal === true;
      if (settled) this.markDirty(this.dropAssumption(key));
    }
    this.markDirty(c.old?.nodeName);
    this.markDirty(c.new?.nodeName);
  }

  /** Removes the assumption; returns the node it was on. */
  private dropAssumption(key: string): string | undefined {
    const assumed = this.assumedPods.get(key);
    if (!assumed) return undefined;
    this.assumedPods.delete(key);
    const onNode = this.assumedByNode.get(assumed.nodeName);
    onNode?.delete(key);
    if (onNode?.size === 0) this.assumedByNode.delete(assumed.nodeName);
    return assumed.nodeName;
  }

  private markDirty(node: string | undefined): void {
    if (!node) return;
    this.dirty.add(node);
    this.flushScheduled ??= setImmediate(() => {
      this.flushScheduled = undefined;
      this.flush();
    });
  }

  private recompute(node: string, options: LoadOptions = this.optionsOf()): void {
    this.dirty.delete(node);
    const info = this.cache.nodes.get(node);
    const previous = this.loads.get(node);
    if (!info) {
      if (!previous) return;
      this.loads.delete(node);
      this.bus.emit('load', { node, load: undefined, previous });
      return;
    }
    const bound = this.cache.podsOnNode(node).values();
    const assumed = this.assumedByNode.get(node);
    const load = computeNodeLoad({
      node: info,
      pods: assumed ? [...bound, ...assumed.values()] : bound,
      metrics: this.cache.metrics.get(node),
      now: this.now(),
      options,
    });
    this.loads.set(node, load);
    if (!previous || !sameLoad(previous, load)) this.bus.emit('load', { node, load, previous });
  }
}

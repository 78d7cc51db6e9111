/**
 * The NodeLoad objects as served, with Kubernetes resourceVersion semantics: one counter for the whole
 * resource, bumped on each change of any object, so a list's resourceVersion orders it against every
 * watch event and a watch can resume from it. Recent events are kept so a watch started from a list's
 * resourceVersion misses nothing; older ones are answered 410 Expired (the client relists).
 *
 * The counter starts at the start time in microseconds: after a restart every new version is larger
 * than any a client saw before, so a stale version is recognisably too old instead of being mistaken
 * for a current one.
 */
import type { NodeInfo } from '../cluster/model.js';
import type { NodeLoad } from '../load/types.js';
import type { NodeLoadRule } from '../rules/types.js';
import { type NodeLoadObject, nodeLoadObject, sameContent } from './nodeloads.js';

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: StoreEventType;
  /** For DELETED, the last state, stamped with the deletion's resourceVersion. */
  object: NodeLoadObject;
  /** The state before a MODIFIED (watches with selectors need it to turn it into ADDED/DELETED). */
  previous?: NodeLoadObject;
  resourceVersion: number;
}

/** What objects are built from (the cluster cache and the load tracker in the gateway). */
export interface NodeLoadSources {
  node(name: string): NodeInfo | undefined;
  nodeNames(): Iterable<string>;
  loadOf(name: string): NodeLoad | undefined;
  rules(): Iterable<NodeLoadRule>;
}

export interface NodeLoadStoreOptions {
  /** Events kept for watches that resume from a resourceVersion (default 2000). */
  historySize?: number;
  /** First resourceVersion (default: now in microseconds). */
  initialResourceVersion?: number;
}

export type EventsSince = { ok: true; events: StoreEvent[] } | { ok: false; reason: 'expired' | 'future' };

export class NodeLoadStore {
  private readonly objects = new Map<string, NodeLoadObject>();
  private readonly history: StoreEvent[] = [];
  private readonly historySize: number;
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private rv: number;
  /** A watch from this version or later can be replayed from history. */
  private oldestResumable: number;

  constructor(
    private readonly sources: NodeLoadSources,
    opts: NodeLoadStoreOptions = {},
  ) {
    this.historySize = Math.max(1, opts.historySize ?? 2000);
    this.rv = opts.initialResourceVersion ?? Date.now() * 1000;
    this.oldestResumable = this.rv;
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  get(name: string): NodeLoadObject | undefined {
    return this.objects.get(name);
  }

  list(): Iterable<NodeLoadObject> {
    return this.objects.values();
  }

  get size(): number {
    return this.objects.size;
  }

  /** Rebuilds the named objects; only real changes bump the resourceVersion and emit. */
  refresh(names: Iterable<string>): void {
    const rules = [...this.sources.rules()];
    for (const name of names) this.refreshOne(name, rules);
  }

  /** Rebuilds every object (rules changed, initial sync) and drops those whose node is gone. */
  refreshAll(): void {
    this.refresh(new Set([...this.sources.nodeNames(), ...this.objects.keys()]));
  }

  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  /** The events after `rv`, for a watch resuming there. */
  eventsSince(rv: number): EventsSince {
    if (!Number.isSafeInteger(rv) || rv < this.oldestResumable) return { ok: false, reason: 'expired' };
    if (rv > this.rv) return { ok: false, reason: 'future' };
    return { ok: true, events: this.history.filter((e) => e.resourceVersion > rv) };
  }

  private refreshOne(name: string, rules: NodeLoadRule[]): void {
    const node = this.sources.node(name);
    // loadOf may apply a pending change whose event refreshes this very object first: read the
    // previous state only afterwards, so that change is not reported twice.
    const load = node ? this.sources.loadOf(name) : undefined;
    const previous = this.objects.get(name);
    if (!node || !load) {
      // A node the tracker has no figure for yet is not served until it has one.
      if (!previous) return;
      this.objects.delete(name);
      const rv = ++this.rv;
      const object = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(rv) } };
      this.emit({ type: 'DELETED', object, resourceVersion: rv });
      return;
    }
    const candidate = nodeLoadObject(node, load, rules, previous?.metadata.resourceVersion ?? '');
    if (previous && sameContent(previous, candidate)) return;
    const rv = ++this.rv;
    candidate.metadata.resourceVersion = String(rv);
    this.objects.set(name, candidate);
    this.emit(
      previous
        ? { type: 'MODIFIED', object: candidate, previous, resourceVersion: rv }
        : { type: 'ADDED', object: candidate, resourceVersion: rv },
    );
  }

  private emit(event: StoreEvent): void {
    this.history.push(event);
    while (this.history.length > this.historySize) {
      const dropped = this.history.shift() as StoreEvent;
      this.oldestResumable = dropped.resourceVersion;
    }
    for (const fn of [...this.listeners]) {
      try {
        fn(event);
      } catch {
        // A watcher that cannot take the event ends itself; the others still get it.
      }
    }
  }
}

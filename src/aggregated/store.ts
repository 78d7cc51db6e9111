/**
 * The NodeLoad objects as served, with Kubernetes resourceVersion semantics: one counter for the whole
 * resource, bumped on each change of any object, so a list's resourceVersion orders it against every
 * watch event and a watch can resume from it. Recent events are kept so a watch started from a list's
 * resourceVersion misses nothing; older ones are answered 410 Expired (the client relists).
 *
 * Lazy: objects are built when read (list, get, a watch opening), from the sources' current view, and
 * memoised per node by the node, load and rules they were built from — an unchanged node is not built
 * again (the load tracker hands out a new record on every recompute, so "unchanged" is its own sameLoad,
 * not identity alone). A change is given its resourceVersion when it is first seen: on a read, or at
 * once while a watch is open (nodeChanged/allChanged are no-ops without watchers). Either way every
 * version ever handed out is in the history, so a watch from an older list's version still replays what
 * changed after it — changes nobody looked at yet simply get their versions when the watch opens.
 *
 * The counter starts at the start time in microseconds: after a restart every new version is larger
 * than any a client saw before, so a stale version is recognisably too old instead of being mistaken
 * for a current one.
 */
import type { NodeInfo } from '../cluster/model.js';
import { sameLoad } from '../load/model.js';
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

export type BuildNodeLoad = typeof nodeLoadObject;

export interface NodeLoadStoreOptions {
  /** Events kept for watches that resume from a resourceVersion (default 2000). */
  historySize?: number;
  /** First resourceVersion (default: now in microseconds). */
  initialResourceVersion?: number;
  /** Builds one object (default nodeLoadObject; tests count the calls). */
  build?: BuildNodeLoad;
}

export type EventsSince = { ok: true; events: StoreEvent[] } | { ok: false; reason: 'expired' | 'future' };

/** One served object and what it was built from. */
interface Entry {
  object: NodeLoadObject;
  node: NodeInfo;
  load: NodeLoad;
  rulesGeneration: number;
}

/** Whether two node records show the same in a NodeLoad (name, creation, labels, capacity; rules read labels). */
function sameNodeView(a: NodeInfo, b: NodeInfo): boolean {
  if (a === b) return true;
  if (a.name !== b.name || a.creationTimestamp !== b.creationTimestamp) return false;
  const ca = a.capacity;
  const cb = b.capacity;
  if (ca.cpuMilli !== cb.cpuMilli || ca.memoryBytes !== cb.memoryBytes || ca.pods !== cb.pods) return false;
  if (a.labels === b.labels) return true;
  const keys = Object.keys(a.labels);
  if (keys.length !== Object.keys(b.labels).length) return false;
  for (const k of keys) if (a.labels[k] !== b.labels[k] || !Object.hasOwn(b.labels, k)) return false;
  return true;
}

/** What of a rule its verdicts depend on. */
function ruleContent(rules: readonly NodeLoadRule[]): string {
  return JSON.stringify(rules.map((r) => [r.namespace, r.name, r.spec]));
}

export class NodeLoadStore {
  private readonly entries = new Map<string, Entry>();
  /** history[historyStart…] are the resumable events, oldest first. */
  private readonly history: StoreEvent[] = [];
  private historyStart = 0;
  private readonly historySize: number;
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private readonly build: BuildNodeLoad;
  private rv: number;
  /** A watch from this version or later can be replayed from history. */
  private oldestResumable: number;
  private rules: NodeLoadRule[] = [];
  private rulesKey = ruleContent([]);
  /** Bumped when the rules' content changes: every entry built before is out of date. */
  private rulesGeneration = 0;

  constructor(
    private readonly sources: NodeLoadSources,
    opts: NodeLoadStoreOptions = {},
  ) {
    this.historySize = Math.max(1, opts.historySize ?? 2000);
    this.rv = opts.initialResourceVersion ?? Date.now() * 1000;
    this.oldestResumable = this.rv;
    this.build = opts.build ?? nodeLoadObject;
  }

  /** The version of the last change handed out (read after list() for a list's version). */
  get resourceVersion(): string {
    return String(this.rv);
  }

  /** The node's object as of now. */
  get(name: string): NodeLoadObject | undefined {
    this.refreshOne(name, this.currentRules());
    return this.entries.get(name)?.object;
  }

  /** Every object as of now, in no particular order. */
  list(): Iterable<NodeLoadObject> {
    this.refreshAll();
    return Array.from(this.entries.values(), (e) => e.object);
  }

  /** Brings the named objects up to date; only real changes bump the resourceVersion and emit. */
  refresh(names: Iterable<string>): void {
    const rules = this.currentRules();
    for (const name of names) this.refreshOne(name, rules);
  }

  /** Brings every object up to date and drops those whose node is gone. */
  refreshAll(): void {
    const rules = this.currentRules();
    for (const name of this.sources.nodeNames()) this.refreshOne(name, rules);
    for (const name of [...this.entries.keys()]) if (!this.sources.node(name)) this.refreshOne(name, rules);
  }

  /** A node's load or node object changed: a watch sees it at once; without watches, the next read does. */
  nodeChanged(name: string): void {
    if (this.listeners.size > 0) this.refresh([name]);
  }

  /** Rules changed or the cache relisted: as nodeChanged, for every node. */
  allChanged(): void {
    if (this.listeners.size > 0) this.refreshAll();
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

  /**
   * The events after `rv`, for a watch resuming there. Changes not yet seen get their versions first,
   * so they are among the events (or, if there are more than the history holds, the answer is expired).
   */
  eventsSince(rv: number): EventsSince {
    this.refreshAll();
    if (!Number.isSafeInteger(rv) || rv < this.oldestResumable) return { ok: false, reason: 'expired' };
    if (rv > this.rv) return { ok: false, reason: 'future' };
    const events: StoreEvent[] = [];
    for (let i = this.history.length - 1; i >= this.historyStart; i--) {
      const e = this.history[i] as StoreEvent;
      if (e.resourceVersion <= rv) break;
      events.push(e);
    }
    return { ok: true, events: events.reverse() };
  }

  /** The rules as now, with their generation bumped if their content changed since the last read. */
  private currentRules(): NodeLoadRule[] {
    const rules = [...this.sources.rules()];
    const same = rules.length === this.rules.length && rules.every((r, i) => r === this.rules[i]);
    if (!same) {
      const key = ruleContent(rules);
      if (key !== this.rulesKey) this.rulesGeneration++;
      this.rulesKey = key;
      this.rules = rules;
    }
    return this.rules;
  }

  private refreshOne(name: string, rules: NodeLoadRule[]): void {
    const node = this.sources.node(name);
    // loadOf may apply a pending change whose event refreshes this very object first: read the
    // previous state only afterwards, so that change is not reported twice.
    const load = node ? this.sources.loadOf(name) : undefined;
    const previous = this.entries.get(name);
    if (!node || !load) {
      // A node the tracker has no figure for yet is not served until it has one.
      if (!previous) return;
      this.entries.delete(name);
      const rv = ++this.rv;
      const old = previous.object;
      const object = { ...old, metadata: { ...old.metadata, resourceVersion: String(rv) } };
      this.emit({ type: 'DELETED', object, resourceVersion: rv });
      return;
    }
    const rulesGeneration = this.rulesGeneration;
    if (previous && previous.rulesGeneration === rulesGeneration) {
      if (previous.load === load && previous.node === node) return;
      if (sameLoad(previous.load, load) && sameNodeView(previous.node, node)) {
        // Same figures in new records: remember them so the next read is an identity check.
        previous.load = load;
        previous.node = node;
        return;
      }
    }
    const candidate = this.build(node, load, rules, previous?.object.metadata.resourceVersion ?? '');
    if (previous && sameContent(previous.object, candidate)) {
      this.entries.set(name, { object: previous.object, node, load, rulesGeneration });
      return;
    }
    const rv = ++this.rv;
    candidate.metadata.resourceVersion = String(rv);
    this.entries.set(name, { object: candidate, node, load, rulesGeneration });
    this.emit(
      previous
        ? { type: 'MODIFIED', object: candidate, previous: previous.object, resourceVersion: rv }
        : { type: 'ADDED', object: candidate, resourceVersion: rv },
    );
  }

  private emit(event: StoreEvent): void {
    this.history.push(event);
    if (this.history.length - this.historyStart > this.historySize) {
      this.oldestResumable = (this.history[this.historyStart] as StoreEvent).resourceVersion;
      this.historyStart++;
      // Drop the dead prefix now and then rather than shifting the array on every event.
      if (this.historyStart >= this.historySize) {
        this.history.splice(0, this.historyStart);
        this.historyStart = 0;
      }
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

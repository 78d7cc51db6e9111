/**
 * The shared cluster cache's read-only view (ClusterView) and the load tracker's (LoadView), fed by
 * hand (the informers' role), for unit tests of what reads them: the operator, the scheduler. Every
 * change emits on the bus what the real ClusterCache emits. (Tests of the views over a real
 * ClusterCache use graphql/testing.ts's FixtureCluster, which drives the real cache through fake
 * informers.)
 */

import type { NamespaceInfo, NodeInfo, NodeMetricsInfo, PodInfo } from '../../src/cluster/model.js';
import { podKey } from '../../src/cluster/model.js';
import { StorageStores } from '../../src/cluster/storage-stores.js';
import type { ClusterView } from '../../src/cluster/view.js';
import { EventBus } from '../../src/events/bus.js';
import { loadAt } from '../../src/load/testing.js';
import type { LoadTopics, LoadView } from '../../src/load/tracker.js';
import { DEFAULT_LOAD_OPTIONS, type NodeLoad } from '../../src/load/types.js';
import type {
  RuleClusterTopics as ClusterTopics,
  NodeLoadRuleEntry as RuleEntry,
} from '../../src/rules/kind.js';
import type { NodeLoadRule, RuleStatus } from '../../src/rules/types.js';

/**
 * The storage and workload maps (claims … statefulSets) are StorageStores', the cache's own table: empty
 * unless a test fills them; nothing is emitted (a test emits on the bus itself if it must).
 */
export class FakeCluster extends StorageStores implements ClusterView<NodeLoadRule> {
  readonly bus = new EventBus<ClusterTopics>();
  /** Read when asked, so a test's fake timers apply. */
  readonly now = (): number => Date.now();
  readonly nodes = new Map<string, NodeInfo>();
  /** By namespace/name. */
  readonly pods = new Map<string, PodInfo>();
  readonly rules = new Map<string, RuleEntry>();
  readonly namespaces = new Map<string, NamespaceInfo>();
  readonly metrics = new Map<string, NodeMetricsInfo>();
  readonly metricsServed = false;
  private rv = 100;

  podsOnNode(name: string): ReadonlyMap<string, PodInfo> {
    return new Map([...this.pods].filter(([, p]) => p.nodeName === name));
  }

  unscheduledPods(): PodInfo[] {
    return [...this.pods.values()].filter((p) => !p.nodeName && !p.terminal && !p.deleting);
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }

  isReady(): boolean {
    return true;
  }

  addNode(n: NodeInfo): void {
    this.nodes.set(n.name, n);
    this.bus.emit('node', { type: 'add', new: n });
  }

  /** Adds or updates a pod, with a new resourceVersion as a watch event would carry. */
  upsertPod(p: PodInfo): void {
    const next = { ...p, resourceVersion: this.nextRv() };
    const key = podKey(p);
    const old = this.pods.get(key);
    this.pods.set(key, next);
    this.bus.emit('pod', old ? { type: 'update', old, new: next } : { type: 'add', new: next });
  }

  deletePod(key: string): void {
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    this.bus.emit('pod', { type: 'delete', old });
  }

  addRule(rule: NodeLoadRule): void {
    const entry = { rule, raw: {} };
    this.rules.set(`${rule.namespace}/${rule.name}`, entry);
    this.bus.emit('rule', { type: 'add', new: entry });
  }

  /** What the informer does after a status write: a new resourceVersion carrying the status. */
  echoStatus(key: string, status: RuleStatus, resourceVersion: string): void {
    const old = this.rules.get(key);
    if (!old) return;
    const entry = { rule: { ...old.rule, status, resourceVersion }, raw: {} };
    this.rules.set(key, entry);
    this.bus.emit('rule', { type: 'update', old, new: entry });
  }

  deleteRule(key: string): void {
    const old = this.rules.get(key);
    this.rules.delete(key);
    if (old) this.bus.emit('rule', { type: 'delete', old });
  }

  /** The next resourceVersion, as the API server would hand out. */
  nextRv(): string {
    return String(++this.rv);
  }
}

/** The load tracker's read-only view: figures set by hand, each change emitted as the tracker does. */
export class FakeLoads implements LoadView {
  readonly bus = new EventBus<LoadTopics>();
  readonly options = DEFAULT_LOAD_OPTIONS;
  private readonly loads = new Map<string, NodeLoad>();

  all(): ReadonlyMap<string, NodeLoad> {
    return this.loads;
  }

  loadOf(name: string): NodeLoad | undefined {
    return this.loads.get(name);
  }

  /** A requests-based load at these percentages (src/load/testing.ts loadAt). */
  setLoad(name: string, cpuPercent: number, memoryPercent = 10): void {
    const previous = this.loads.get(name);
    const next = loadAt(name, cpuPercent, memoryPercent);
    this.loads.set(name, next);
    this.bus.emit('load', { node: name, load: next, previous });
  }
}

/**
 * The one shared cluster cache: one informer per kind for the whole process (as client-go's shared
 * informers), converted at the boundary into the core's plain data, indexed for the hot paths, and
 * published as changes on one event bus. Everything else reads these maps through ClusterView
 * (view.ts); nothing else lists or watches these kinds.
 *
 * metrics.k8s.io has no watch: while discovery says it is served, node metrics are polled
 * (metrics-poll.ts).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { EventBus } from '../events/bus.js';
import { toNamespaceInfo, toNodeInfo, toPodInfo } from './convert.js';
import {
  type InformerHandlers,
  type InformerStats,
  type ListFn,
  ResilientInformer,
  type WatchFn,
  watchFnFor,
} from './informer.js';
import { identityOf, type KubeObject, objectKey } from './kube-object.js';
import { ApiListers, metricsVersion, type ResourceName } from './listers.js';
import { NodeMetricsGate } from './metrics-poll.js';
import type { NamespaceInfo, NodeInfo, NodeMetricsInfo, PodInfo } from './model.js';
import { podKey } from './model.js';
import { PodIndex } from './pod-index.js';
import { StorageStores, type StoreKind } from './storage-stores.js';
import type { Change, ClusterTopics, ClusterView, NamespacedObject, RuleEntry } from './view.js';

/**
 * The custom resource kind the cache also watches (the gateway's NodeLoadRule). The cache knows only
 * where it lives and how to turn an API object into plain data: the rule domain stays in src/rules.
 */
export interface CustomResourceKind<R extends NamespacedObject> {
  group: string;
  version: string;
  plural: string;
  convert(raw: KubeObject): R;
}

export type { ResourceName } from './listers.js';

export interface InformerSpec {
  name: ResourceName;
  path: string;
  list: ListFn;
  /** Poll mode when set (metrics). */
  pollIntervalMs?: number;
  versionOf?: (obj: KubeObject) => string;
}

/** What the cache needs of an informer; the default is a ResilientInformer. */
export interface InformerLike {
  start(): void;
  stop(): void;
  readonly synced: Promise<void>;
  hasSynced(): boolean;
  readonly stats: InformerStats;
}

export type InformerFactory = (spec: InformerSpec, handlers: InformerHandlers<KubeObject>) => InformerLike;

export interface ClusterCacheOptions<R extends NamespacedObject = NamespacedObject> {
  kubeConfig: KubeConfig;
  /** The custom resource kind served as `rules` (the gateway passes NodeLoadRule's). */
  rules: CustomResourceKind<R>;
  log: Logger;
  now?: () => number;
  metricsPollSeconds?: number;
  discoveryIntervalSeconds?: number;
  /**
   * Also watch PVCs, PVs, StorageClasses, CSINodes, VolumeAttachments and PodDisruptionBudgets (the
   * scheduler's volume and preemption plugins read them), Services, ReplicationControllers, ReplicaSets
   * and StatefulSets (their selectors: PodTopologySpread's default constraints) and DeviceClasses (the
   * webhook's gate). Default false.
   */
  storage?: boolean;
  /** Replaces the informers (unit tests drive the handlers directly). */
  informerFactory?: InformerFactory;
  /** Replaces client-node's Watch for the default informers (integration tests cut connections). */
  watch?: WatchFn;
  /** Whether metrics.k8s.io/v1beta1 serves nodes; default asks API discovery. */
  discoverMetrics?: () => Promise<boolean>;
}

export class ClusterCache<R extends NamespacedObject = NamespacedObject> implements ClusterView<R> {
  readonly bus: EventBus<ClusterTopics<R>>;
  readonly now: () => number;

  private readonly nodeMap = new Map<string, NodeInfo>();
  private readonly podMap = new Map<string, PodInfo>();
  private readonly podIndex = new PodIndex();
  private readonly ruleMap = new Map<string, RuleEntry<R>>();
  private readonly namespaceMap = new Map<string, NamespaceInfo>();
  private readonly stores = new StorageStores();
  // The storage kinds, PodDisruptionBudgets, DeviceClasses and the selector-bearing workload kinds
  // (storage: true; empty otherwise): storage-stores.ts says what each is.
  readonly claims: ClusterView['claims'] = this.stores.claims;
  readonly volumes: ClusterView['volumes'] = this.stores.volumes;
  readonly storageClasses: ClusterView['storageClasses'] = this.stores.storageClasses;
  readonly csiNodes: ClusterView['csiNodes'] = this.stores.csiNodes;
  readonly csiDrivers: ClusterView['csiDrivers'] = this.stores.csiDrivers;
  readonly csiStorageCapacities: ClusterView['csiStorageCapacities'] = this.stores.csiStorageCapacities;
  readonly volumeAttachments: ClusterView['volumeAttachments'] = this.stores.volumeAttachments;
  readonly deviceClasses: ClusterView['deviceClasses'] = this.stores.deviceClasses;
  readonly disruptionBudgets: ClusterView['disruptionBudgets'] = this.stores.disruptionBudgets;
  readonly services: ClusterView['services'] = this.stores.services;
  readonly replicationControllers: ClusterView['replicationControllers'] = this.stores.replicationControllers;
  readonly replicaSets: ClusterView['replicaSets'] = this.stores.replicaSets;
  readonly statefulSets: ClusterView['statefulSets'] = this.stores.statefulSets;

  private readonly log: Logger;
  private readonly factory: InformerFactory;
  private readonly metricsGate: NodeMetricsGate;
  private readonly informers = new Map<ResourceName, InformerLike>();
  private readonly readyPromise: Promise<void>;
  private resolveReady!: () => void;
  private readyFlag = false;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private readonly listers: ApiListers;

  constructor(private readonly opts: ClusterCacheOptions<R>) {
    this.log = opts.log;
    this.now = opts.now ?? Date.now;
    this.bus = new EventBus<ClusterTopics<R>>({
      onListenerError: (err, topic) => this.log.error({ err, topic }, 'cluster event listener failed'),
    });
    this.listers = new ApiListers(opts.kubeConfig, opts.rules);
    this.factory = opts.informerFactory ?? this.defaultFactory();
    const pollMs = (opts.metricsPollSeconds ?? 15) * 1000;
    this.metricsGate = new NodeMetricsGate({
      discover: opts.discoverMetrics ?? (() => this.listers.metricsServed()),
      pollMs,
      discoveryIntervalMs: (opts.discoveryIntervalSeconds ?? 60) * 1000,
      poll: (handlers) =>
        this.factory(
          { ...this.spec('nodemetrics'), pollIntervalMs: pollMs, versionOf: metricsVersion },
          handlers,
        ),
      onChange: (change) => this.bus.emit('metrics', change),
      onServed: (served) => this.bus.emit('metricsServed', { served }),
      log: this.log,
    });
    this.readyPromise = new Promise((resolve) => {
      this.resolveReady = resolve;
    });
  }

  get nodes(): ReadonlyMap<string, NodeInfo> {
    return this.nodeMap;
  }

  get pods(): ReadonlyMap<string, PodInfo> {
    return this.podMap;
  }

  get rules(): ReadonlyMap<string, RuleEntry<R>> {
    return this.ruleMap;
  }

  get namespaces(): ReadonlyMap<string, NamespaceInfo> {
    return this.namespaceMap;
  }

  /** Whether the storage kinds are watched. */
  get watchesStorage(): boolean {
    return this.opts.storage === true;
  }

  get metrics(): ReadonlyMap<string, NodeMetricsInfo> {
    return this.metricsGate.metrics;
  }

  /**
   * Whether metrics.k8s.io is registered to serve node metrics (per the last discovery check), even if
   * its backend is currently failing; flips to true only after the first poll has had its chance.
   */
  get metricsServed(): boolean {
    return this.metricsGate.isServed;
  }

  /** Every pod bound to the node, terminal and deleting ones included (the load model filters). */
  podsOnNode(node: string): ReadonlyMap<string, PodInfo> {
    return this.podIndex.onNode(node);
  }

  /** Pods not bound to a node that still want one (not terminal, not being deleted). */
  unscheduledPods(): Iterable<PodInfo> {
    return this.podIndex.waiting();
  }

  informerStats(): Partial<Record<ResourceName, InformerStats>> {
    const out: Partial<Record<ResourceName, InformerStats>> = {};
    for (const [name, informer] of this.informers) out[name] = informer.stats;
    const metrics = this.metricsGate.stats;
    if (metrics) out.nodemetrics = metrics;
    return out;
  }

  start(): void {
    if (this.state !== 'new') return;
    this.state = 'running';
    const specs: [InformerSpec, InformerHandlers<KubeObject>][] = [
      [
        this.spec('nodes'),
        this.handlers(
          (o) => this.upsertNode(o),
          (o) => this.deleteNode(o),
        ),
      ],
      [
        this.spec('pods'),
        this.handlers(
          (o) => this.upsertPod(o),
          (o) => this.deletePod(o),
        ),
      ],
      [
        this.spec('namespaces'),
        this.handlers(
          (o) => this.upsertNamespace(o),
          (o) => this.deleteNamespace(o),
        ),
      ],
      [
        this.spec('nodeloadrules'),
        this.handlers(
          (o) => this.upsertRule(o),
          (o) => this.deleteRule(o),
        ),
      ],
    ];
    if (this.opts.storage) {
      for (const kind of this.stores.kinds) specs.push([this.spec(kind.resource), this.store(kind)]);
    }
    for (const [spec, handlers] of specs) {
      const informer = this.factory(spec, handlers);
      this.informers.set(spec.name, informer);
      informer.start();
    }
    const firstMetricsRound = this.metricsGate.start();
    const optional = new Set<ResourceName>(
      this.stores.kinds.filter((k) => k.syncOptional).map((k) => k.resource),
    );
    const awaited = [...this.informers].filter(([name]) => !optional.has(name)).map(([, i]) => i.synced);
    void Promise.all([...awaited, firstMetricsRound]).then(() => {
      if (this.state !== 'running') return;
      this.readyFlag = true;
      this.log.info(
        {
          nodes: this.nodeMap.size,
          pods: this.podMap.size,
          rules: this.ruleMap.size,
          metricsServed: this.metricsGate.isServed,
        },
        'cluster cache synced',
      );
      this.resolveReady();
      this.bus.emit('synced');
    });
  }

  stop(): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    for (const informer of this.informers.values()) informer.stop();
    this.metricsGate.stop();
  }

  /**
   * Resolves once nodes, pods and rules have listed and the first metrics round is over (discovery,
   * plus the first poll when served — bounded by one poll interval so a failing metrics API cannot
   * hold readiness hostage). Never resolves if the cache is not started.
   */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  isReady(): boolean {
    return this.readyFlag;
  }

  // ---- handlers: raw JSON in, plain data out, one change event per real change ----

  private upsertNode(raw: KubeObject): void {
    const next = toNodeInfo(raw);
    const old = this.nodeMap.get(next.name);
    if (old && old.resourceVersion === next.resourceVersion) return;
    this.nodeMap.set(next.name, next);
    this.bus.emit('node', old ? { type: 'update', old, new: next } : { type: 'add', new: next });
  }

  private deleteNode(raw: KubeObject): void {
    const name = raw.metadata?.name ?? '';
    const old = this.nodeMap.get(name);
    if (!old) return;
    this.nodeMap.delete(name);
    this.bus.emit('node', { type: 'delete', old });
  }

  private upsertPod(raw: KubeObject): void {
    const next = toPodInfo(raw);
    const key = podKey(next);
    const old = this.podMap.get(key);
    if (old && old.resourceVersion === next.resourceVersion) return;
    if (old) this.podIndex.remove(key, old);
    this.podMap.set(key, next);
    this.podIndex.add(key, next);
    this.bus.emit('pod', old ? { type: 'update', old, new: next } : { type: 'add', new: next });
  }

  private deletePod(raw: KubeObject): void {
    const key = objectKey(raw);
    const old = this.podMap.get(key);
    if (!old) return;
    this.podMap.delete(key);
    this.podIndex.remove(key, old);
    this.bus.emit('pod', { type: 'delete', old });
  }

  private upsertNamespace(raw: KubeObject): void {
    const next = toNamespaceInfo(raw);
    const old = this.namespaceMap.get(next.name);
    if (old && old.resourceVersion === next.resourceVersion) return;
    this.namespaceMap.set(next.name, next);
    this.bus.emit('namespace', old ? { type: 'update', old, new: next } : { type: 'add', new: next });
  }

  private deleteNamespace(raw: KubeObject): void {
    const name = raw.metadata?.name ?? '';
    const old = this.namespaceMap.get(name);
    if (!old) return;
    this.namespaceMap.delete(name);
    this.bus.emit('namespace', { type: 'delete', old });
  }

  private upsertRule(raw: KubeObject): void {
    const rule = this.opts.rules.convert(raw);
    const key = `${rule.namespace}/${rule.name}`;
    const old = this.ruleMap.get(key);
    if (old && old.rule.resourceVersion === rule.resourceVersion) return;
    const next: RuleEntry<R> = { rule, raw };
    this.ruleMap.set(key, next);
    this.bus.emit('rule', old ? { type: 'update', old, new: next } : { type: 'add', new: next });
  }

  private deleteRule(raw: KubeObject): void {
    const key = objectKey(raw);
    const old = this.ruleMap.get(key);
    if (!old) return;
    this.ruleMap.delete(key);
    this.bus.emit('rule', { type: 'delete', old });
  }

  // ---- metrics.k8s.io (metrics-poll.ts) ----

  /** Asks discovery now (it is also asked every discoveryIntervalSeconds) and starts/stops polling. */
  checkMetricsServed(): Promise<void> {
    return this.metricsGate.check();
  }

  // ---- wiring ----

  /** Handlers keeping one plain-data map of a kind, with one change event per real change. */
  private store({ topic, map, convert, key }: StoreKind): InformerHandlers<KubeObject> {
    type T = ReturnType<StoreKind['convert']>;
    const emit = (c: Change<T>) => (this.bus.emit as (t: string, c: Change<T>) => void)(topic, c);
    return this.handlers(
      (raw) => {
        const next = convert(raw);
        const k = key(next);
        const old = map.get(k);
        if (old && old.resourceVersion === next.resourceVersion) return;
        map.set(k, next);
        emit(old ? { type: 'update', old, new: next } : { type: 'add', new: next });
      },
      (raw) => {
        const old = map.get(objectKey(raw)) ?? map.get(raw.metadata?.name ?? '');
        if (!old) return;
        map.delete(key(old));
        emit({ type: 'delete', old });
      },
    );
  }

  private handlers(
    upsert: (o: KubeObject) => void,
    remove: (o: KubeObject) => void,
  ): InformerHandlers<KubeObject> {
    // The stores decide add vs update themselves, so a relist after a gap cannot confuse them.
    return { add: upsert, update: upsert, delete: remove };
  }

  private spec(name: ResourceName): InformerSpec {
    return { name, path: this.listers.path(name), list: this.listers.list(name) };
  }

  private defaultFactory(): InformerFactory {
    const watch = this.opts.watch ?? watchFnFor(this.opts.kubeConfig);
    return (spec, handlers) =>
      new ResilientInformer<KubeObject>(
        {
          ...spec,
          // The handlers convert each object on arrival and read only its key on delete: the informer
          // need not keep a second copy of every pod (several KB each, managedFields included).
          ...(spec.pollIntervalMs ? {} : { watch, retain: identityOf }),
          log: this.opts.log.child({ resource: spec.name }),
          now: this.now,
        },
        handlers,
      );
  }
}

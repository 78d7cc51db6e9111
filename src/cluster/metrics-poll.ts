/**
 * Node metrics for the cluster cache. metrics.k8s.io has no watch and may come and go (metrics-server
 * installed, removed, or its APIService failing), so discovery is asked at start and every interval:
 * while it says node metrics are served they are polled, and when it stops saying so the poll stops and
 * every node's metrics are deleted, so load falls back to requests.
 */
import type { Logger } from 'pino';
import { toNodeMetricsInfo } from './convert.js';
import type { InformerHandlers, InformerStats } from './informer.js';
import type { KubeObject } from './kube-object.js';
import type { NodeMetricsInfo } from './model.js';
import type { Change } from './view.js';

/** The poll the gate starts and stops (an informer in poll mode). */
export interface MetricsPoll {
  start(): void;
  stop(): void;
  readonly synced: Promise<void>;
  readonly stats: InformerStats;
}

export interface NodeMetricsGateOptions {
  /** Whether metrics.k8s.io/v1beta1 serves nodes (API discovery). */
  discover: () => Promise<boolean>;
  pollMs: number;
  discoveryIntervalMs: number;
  /** A poll every pollMs feeding these handlers. */
  poll(handlers: InformerHandlers<KubeObject>): MetricsPoll;
  /** One change per real change of a node's metrics. */
  onChange(change: Change<NodeMetricsInfo>): void;
  /** Discovery's answer changed. */
  onServed(served: boolean): void;
  log: Logger;
}

function timeout<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms).unref());
}

export class NodeMetricsGate {
  private readonly map = new Map<string, NodeMetricsInfo>();
  private served = false;
  private poll: MetricsPoll | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private running = false;

  constructor(private readonly opts: NodeMetricsGateOptions) {}

  /** Node metrics by node name, from the last poll. */
  get metrics(): ReadonlyMap<string, NodeMetricsInfo> {
    return this.map;
  }

  /** Whether discovery last said node metrics are served (flips to true after the first poll's chance). */
  get isServed(): boolean {
    return this.served;
  }

  get stats(): InformerStats | undefined {
    return this.poll?.stats;
  }

  /** Starts asking discovery; resolves when the first round (and its first poll, bounded) is over. */
  start(): Promise<void> {
    this.running = true;
    const first = this.check();
    this.timer = setInterval(() => void this.check(), this.opts.discoveryIntervalMs);
    this.timer.unref();
    return first;
  }

  stop(): void {
    this.running = false;
    clearInterval(this.timer);
    this.poll?.stop();
    this.poll = undefined;
  }

  /** Asks discovery now (it is also asked every interval) and starts or stops polling. */
  check(): Promise<void> {
    this.inFlight ??= this.discoverAndApply().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async discoverAndApply(): Promise<void> {
    let served: boolean;
    try {
      served = await this.opts.discover();
    } catch (err) {
      this.opts.log.warn({ err }, 'metrics.k8s.io discovery failed; keeping the previous answer');
      return;
    }
    if (!this.running) return;
    if (served && !this.poll) {
      this.opts.log.info(
        { pollSeconds: this.opts.pollMs / 1000 },
        'metrics.k8s.io is served; polling node metrics',
      );
      const poll = this.opts.poll({
        add: (o) => this.upsert(o),
        update: (o) => this.upsert(o),
        delete: (o) => this.remove(o.metadata?.name ?? ''),
      });
      this.poll = poll;
      poll.start();
      // A failing backend must not hold the first round (and the cache's readiness) hostage.
      await Promise.race([poll.synced, timeout(this.opts.pollMs, undefined)]);
      if (!this.running || this.poll !== poll) return;
    } else if (!served && this.poll) {
      this.opts.log.warn('metrics.k8s.io is no longer served; load falls back to requests');
      this.poll.stop();
      this.poll = undefined;
      for (const name of [...this.map.keys()]) this.remove(name);
    }
    if (served !== this.served) {
      this.served = served;
      this.opts.onServed(served);
    }
  }

  private upsert(raw: KubeObject): void {
    const next = toNodeMetricsInfo(raw);
    const old = this.map.get(next.name);
    if (old && old.timestamp === next.timestamp && sameUsage(old, next)) return;
    this.map.set(next.name, next);
    this.opts.onChange(old ? { type: 'update', old, new: next } : { type: 'add', new: next });
  }

  private remove(name: string): void {
    const old = this.map.get(name);
    if (!old) return;
    this.map.delete(name);
    this.opts.onChange({ type: 'delete', old });
  }
}

function sameUsage(a: NodeMetricsInfo, b: NodeMetricsInfo): boolean {
  return (
    a.windowSeconds === b.windowSeconds &&
    a.usage.cpuMilli === b.usage.cpuMilli &&
    a.usage.memoryBytes === b.usage.memoryBytes
  );
}

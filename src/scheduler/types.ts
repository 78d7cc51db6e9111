/**
 * The scheduler's contracts: what it takes of the shared cache, the load tracker and the leader
 * election (the gateway's objects satisfy these; tests pass fakes), its options and its status.
 */
import type { Registry } from 'prom-client';
import type { ClusterView } from '../cluster/view.js';
import type { Leadership } from '../leader/lease.js';
import type { LoadTracker, LoadView } from '../load/tracker.js';
import type { BurstGuard, NodeLoadRule } from '../rules/types.js';
import type { Logger } from '../server/log.js';
import type { SchedulerApi } from './binder.js';
import type { Profile } from './framework/runtime.js';
import type { HistoryLimits } from './history.js';
import type { ProfileConfig } from './profile/config.js';
import type { VolumeBinder } from './volume-binder.js';

/** LoadAware's CPU and memory weights (--score-cpu-weight / --score-memory-weight). */
export interface ScoreWeights {
  cpu: number;
  memory: number;
}

export type { Leadership };

export interface SchedulerOptions {
  schedulerName: string;
  /** This gateway instance (the Events' reportingInstance is `<schedulerName>-<identity>`). */
  identity: string;
  bindQps: number;
  bindBurst: number;
  /** Binds issued or waiting for a token at once; the loop pauses beyond it. */
  maxBindsInFlight?: number;
  weights?: ScoreWeights;
  /**
   * false: never run the loop (extender mode — kube-scheduler places the pods of `schedulerName` and
   * calls nodeload as its extender). Default true.
   */
  native?: boolean;
  /** The profile from a KubeSchedulerConfiguration file (--scheduler-config); default profile when absent. */
  profileConfig?: ProfileConfig;
  /** Cluster-wide cap on placements per node per window (rules may add their own). */
  burst?: BurstGuard;
  history?: HistoryLimits;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  unschedulableRetryMs?: number;
  /** A repeated FailedScheduling Event with an unchanged message is written at most this often. */
  failedEventIntervalMs?: number;
  /**
   * On becoming leader, wait this long before scheduling: the previous leader releases the lease
   * before its last binds complete, and those must reach our cache first or we could fill the same
   * headroom twice. Default 2000.
   */
  leaderSettleMs?: number;
  /** How often the queue is checked against the cache's pending pods (pending-resync.ts); default 30 s. */
  pendingResyncMs?: number;
}

export interface SchedulerDeps {
  /** The storage maps and PodDisruptionBudgets stay empty unless the cache watches them (`storage: true`). */
  cache: ClusterView<NodeLoadRule>;
  /** Read, and the assume cache written: a placed pod counts against its node until the cache shows it bound. */
  loads: LoadView & Pick<LoadTracker, 'assume' | 'forget' | 'isAssumed'>;
  api: SchedulerApi;
  leader: Leadership;
  log: Logger;
  registry?: Registry;
  options: SchedulerOptions;
  /** VolumeBinding's API writes (PV claimRef, the claims' selected-node). */
  volumeBinder?: VolumeBinder;
  /** A ready-made profile (tests); otherwise built from options.profileConfig. */
  profile?: Profile;
  now?: () => number;
}

export interface SchedulerStatus {
  schedulerName: string;
  identity: string;
  running: boolean;
  leader: boolean;
  /** The shared cache finished its initial sync (scheduling waits for it). */
  cacheSynced: boolean;
  queues: { active: number; backoff: number; unschedulable: number; inFlight: number };
  bindsInFlight: number;
  /** Pods this instance bound since it started. */
  bound: number;
  /** Attempts that ended in an error (a failed bind), since start. */
  failed: number;
  /** Attempts that found no node, since start. */
  unschedulable: number;
  /** Binds refused because another instance had bound the pod already. */
  conflicts: number;
  historySize: number;
  startedAt?: string;
  /** When the last decision (any result) was made. */
  lastDecisionTime?: string;
}

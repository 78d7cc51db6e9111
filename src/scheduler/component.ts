/**
 * The scheduler as a gateway component: wires the loop to the shared cache, load tracker and leader
 * elector, and serves GET /scheduler/status.
 */
import { Router } from 'express';
import type { ClusterView } from '../cluster/view.js';
import { defaultIdentity, type LeaderElector } from '../leader/lease.js';
import type { LoadTracker } from '../load/tracker.js';
import type { NodeLoadRule } from '../rules/types.js';
import { PERMISSIONS } from '../server/access.js';
import type { ComponentContext, GatewayComponent } from '../server/component.js';
import { componentLogger } from '../server/log.js';
import { requireUserPermission } from '../server/user-auth.js';
import { KubeSchedulerApi, type SchedulerApi } from './binder.js';
import { loadProfileConfig } from './profile/config.js';
import { TokenBucket } from './ratelimit.js';
import { type Leadership, Scheduler, type SchedulerOptions } from './scheduler.js';
import { KubeVolumeBinder, type VolumeBinder } from './volume-binder.js';

export interface SchedulerComponentDeps {
  /** The gateway's election (default ctx.leader): only the leader schedules. */
  leader?: Leadership & { identity?: string };
  /** Overrides on top of the gateway config (score weights, a global burst guard, history bounds...). */
  options?: Partial<SchedulerOptions>;
  /** Replaces the API writer (tests). */
  api?: SchedulerApi;
  /** Replaces VolumeBinding's API writes (tests). */
  volumeBinder?: VolumeBinder;
}

export type SchedulerComponent = GatewayComponent & { scheduler: Scheduler };

/** The flags the scheduler reads (the gateway's config satisfies it). */
export interface SchedulerFlags {
  identity?: string | undefined;
  schedulerName: string;
  bindQps: number;
  bindBurst: number;
  scoreCpuWeight: number;
  scoreMemoryWeight: number;
  schedulerConfig?: string | undefined;
  burstMaxPlacements: number;
  burstWindowSeconds: number;
  /** false: extender mode, the loop never runs (default true). */
  nativeScheduler?: boolean;
}

/** The part of the gateway's context the scheduler uses. */
export interface SchedulerContext extends ComponentContext {
  config: SchedulerFlags;
  cache: ClusterView<NodeLoadRule>;
  /** The tracker itself: the scheduler also writes its assume cache. */
  loads: LoadTracker;
  leader: LeaderElector;
}

export function schedulerComponent(
  ctx: SchedulerContext,
  deps: SchedulerComponentDeps = {},
): SchedulerComponent {
  const log = componentLogger(ctx.log, 'scheduler');
  const { config } = ctx;
  const leader = deps.leader ?? ctx.leader;
  const identity = deps.options?.identity ?? leader.identity ?? config.identity ?? defaultIdentity();
  const options: SchedulerOptions = {
    schedulerName: config.schedulerName,
    identity,
    bindQps: config.bindQps,
    bindBurst: config.bindBurst,
    native: config.nativeScheduler ?? true,
    weights: { cpu: config.scoreCpuWeight, memory: config.scoreMemoryWeight },
    ...(config.schedulerConfig
      ? { profileConfig: loadProfileConfig(config.schedulerConfig, config.schedulerName) }
      : {}),
    ...(config.burstMaxPlacements > 0
      ? { burst: { maxPlacements: config.burstMaxPlacements, windowSeconds: config.burstWindowSeconds } }
      : {}),
    ...deps.options,
  };
  const api =
    deps.api ??
    new KubeSchedulerApi({
      kubeConfig: ctx.kubeConfig,
      controller: options.schedulerName,
      instance: `${options.schedulerName}-${identity}`,
      // Condition patches and Events get a budget of their own, so they never slow binds down.
      writeBucket: new TokenBucket({ qps: options.bindQps, burst: options.bindBurst }),
      log,
      registry: ctx.registry,
    });
  const scheduler = new Scheduler({
    cache: ctx.cache,
    loads: ctx.loads,
    api,
    volumeBinder: deps.volumeBinder ?? new KubeVolumeBinder(ctx.kubeConfig),
    leader,
    log,
    registry: ctx.registry,
    options,
  });

  const routes = Router();
  // The scheduler's counters, like /metrics: the nonResourceURL `get /scheduler/status`.
  routes.get('/scheduler/status', requireUserPermission(PERMISSIONS.schedulerStatus), (_req, res) => {
    res.json(scheduler.status());
  });

  return {
    name: 'scheduler',
    scheduler,
    userRoutes: routes,
    busy: () => scheduler.hasWork(),
    start() {
      scheduler.start();
      scheduler.rebuildHistory().then(
        (n) => log.info({ decisions: n }, 'decision history rebuilt from Events'),
        (err: unknown) => log.warn({ err }, 'could not rebuild the decision history from Events'),
      );
    },
    async stop() {
      await scheduler.stop();
    },
  };
}

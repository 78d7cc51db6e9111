/**
 * What a capability plugs into the gateway (src/app.ts builds them, in src/components.ts's order): routes
 * on either port, the user-facing HTTP server for upgrades, and a lifecycle. Each capability's
 * component.ts declares the context it needs as an interface extending ComponentContext; the gateway's
 * one GatewayContext (src/app.ts) satisfies every one of them.
 */
import type http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Router } from 'express';
import type { Registry } from 'prom-client';
import type { FastRoutes } from './fast-routes.js';
import type { Logger } from './log.js';

export interface GatewayComponent {
  name: string;
  userRoutes?: Router;
  kubeRoutes?: Router;
  /** POST paths on the kube-facing port answered ahead of express (fast-routes.ts): admission reviews. */
  kubeFastRoutes?: FastRoutes;
  /** Called with the user-facing HTTP server before it listens (WebSocket upgrades). */
  attach?(server: http.Server): void;
  /** Work is waiting for the event loop (pods to place): the user port yields its share to it (loop-share.ts). */
  busy?(): boolean;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

/** What every component may use: the process's root logger, API server access, the metrics registry. */
export interface ComponentContext {
  log: Logger;
  kubeConfig: KubeConfig;
  registry: Registry;
}

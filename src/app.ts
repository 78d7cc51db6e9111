/**
 * Composition root: builds the one shared cache and load tracker, wires every component to them,
 * and serves the user-facing HTTP app and the kube-facing HTTPS app.
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import express from 'express';
import { ClusterCache } from './cluster/cache.js';
import { registerInformerMetrics } from './cluster/informer-metrics.js';
import { loadKubeConfig } from './cluster/kubeconfig.js';
import type { GatewayConfig } from './config.js';
import { defaultIdentity, LeaderElector } from './leader/lease.js';
import { LoadTracker } from './load/tracker.js';
import type { LoadOptions } from './load/types.js';
import { ensureCrd, waitForCrd } from './operator/install-crd.js';
import { NODE_LOAD_RULE_KIND } from './rules/kind.js';
import type { NodeLoadRule } from './rules/types.js';
import { untilAborted } from './server/abort.js';
import { CachedTokenAuthenticator, kubeTokenReviewer } from './server/authn.js';
import { CachedAccessReviewer, kubeSubjectAccessReviewer } from './server/authz.js';
import { CertRotator } from './server/cert-rotation.js';
import { generateCa, issueServingCert, serviceDnsNames } from './server/certs.js';
import { loadClientCas } from './server/client-cert.js';
import type { ComponentContext, GatewayComponent } from './server/component.js';
import { mergeFastRoutes, withFastRoutes } from './server/fast-routes.js';
import { IDLE_RECLAIM_DEFAULTS, startIdleMemoryReclaim } from './server/idle-memory.js';
import { componentLogger, createLogger, type Logger } from './server/log.js';
import { createMetricsRegistry } from './server/metrics.js';
import { createTlsServer, type TlsServer } from './server/tls-server.js';
import { createUserApp, finishApp } from './server/user-app.js';
import { UserPortAuth } from './server/user-auth.js';
import { UserPortGate } from './server/user-port-gate.js';

export const VERSION = '0.1.0';

const USER_CLIENT_CA_FLAG = '--user-client-ca-file';
/** A component's stop taking longer than this is logged (the whole stop has 25 s: main.ts). */
const SLOW_STOP_MS = 2000;

/** What every component is built from (each component.ts takes the part it needs). */
export interface GatewayContext extends ComponentContext {
  config: GatewayConfig;
  /** The cache and the tracker themselves (started and stopped here); components take their views. */
  cache: ClusterCache<NodeLoadRule>;
  loads: LoadTracker;
  /** One election per process: the operator writes and the scheduler binds only while it leads. */
  leader: LeaderElector;
  /** The user-facing port's authentication (TokenReview) and authorization (SubjectAccessReview). */
  userAuth: UserPortAuth;
  /** Admits the user-facing port's work a turn at a time, so it cannot starve the kube-facing port. */
  userGate: UserPortGate;
}

export type { GatewayComponent };

export type ComponentFactory = (ctx: GatewayContext) => GatewayComponent | Promise<GatewayComponent>;

export interface Gateway extends GatewayContext {
  httpPort: number;
  httpsPort: number | undefined;
  components: GatewayComponent[];
  stop(): Promise<void>;
}

export function loadOptionsFrom(config: GatewayConfig, metricsServed: boolean): LoadOptions {
  return {
    metricsServed,
    metricsStalenessSeconds: config.metricsStalenessSeconds,
    stalePolicy: config.staleMetricsPolicy,
    estimate: {
      cpuFactor: config.estimateCpuFactor,
      memoryFactor: config.estimateMemoryFactor,
      defaultCpuMilli: 250,
      defaultMemoryBytes: 200 * 2 ** 20,
    },
  };
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function startGateway(
  config: GatewayConfig,
  factories: ComponentFactory[],
  opts: {
    log?: Logger;
    kubeConfig?: KubeConfig;
    /**
     * Aborts the start (SIGTERM while it waits, e.g. for the CRD): whatever was started is stopped and
     * startGateway rejects with the signal's reason.
     */
    signal?: AbortSignal;
  } = {},
): Promise<Gateway> {
  const { signal } = opts;
  const log = opts.log ?? createLogger(config.logLevel);
  const gwLog = componentLogger(log, 'gateway');
  const kubeConfig = opts.kubeConfig ?? loadKubeConfig(config.kubeconfig);
  const registry = createMetricsRegistry(VERSION);
  const cache = new ClusterCache({
    rules: NODE_LOAD_RULE_KIND,
    // The scheduler's volume and preemption plugins read claims, volumes, classes, CSINodes and PDBs.
    storage: true,
    kubeConfig,
    log: componentLogger(log, 'cache'),
    metricsPollSeconds: config.metricsPollSeconds,
  });
  registerInformerMetrics(registry, cache);
  const loads = new LoadTracker({ cache, options: () => loadOptionsFrom(config, cache.metricsServed) });
  const leader = new LeaderElector({
    kubeConfig,
    namespace: config.namespace,
    name: config.leaseName,
    identity: config.identity ?? defaultIdentity(),
    leaseDurationSeconds: config.leaseDurationSeconds,
    enabled: config.leaderElect,
    log: componentLogger(log, 'leader'),
    renewDeadlineSeconds: config.leaseRenewDeadlineSeconds,
    retryPeriodSeconds: config.leaseRetryPeriodSeconds,
    registry,
  });
  // Read here (a bad file stops the start); the user port's TLS server re-reads it when it changes.
  const userClientCa = config.userClientCaFile
    ? {
        file: config.userClientCaFile,
        flag: USER_CLIENT_CA_FLAG,
        initial: loadClientCas(config.userClientCaFile, USER_CLIENT_CA_FLAG),
      }
    : undefined;
  const userAuth = new UserPortAuth({
    anonymous: config.anonymousUserPort,
    authenticator: new CachedTokenAuthenticator(kubeTokenReviewer(kubeConfig)),
    reviewer: new CachedAccessReviewer(kubeSubjectAccessReviewer(kubeConfig)),
    clientCas: userClientCa?.initial,
    log: componentLogger(log, 'auth'),
  });
  if (config.anonymousUserPort) {
    gwLog.warn(
      { bindAddress: config.bindAddress },
      '--anonymous-user-port: requests without a token are served unrestricted (loopback only)',
    );
  }
  const userGate = new UserPortGate({
    concurrency: config.userPortConcurrency,
    maxQueued: config.userPortMaxQueued,
    maxWaitMs: config.userPortMaxWaitSeconds * 1000,
    loopShare: config.userPortLoopShare,
    registry,
  });
  const ctx: GatewayContext = { config, log, kubeConfig, registry, cache, loads, leader, userAuth, userGate };

  const components: GatewayComponent[] = [];
  for (const f of factories) components.push(await f(ctx));
  for (const c of components) {
    const busy = c.busy?.bind(c);
    if (busy) userGate.share.contendedWhile(busy);
  }

  // --cert-rotation=self-signed: the serving certificate comes from the Secret the leader keeps; until
  // this replica has read it, a throwaway one is served and /readyz says why it is not ready.
  let tls: TlsServer | undefined;
  const certs =
    config.certRotation === 'self-signed'
      ? new CertRotator({
          kubeConfig,
          namespace: config.namespace,
          secretName: config.certSecret,
          names: [...serviceDnsNames(config.certService, config.namespace), ...config.certExtraNames],
          webhookConfigurations: config.certWebhookConfigurations,
          apiServices: config.certApiServices,
          leadership: leader,
          log: componentLogger(log, 'certs'),
          onCertificate: (pair) => tls?.use(pair),
        })
      : undefined;

  const userApp = createUserApp({
    registry,
    auth: userAuth,
    corsAllowedOrigins: config.corsAllowedOrigins,
    bodyLimitBytes: config.userBodyLimitBytes,
    gate: userGate,
    readiness: () => {
      if (!cache.isReady())
        return { ready: false, reason: 'waiting for the initial sync with the API server' };
      if (certs && !certs.loaded) {
        return {
          ready: false,
          reason: `waiting for the serving certificate in the Secret ${config.certSecret}`,
        };
      }
      return { ready: true };
    },
  });
  finishApp(
    userApp,
    gwLog,
    components.flatMap((c) => (c.userRoutes ? [c.userRoutes] : [])),
  );
  // --user-tls-cert-file: 8080 serves HTTPS, its certificate reloaded when the files change, as 8443's.
  // With --user-client-ca-file it asks clients for a certificate, and one that CA signed authenticates;
  // the CA file is re-read with the certificate (a bad one keeps the last good bundle).
  const userTls =
    config.userTlsCertFile && config.userTlsKeyFile
      ? await createTlsServer({
          certFile: config.userTlsCertFile,
          keyFile: config.userTlsKeyFile,
          requestCert: config.userClientCaFile !== undefined,
          ...(userClientCa
            ? { clientCa: { ...userClientCa, use: (cas) => userAuth.useClientCas(cas) } }
            : {}),
          handler: userApp,
          log: gwLog,
        })
      : undefined;
  const userServer = userTls ? (userTls.server as unknown as http.Server) : http.createServer(userApp);
  for (const c of components) c.attach?.(userServer);

  if ((config.tlsCertFile && config.tlsKeyFile) || certs) {
    const kubeApp = express();
    kubeApp.disable('x-powered-by');
    // Admission answers and API objects are never revalidated: hashing each body for an ETag is waste.
    kubeApp.set('etag', false);
    kubeApp.get('/healthz', (_req, res) => {
      res.type('text/plain').send('ok');
    });
    // Admission reviews and aggregated API calls want the loop: the user port yields its share to them.
    kubeApp.use(userGate.kubeActivity());
    finishApp(
      kubeApp,
      gwLog,
      components.flatMap((c) => (c.kubeRoutes ? [c.kubeRoutes] : [])),
    );
    const placeholder = () => {
      const now = new Date();
      const leaf = issueServingCert(generateCa(now, 1, 'nodeload-placeholder'), ['localhost'], now, 1);
      return { cert: leaf.certPem, key: leaf.keyPem };
    };
    tls = await createTlsServer({
      ...(certs
        ? { certificate: placeholder() }
        : { certFile: config.tlsCertFile, keyFile: config.tlsKeyFile }),
      // Admission reviews go to their plain handlers first; everything else to express.
      handler: withFastRoutes(
        mergeFastRoutes(components.flatMap((c) => (c.kubeFastRoutes ? [c.kubeFastRoutes] : []))),
        kubeApp,
        () => userGate.share.kubeActivity(),
      ),
      log: gwLog,
    });
  }

  let stopReclaim = () => {};
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      gwLog.info('gateway stopping');
      for (const c of [...components].reverse()) {
        const began = Date.now();
        try {
          await c.stop?.();
        } catch (err) {
          gwLog.warn({ err, component: c.name }, 'component stop failed');
        }
        // A stop that nears main.ts's forced exit should say which part held it.
        const ms = Date.now() - began;
        if (ms > SLOW_STOP_MS) gwLog.warn({ component: c.name, ms }, 'component stop was slow');
      }
      // Only now release the lease: the scheduler has finished its binds, so a successor's cache
      // sees every placement we made before it schedules.
      certs?.stop();
      stopReclaim();
      await leader.stop().catch((err) => gwLog.warn({ err }, 'leader release failed'));
      loads.stop();
      cache.stop();
      await Promise.all([
        userTls?.close() ??
          new Promise<void>((r) => {
            userServer.close(() => r());
            userServer.closeAllConnections();
          }),
        tls?.close(),
      ]);
      gwLog.info('gateway stopped');
    })();
    return stopped;
  };

  // The Deployment and the chart apply the CRD and run with --install-crd=false: the gateway only waits for it.
  let httpPort: number;
  let httpsPort: number | undefined;
  try {
    if (config.installCrd) await ensureCrd(kubeConfig, gwLog, undefined, signal);
    else await waitForCrd(kubeConfig, gwLog, signal ? { signal } : {});
    signal?.throwIfAborted();
    cache.start();
    loads.start();
    httpPort = await untilAborted(listen(userServer, config.httpPort, config.bindAddress), signal);
    httpsPort = tls
      ? await untilAborted(
          listen(tls.server as unknown as http.Server, config.httpsPort, config.bindAddress),
          signal,
        )
      : undefined;
    for (const c of components) await untilAborted(Promise.resolve(c.start?.()), signal);
    signal?.throwIfAborted();
    certs?.start();
    await untilAborted(leader.start(), signal);
    signal?.throwIfAborted();
  } catch (err) {
    if (!signal?.aborted) throw err;
    gwLog.info('gateway start aborted');
    await stop();
    throw signal.reason;
  }
  stopReclaim = startIdleMemoryReclaim(
    { ...IDLE_RECLAIM_DEFAULTS, idleAfterMs: config.idleMemoryReclaimSeconds * 1000 },
    { log: gwLog, registry },
  );
  gwLog.info({ httpPort, httpsPort, components: components.map((c) => c.name) }, 'gateway started');
  return { ...ctx, httpPort, httpsPort, components, stop };
}

/**
 * A KubeConfig whose API calls share one connection pool. client-node 2.0.1 builds a new undici Agent
 * for every request (applySecurityAuthentication), so every call paid a TLS handshake on both sides —
 * about a quarter of the gateway's busy CPU in the scheduler benchmark. Headers (bearer tokens, which
 * rotate) are still applied per request; only the dispatcher, which carries the TLS material, is kept
 * per cluster and user.
 */
import { KubeConfig } from '@kubernetes/client-node';

type Context = Parameters<KubeConfig['applySecurityAuthentication']>[0];
type Dispatcher = ReturnType<Context['getDispatcher']>;

/**
 * Test seam, unset in a pod: a folder standing for the root of the pod's file system, under which the
 * in-cluster configuration reads the files the kubelet mounts in a pod
 * (<root>/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt,namespace}). The deploy test runs
 * the gateway as the Deployment does, in-cluster branch included, with no kubelet to mount them.
 */
export const SERVICEACCOUNT_ROOT_ENV = 'NODELOAD_SERVICEACCOUNT_ROOT';

export class PooledKubeConfig extends KubeConfig {
  private readonly dispatchers = new Map<string, Dispatcher>();

  /** KUBERNETES_SERVICE_HOST/PORT and the ServiceAccount's files (under $NODELOAD_SERVICEACCOUNT_ROOT). */
  override loadFromCluster(pathPrefix = process.env[SERVICEACCOUNT_ROOT_ENV] ?? ''): void {
    super.loadFromCluster(pathPrefix);
  }

  override async applySecurityAuthentication(context: Context): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (!fresh) return;
    const key = `${this.getCurrentCluster()?.server ?? ''}\u0000${this.getCurrentUser()?.name ?? ''}`;
    const pooled = this.dispatchers.get(key);
    if (!pooled) {
      this.dispatchers.set(key, fresh);
      return;
    }
    context.setDispatcher(pooled);
    // The fresh agent never opened a socket: closing it frees nothing but its bookkeeping.
    void (fresh as { close?: () => Promise<void> }).close?.().catch(() => undefined);
  }
}

/** The gateway's API access: the kubeconfig file given, or the in-cluster configuration (as in its Deployment). */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new PooledKubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromCluster();
  return kc;
}

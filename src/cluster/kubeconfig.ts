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

export class PooledKubeConfig extends KubeConfig {
  private readonly dispatchers = new Map<string, Dispatcher>();

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

/**
 * One keep-alive agent and one TLS context per kubeconfig user, for the requests the gateway makes on
 * node:https itself (watches, the scheduler's writes). A new connection given ca/cert/key builds a TLS
 * context from them (parsing the PEMs) every time: in the scheduler bench a tenth of the watch's CPU. The
 * context is kept while the material is the same; when it changes (a rotated client certificate) so does
 * the agent, whose idle sockets carry the old one.
 */
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

/** What https.request takes, with tls.connect's secureContext (passed through, missing from its type). */
export type RequestOptions = https.RequestOptions & Pick<tls.ConnectionOptions, 'secureContext'>;

export class PooledTransport {
  private agents: { 'https:': https.Agent; 'http:': http.Agent };
  private kept: { material: Array<unknown>; context: tls.SecureContext } | undefined;

  constructor(private readonly agentOptions: https.AgentOptions = {}) {
    this.agents = { 'https:': this.httpsAgent(), 'http:': new http.Agent(this.withDefaults()) };
  }

  /**
   * Points `options` (filled by KubeConfig.applyToHTTPSOptions) at the pooled agent, its ca/cert/key
   * replaced by the kept context. Not for a cluster behind a proxy: only client-node's agent reaches it.
   */
  apply(options: RequestOptions, protocol: 'http:' | 'https:'): void {
    if (protocol === 'https:') {
      const material = [options.ca, options.cert, options.key];
      const kept = this.kept;
      if (!kept || !material.every((m, i) => sameMaterial(m, kept.material[i]))) {
        if (kept) this.agents['https:'] = this.httpsAgent();
        this.kept = {
          material,
          context: tls.createSecureContext({ ca: options.ca, cert: options.cert, key: options.key }),
        };
      }
      options.secureContext = this.kept?.context;
      delete options.ca;
      delete options.cert;
      delete options.key;
    }
    options.agent = this.agents[protocol];
  }

  private withDefaults(): https.AgentOptions {
    return { keepAlive: true, scheduling: 'lifo', ...this.agentOptions };
  }

  private httpsAgent(): https.Agent {
    return new https.Agent(this.withDefaults());
  }
}

function sameMaterial(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  return a === b;
}

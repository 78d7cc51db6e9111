/**
 * Plain JSON requests on node:https, for the writes the scheduler makes per pod (the binding, its Event).
 * client-node 2.0.1 spends per call: the kubeconfig's certificate files read again and a new undici
 * Agent built (applySecurityAuthentication), the body through its ObjectSerializer, the answer through
 * undici's fetch and web streams and back through the serializer — in the 1,000-node scheduler bench
 * about a tenth of the gateway's busy CPU went to the two calls each pod costs. Here a body is one
 * JSON.stringify, the answer one string, the connection a pooled keep-alive socket.
 *
 * Auth and TLS come from `KubeConfig.applyToHTTPSOptions`, kept for `authTtlMs` (bearer token files
 * rotate; a 401 drops them at once). Failures keep client-node's contract for its callers: an HTTP error
 * is an `ApiException` with the status code and the body text (the Status object), a transport error is
 * rejected as it is. `undefined` when the cluster goes through a proxy: callers then use client-node.
 */
import http from 'node:http';
import https from 'node:https';
import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { PooledTransport, type RequestOptions } from './tls-reuse.js';

export interface KubeRequest {
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'GET';
  /** From the API root, e.g. /api/v1/namespaces/ns/pods/p/binding. */
  path: string;
  body?: unknown;
  /** Default application/json. */
  contentType?: string;
}

/** Sends one request; resolves with the answer's text on 2xx. */
export type KubeRequestFn = (req: KubeRequest) => Promise<string>;

export interface HttpsRequestOptions {
  /** How long the kubeconfig's auth and TLS material are reused. Default 10 s. */
  authTtlMs?: number;
  /** No answer within this long fails the request. Default 30 s. */
  timeoutMs?: number;
  /** Sockets per agent. Default 64. */
  maxSockets?: number;
  now?: () => number;
}

export function httpsRequestFn(
  kubeConfig: KubeConfig,
  opts: HttpsRequestOptions = {},
): KubeRequestFn | undefined {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster || cluster.proxyUrl) return undefined;
  const server = cluster.server.replace(/\/+$/, '');
  const protocol: 'http:' | 'https:' = server.startsWith('http:') ? 'http:' : 'https:';
  const send = protocol === 'http:' ? http.request : https.request;
  const transport = new PooledTransport({ maxSockets: opts.maxSockets ?? 64 });
  const ttl = opts.authTtlMs ?? 10_000;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const now = opts.now ?? Date.now;
  let auth: { options: RequestOptions; at: number } | undefined;

  const baseOptions = async (): Promise<RequestOptions> => {
    if (!auth || now() - auth.at > ttl) {
      const options: RequestOptions = {};
      await kubeConfig.applyToHTTPSOptions(options);
      transport.apply(options, protocol);
      auth = { options, at: now() };
    }
    return auth.options;
  };

  return async (req) => {
    const base = await baseOptions();
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: http.OutgoingHttpHeaders = {
      ...(base.headers as http.OutgoingHttpHeaders | undefined),
      accept: 'application/json',
    };
    if (payload !== undefined) {
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    return await new Promise<string>((resolve, reject) => {
      const request = send(
        `${server}${req.path}`,
        { ...base, method: req.method, headers, timeout: timeoutMs },
        (response) => {
          const parts: Buffer[] = [];
          response.on('data', (chunk: Buffer) => parts.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            const code = response.statusCode ?? 0;
            if (code >= 200 && code < 300) {
              resolve(text);
              return;
            }
            if (code === 401) auth = undefined;
            reject(
              new ApiException(
                code,
                `HTTP-Code: ${code}\nBody: ${text}`,
                text,
                flatHeaders(response.headers),
              ),
            );
          });
        },
      );
      request.on('timeout', () =>
        request.destroy(new Error(`no answer from the API server within ${timeoutMs} ms`)),
      );
      request.on('error', reject);
      request.end(payload);
    });
  };
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

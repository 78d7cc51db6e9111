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
 *
 * An answer that says it was not served yet — 429, or any 5xx carrying Retry-After (API Priority and
 * Fairness rejecting a request, a server shutting down) — is sent again after the seconds it names, at
 * most 10 times, as client-go's rest client does (rest/with_retry.go checkWait): kube-scheduler's binds
 * ride out a throttled API server that way, and so must ours, or every such bind fails, backs off and
 * counts as an error.
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
  /** Sends of an answer asking for a retry (429, 5xx with Retry-After) made again at most. Default 10. */
  maxRetries?: number;
  /** Called before each such retry, with the answer's status code and the request's method (a metric). */
  onRetry?: (status: number, method: KubeRequest['method']) => void;
  now?: () => number;
  /** Waits the Retry-After (a seam for tests). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The seconds to wait before sending again, when the answer asks for it: client-go's checkWait — a 429 or
 * a 5xx with a Retry-After of whole seconds (the only form client-go reads; an HTTP date is not retried).
 */
export function retryAfterMs(status: number, retryAfter: string | undefined): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  if (retryAfter === undefined || !/^\d+$/.test(retryAfter.trim())) return undefined;
  return Number(retryAfter.trim()) * 1000;
}

const sleepMs = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Answer {
  code: number;
  text: string;
  headers: http.IncomingHttpHeaders;
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

  const maxRetries = opts.maxRetries ?? 10;
  const sleep = opts.sleep ?? sleepMs;

  const sendOnce = async (req: KubeRequest, payload: string | undefined): Promise<Answer> => {
    const base = await baseOptions();
    const headers: http.OutgoingHttpHeaders = {
      ...(base.headers as http.OutgoingHttpHeaders | undefined),
      accept: 'application/json',
    };
    if (payload !== undefined) {
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    return await new Promise<Answer>((resolve, reject) => {
      const request = send(
        `${server}${req.path}`,
        { ...base, method: req.method, headers, timeout: timeoutMs },
        (response) => {
          const parts: Buffer[] = [];
          response.on('data', (chunk: Buffer) => parts.push(chunk));
          response.on('error', reject);
          response.on('end', () =>
            resolve({
              code: response.statusCode ?? 0,
              text: Buffer.concat(parts).toString('utf8'),
              headers: response.headers,
            }),
          );
        },
      );
      request.on('timeout', () =>
        request.destroy(new Error(`no answer from the API server within ${timeoutMs} ms`)),
      );
      request.on('error', reject);
      request.end(payload);
    });
  };

  return async (req) => {
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    for (let retries = 0; ; retries++) {
      const { code, text, headers } = await sendOnce(req, payload);
      if (code >= 200 && code < 300) return text;
      if (code === 401) auth = undefined;
      const wait = retries < maxRetries ? retryAfterMs(code, headers['retry-after']) : undefined;
      if (wait === undefined)
        throw new ApiException(code, `HTTP-Code: ${code}\nBody: ${text}`, text, flatHeaders(headers));
      opts.onRetry?.(code, req.method);
      await sleep(wait);
    }
  };
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

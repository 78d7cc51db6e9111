/**
 * Watches on node:https directly, for the informers (`WatchFn`). client-node's Watch goes through
 * undici's fetch, a web stream turned back into a Node stream, and readline: about 14 % of the gateway's
 * busy CPU in the 1,000-node scheduler benchmark went to that plumbing and decoding. Here the socket's
 * chunks go straight into WatchLineDecoder.
 *
 * Same contract as client-node 2.0.1's `Watch.watch`, which the informer was written against:
 * - `onEvent(type, object, event)` per line; ERROR (a Status object) and BOOKMARK events pass through.
 * - `onDone(err)` exactly once: `null` when the server ends the response, the error otherwise — a non-200
 *   answer is an Error with `statusCode` (what httpStatusOf reads: 410 relists, 403 is logged), no
 *   data for `inactivityMs` (30 s, also bounding connect + headers) a DOMException named TimeoutError,
 *   the caller's abort() an AbortError.
 * - The returned promise rejects only when no request could be made (no current cluster, credentials).
 * Unlike client-node, a line that is not JSON ends the watch with that error rather than being skipped.
 *
 * Auth and TLS come from `kubeConfig.applyToHTTPSOptions` on every watch (bearer tokens rotate); its
 * agent is replaced by one keep-alive agent per WatchFn — the gateway makes one for all its informers —
 * unless the cluster goes through a proxy, which only client-node's agent knows how to reach.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { PooledTransport, type RequestOptions } from './tls-reuse.js';
import { WatchLineDecoder } from './watch-decoder.js';
import type { WatchFn } from './watch-fn.js';

/** client-node's Watch.requestTimeoutMs. */
const INACTIVITY_MS = 30_000;
/** How much of a failed watch's answer (a Status object) is read for the error message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface HttpsWatchOptions {
  /** No byte for this long (including connect and response headers) ends the watch. Default 30 s. */
  inactivityMs?: number;
  /** Objects arrive without metadata.managedFields, which is then never parsed (watch-lean.ts). */
  withoutManagedFields?: boolean;
}

/** An Error carrying the HTTP status of a watch the server refused, as client-node's Watch throws it. */
export class WatchStatusError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** The server's Status object, when it sent one. */
    readonly status?: { reason?: string; message?: string; code?: number },
  ) {
    super(message);
    this.name = 'WatchStatusError';
  }
}

export function httpsWatchFn(kubeConfig: KubeConfig, opts: HttpsWatchOptions = {}): WatchFn {
  const inactivityMs = opts.inactivityMs ?? INACTIVITY_MS;
  // Each watch holds its socket for as long as it runs (HTTP/1.1), so no socket limit; keep-alive lets a
  // re-watch after the server's timeout reuse the connection and skip the TLS handshake.
  const transport = new PooledTransport();

  return async (path, query, onEvent, onDone) => {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('No currently active cluster');
    const url = new URL(cluster.server + path);
    url.searchParams.set('watch', 'true');
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const options: RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(options);
    const protocol = url.protocol === 'http:' ? 'http:' : 'https:';
    if (!cluster.proxyUrl) transport.apply(options, protocol);
    options.method = 'GET';
    options.headers = { ...options.headers, accept: 'application/json' };

    let finished = false;
    /** Set by an abort, a timeout or a bad line: no event is delivered after it, even from the same chunk. */
    let stopping = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (!request.destroyed) request.destroy();
      onDone(err);
    };
    const fail = (err: unknown) => {
      if (finished) return;
      stopping = true;
      // Destroying with the error makes the request emit it; finish() runs from that handler. A request
      // already destroyed (its response complete) emits nothing more.
      if (request.destroyed) process.nextTick(finish, err);
      else request.destroy(err instanceof Error ? err : new Error(String(err)));
    };
    const armTimer = () => {
      if (timer) {
        timer.refresh();
        return;
      }
      timer = setTimeout(
        () => fail(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
        inactivityMs,
      );
      timer.unref();
    };

    const send = protocol === 'http:' ? http.request : https.request;
    const request = send(url, options, (response) => {
      const statusCode = response.statusCode ?? 0;
      if (statusCode !== 200) {
        readErrorBody(response, (body) => finish(statusError(statusCode, response.statusMessage, body)));
        return;
      }
      armTimer();
      const decoder = new WatchLineDecoder(
        (event) => {
          if (!stopping) onEvent(event.type, event.object, event);
        },
        { withoutManagedFields: opts.withoutManagedFields ?? false },
      );
      response.on('data', (chunk: Buffer) => {
        if (finished || stopping) return;
        armTimer();
        try {
          decoder.write(chunk);
        } catch (err) {
          fail(err);
        }
      });
      response.on('end', () => {
        if (stopping) return;
        try {
          decoder.end();
        } catch (err) {
          finish(err);
          return;
        }
        finish(null);
      });
      response.on('error', finish);
      response.on('close', () => {
        if (!response.complete) finish(new Error('watch connection closed before the response ended'));
      });
    });
    request.on('error', finish);
    armTimer();
    request.end();
    return {
      abort: () => fail(new DOMException('This operation was aborted', 'AbortError')),
    };
  };
}

function readErrorBody(response: http.IncomingMessage, then: (body: string) => void): void {
  const parts: Buffer[] = [];
  let size = 0;
  response.on('data', (chunk: Buffer) => {
    if (size < MAX_ERROR_BODY_BYTES) parts.push(chunk);
    size += chunk.length;
  });
  response.on('end', () => then(Buffer.concat(parts).toString('utf8')));
  response.on('error', () => then(''));
}

/** The server's Status message when it sent one, else the status line's text (client-node's message). */
function statusError(statusCode: number, statusMessage: string | undefined, body: string): WatchStatusError {
  const text = statusMessage || http.STATUS_CODES[statusCode] || 'Internal Server Error';
  let status: { reason?: string; message?: string; code?: number } | undefined;
  try {
    const parsed = JSON.parse(body) as { kind?: string };
    if (parsed?.kind === 'Status') status = parsed as typeof status;
  } catch {
    // Not a Status object (a proxy's page, an empty body): the status line says enough.
  }
  const message = status?.message ? `${text}: ${status.message}` : text;
  return new WatchStatusError(statusCode, message, status);
}

/**
 * The kube-facing HTTPS server (port 8443): admission webhook and aggregated API; and the user-facing
 * port's when it serves TLS (--user-tls-cert-file). The serving certificate is re-read when its files
 * change, so rotation needs no restart; connections already open keep their context, new handshakes get
 * the new one.
 */
import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { RequestListener } from 'node:http';
import https from 'node:https';
import type { Logger } from './log.js';

export interface TlsServer {
  server: https.Server;
  reload(): Promise<void>;
  /** Serves this certificate from now on (PEM; --cert-rotation, where no files are watched). */
  use(pair: { cert: string; key: string }): void;
  close(): Promise<void>;
}

export async function createTlsServer(opts: {
  /** Files, re-read when they change; or `certificate`, replaced through use(). */
  certFile?: string;
  keyFile?: string;
  certificate?: { cert: string; key: string };
  /** Ask clients for a certificate (default true); the handler decides what one proves. */
  requestCert?: boolean;
  handler: RequestListener;
  log: Logger;
}): Promise<TlsServer> {
  const { certFile, keyFile, certificate } = opts;
  const files = certFile && keyFile ? { certFile, keyFile } : undefined;
  if (!files && !certificate) throw new Error('createTlsServer: certificate files or a certificate');
  const context = async () =>
    files
      ? { cert: await readFile(files.certFile), key: await readFile(files.keyFile) }
      : (certificate as { cert: string; key: string });
  const server = https.createServer(
    // Ask for a client certificate but let the handler decide: the API server's webhook calls carry
    // none, the aggregator's proxied calls carry the front-proxy certificate, which the aggregated API
    // verifies against the front-proxy CA it reads from the cluster (src/aggregated/security.ts).
    // The user port asks only with --user-client-ca-file, as kube-apiserver does with its client CA.
    {
      ...(await context()),
      requestCert: opts.requestCert ?? true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    },
    opts.handler,
  );
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  let pending: NodeJS.Timeout | undefined;
  const reload = async () => {
    if (!files) return;
    try {
      server.setSecureContext(await context());
      opts.log.info({ certFile: files.certFile }, 'serving certificate loaded');
    } catch (err) {
      // A half-written file during rotation: keep serving the old certificate and retry.
      opts.log.warn({ err }, 'serving certificate reload failed; keeping the previous one');
      schedule(1000);
    }
  };
  const schedule = (ms = 200) => {
    clearTimeout(pending);
    pending = setTimeout(() => void reload(), ms);
  };
  const watchers: FSWatcher[] = [];
  // Watch the directories, not the files: rotations usually replace files (rename or symlink swap).
  const watched = files ? [files.certFile, files.keyFile] : [];
  for (const dir of new Set(watched.map((f) => f.replace(/\/[^/]*$/, '') || '/'))) {
    try {
      watchers.push(watch(dir, () => schedule()));
    } catch (err) {
      opts.log.warn({ err, dir }, 'cannot watch certificate directory; rotation needs a restart');
    }
  }
  // Belt and braces for filesystems without inotify events (some volume mounts).
  const poll = setInterval(() => schedule(0), 60_000);
  poll.unref();

  return {
    server,
    reload,
    use(pair) {
      server.setSecureContext(pair);
    },
    close: () =>
      new Promise((resolve) => {
        clearInterval(poll);
        clearTimeout(pending);
        for (const w of watchers) w.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

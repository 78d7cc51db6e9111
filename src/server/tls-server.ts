/**
 * The kube-facing HTTPS server (port 8443): admission webhook and aggregated API; and the user-facing
 * port's when it serves TLS (--user-tls-cert-file). The serving certificate is re-read when its files
 * change, so rotation needs no restart; connections already open keep their context, new handshakes get
 * the new one. A client CA bundle (--user-client-ca-file) is re-read by the same watch: a changed one is
 * handed on, one that cannot be read or holds no certificate is skipped and the last good one kept.
 */
import type { X509Certificate } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { RequestListener } from 'node:http';
import https from 'node:https';
import { loadClientCas } from './client-cert.js';
import type { Logger } from './log.js';

export interface TlsServer {
  server: https.Server;
  /** Re-reads the files now, as a change to them does: the certificate and any client CA bundle. */
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
  /**
   * A CA bundle file watched with the certificate: `initial` is the bundle read at start (a failure then
   * is the caller's to report); `use` gets each bundle that differs from the last, by fingerprints.
   */
  clientCa?: {
    file: string;
    /** The flag naming the file, in warnings. */
    flag: string;
    initial: readonly X509Certificate[];
    use(cas: X509Certificate[]): void;
  };
  handler: RequestListener;
  log: Logger;
}): Promise<TlsServer> {
  const { certFile, keyFile, certificate, clientCa } = opts;
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

  const fingerprints = (cas: readonly X509Certificate[]) => cas.map((c) => c.fingerprint256).join();
  let caFingerprints = clientCa && fingerprints(clientCa.initial);
  const reloadClientCa = () => {
    if (!clientCa) return;
    try {
      const cas = loadClientCas(clientCa.file, clientCa.flag);
      if (fingerprints(cas) === caFingerprints) return;
      caFingerprints = fingerprints(cas);
      clientCa.use(cas);
      opts.log.info({ file: clientCa.file, certificates: cas.length }, 'client CA bundle loaded');
    } catch (err) {
      // No retry of its own: the write that repairs the file is a change the watch (or the poll) sees.
      opts.log.warn({ err, file: clientCa.file }, 'client CA bundle reload failed; keeping the previous one');
    }
  };

  let pending: NodeJS.Timeout | undefined;
  const reload = async () => {
    reloadClientCa();
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
  const watched = [...(files ? [files.certFile, files.keyFile] : []), ...(clientCa ? [clientCa.file] : [])];
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

/**
 * Sending a list answer made of kept pieces (wire.ts). At 5,000 nodes a JSON list is ~6.5 MB, and every
 * byte of it is encrypted by the gateway, decrypted and encrypted again by the aggregator, and decrypted
 * by the client, on a machine where kube-apiserver already uses a core for the nodes' heartbeats. So:
 *
 * - Compressed when the client accepts gzip and the answer is over 128 KiB, as kube-apiserver does its
 *   own lists. kubectl does (client-go leaves compression on, so Go's transport sends
 *   `Accept-Encoding: gzip`), and the aggregator passes the header to us and our encoded body back
 *   untouched. The NodeLoads are near-identical JSON: level 1 shrinks a list ~25–40× (4.3 MB → 112 KB
 *   at 5,000 bench nodes). Compressed segments are kept while their pieces stay the same (objects are
 *   immutable: the same pieces are the same bytes), so repeated lists of a quiet cluster are not
 *   compressed again; zlib runs on the thread pool, not the event loop.
 * - Otherwise written in chunks of about 64 KiB, each when the socket has taken the one before: the
 *   first bytes leave at once, no single write encrypts the whole body while the loop waits, and a slow
 *   reader does not make the gateway hold a copy of the whole answer per request.
 */
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const gzip = promisify(zlib.gzip);

/** kube-apiserver's threshold: below it, compressing costs more than the bytes it saves. */
export const GZIP_MIN_BYTES = 128 * 1024;
/** BestSpeed, as kube-apiserver: the ratio barely moves with the level on such repetitive JSON. */
const GZIP_LEVEL = 1;
const CHUNK_BYTES = 64 * 1024;

/**
 * Whether an Accept-Encoding header admits gzip: named with q > 0, or `*` with q > 0 when gzip is not
 * named (RFC 9110 §12.5.3). No header means identity only, as Go's and Node's servers read it.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let star = false;
  for (const range of header.split(',')) {
    const [coding = '', ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    const accepted = Number.isFinite(weight) && weight > 0;
    if (coding === 'gzip' || coding === 'x-gzip') return accepted;
    if (coding === '*') star = accepted;
  }
  return star;
}

/**
 * The pieces as chunks of about `size` bytes, made as they are asked for: small pieces are copied
 * together until a chunk is full, a piece of `size` or more goes out in slices of it, uncopied.
 */
export function* chunked(pieces: readonly Buffer[], size = CHUNK_BYTES): Generator<Buffer> {
  let group: Buffer[] = [];
  let bytes = 0;
  for (const piece of pieces) {
    if (piece.length >= size) {
      if (bytes > 0) yield Buffer.concat(group, bytes);
      group = [];
      bytes = 0;
      for (let at = 0; at < piece.length; at += size) yield piece.subarray(at, at + size);
      continue;
    }
    group.push(piece);
    bytes += piece.length;
    if (bytes >= size) {
      yield Buffer.concat(group, bytes);
      group = [];
      bytes = 0;
    }
  }
  if (bytes > 0) yield Buffer.concat(group, bytes);
}

function byteLength(pieces: readonly Buffer[]): number {
  let n = 0;
  for (const p of pieces) n += p.length;
  return n;
}

/**
 * Whether two answers are the same bytes: the same kept buffers in the same order. The list's head
 * (with its resourceVersion) is made per request, so small pieces are compared by content.
 */
export function samePieces(a: readonly Buffer[], b: readonly Buffer[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Buffer;
    const y = b[i] as Buffer;
    if (x !== y && (x.length > 1024 || !x.equals(y))) return false;
  }
  return true;
}

/** Pieces per gzip member: ~256 list items, 100–350 KB of JSON — a negligible loss of ratio. */
const SEGMENT_PIECES = 512;

interface Segment {
  pieces: readonly Buffer[];
  gzipped: Promise<Buffer>;
}

/**
 * gzip of an answer as a run of gzip members, one per segment of SEGMENT_PIECES pieces (RFC 1952 §2.2:
 * a gzip file is a series of members; Go's gzip.Reader, and so client-go, read them all). Each member is
 * kept for the answer's key (request URL and rendering) while its pieces stay the same, so a list where
 * a few NodeLoads changed, or a Table where a few AGE cells moved (nodes created over minutes roll over
 * every second), compresses only the segments around them. The `slots` most recently used keys are
 * kept (few: each holds on to its answer's pieces, which may be old objects' bytes at 5,000 nodes); requests that arrive while a segment is being compressed wait for that one compression.
 */
export function gzipCache(slots = 4): (key: string, pieces: readonly Buffer[]) => Promise<Buffer[]> {
  const entries = new Map<string, Segment[]>();
  return (key, pieces) => {
    const previous = entries.get(key) ?? [];
    entries.delete(key);
    const segments: Segment[] = [];
    for (let at = 0; at < pieces.length; at += SEGMENT_PIECES) {
      const part = pieces.slice(at, at + SEGMENT_PIECES);
      const old = previous[segments.length];
      segments.push(
        old && samePieces(old.pieces, part)
          ? old
          : { pieces: part, gzipped: gzip(Buffer.concat(part, byteLength(part)), { level: GZIP_LEVEL }) },
      );
    }
    entries.set(key, segments);
    if (entries.size > slots) entries.delete(entries.keys().next().value as string);
    const all = Promise.all(segments.map((s) => s.gzipped));
    // A failed compression is not kept: the next request tries again.
    all.catch(() => {
      if (entries.get(key) === segments) entries.delete(key);
    });
    return all;
  };
}

/** Resolves when the response can take more (or is gone: the caller checks). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function writeChunks(res: ServerResponse, chunks: Iterable<Buffer>): Promise<void> {
  for (const chunk of chunks) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await drained(res);
  }
  res.end();
}

export interface JsonBody {
  /** The answer's bytes in order (wire.ts). */
  pieces: readonly Buffer[];
  /** The client's Accept-Encoding. */
  acceptEncoding: string | undefined;
  /** What identifies the answer's content apart from its pieces (URL and rendering), for the gzip cache. */
  cacheKey: string;
  compress: ReturnType<typeof gzipCache>;
}

/** A 200 application/json answer from its pieces, gzipped when that pays (see above), else streamed. */
export async function sendJsonBody(res: ServerResponse, body: JsonBody): Promise<void> {
  const length = byteLength(body.pieces);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Vary', 'Accept-Encoding');
  if (length >= GZIP_MIN_BYTES && acceptsGzip(body.acceptEncoding)) {
    const members = await body.compress(body.cacheKey, body.pieces);
    res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', byteLength(members));
    return writeChunks(res, chunked(members));
  }
  res.setHeader('Content-Length', length);
  return writeChunks(res, chunked(body.pieces));
}

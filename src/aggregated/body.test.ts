import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptsGzip, chunked, GZIP_MIN_BYTES, gzipCache, samePieces, sendJsonBody } from './body.js';

describe('acceptsGzip', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['gzip', true], // Go's transport (client-go, so kubectl, and the aggregator passing it on)
    ['identity', false],
    ['gzip, deflate, br', true],
    ['br;q=1.0, GZIP;q=0.5', true],
    ['gzip;q=0', false],
    ['gzip; q=0.000', false],
    ['x-gzip', true],
    ['*', true],
    ['*;q=0', false],
    ['gzip;q=0, *', false],
    ['identity, *;q=0.1', true],
  ])('%j → %s', (header, want) => {
    expect(acceptsGzip(header)).toBe(want);
  });
});

const bytes = (...sizes: number[]) => sizes.map((n, i) => Buffer.alloc(n, 97 + i));

describe('chunked', () => {
  it.each([
    ['nothing', [], 10, []],
    ['small pieces gathered until a chunk is full', [3, 4, 5, 1], 10, [12, 1]],
    ['exactly full', [5, 5, 5, 5], 10, [10, 10]],
    ['a big piece sliced, the gathered ones before it flushed', [3, 25, 2], 10, [3, 10, 10, 5, 2]],
    ['one big piece', [20], 10, [10, 10]],
  ])('%s', (_what, sizes, size, want) => {
    const pieces = bytes(...sizes);
    const out = [...chunked(pieces, size)];
    expect(out.map((c) => c.length)).toEqual(want);
    expect(Buffer.concat(out)).toEqual(Buffer.concat(pieces));
  });
});

describe('samePieces', () => {
  const [big, small] = bytes(2000, 10) as [Buffer, Buffer];
  it.each([
    ['the same buffers', [small, big], [small, big], true],
    ['a small piece made again with the same bytes', [small, big], [Buffer.from(small), big], true],
    ['a big piece made again (not compared by content)', [small, big], [small, Buffer.from(big)], false],
    ['another order', [small, big], [big, small], false],
    ['another length', [small, big], [small], false],
    ['a small piece with other bytes', [small], [Buffer.from('other text')], false],
  ])('%s → %s', (_what, a, b, want) => {
    expect(samePieces(a, b)).toBe(want);
  });
});

describe('gzipCache', () => {
  // 1,100 pieces: three members of 512, 512 and 76 pieces.
  const pieces = () => Array.from({ length: 1100 }, (_, i) => Buffer.from(`{"n":${i}},`));

  it('answers gzip members that decompress to the concatenation', async () => {
    const p = pieces();
    const members = await gzipCache()('a', p);
    expect(members).toHaveLength(3);
    expect(gunzipSync(Buffer.concat(members))).toEqual(Buffer.concat(p));
  });

  it('compresses again only the segments whose pieces changed, per key', async () => {
    const compress = gzipCache();
    const p = pieces();
    const first = await compress('a', p);
    const again = await compress('a', [...p]);
    expect(again.map((m, i) => m === first[i])).toEqual([true, true, true]);
    const changed = [...p];
    changed[600] = Buffer.from('{"n":"other"},');
    const second = await compress('a', changed);
    expect(second.map((m, i) => m === first[i])).toEqual([true, false, true]);
    expect(gunzipSync(Buffer.concat(second))).toEqual(Buffer.concat(changed));
    // Another key has its own members.
    expect((await compress('b', p))[0]).not.toBe(first[0]);
  });

  it('keeps only the most recently used keys', async () => {
    const compress = gzipCache(2);
    const p = pieces().slice(0, 3);
    const [a] = await compress('a', p);
    await compress('b', p);
    expect((await compress('a', p))[0]).toBe(a); // a is now the most recent
    await compress('c', p); // evicts b
    const [b] = await compress('b', p); // evicts a
    expect((await compress('b', p))[0]).toBe(b);
    expect((await compress('a', p))[0]).not.toBe(a);
  });
});

describe('sendJsonBody', () => {
  let server: http.Server;
  let base = '';
  let pieces: Buffer[] = [];

  beforeAll(async () => {
    const compress = gzipCache();
    server = http.createServer((req, res) => {
      void sendJsonBody(res, {
        pieces,
        acceptEncoding: req.headers['accept-encoding'],
        cacheKey: req.url ?? '',
        compress,
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /** The raw answer: node:http does not decode it. */
  const get = (acceptEncoding: string) =>
    new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http
        .get(base, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });

  // A list-like answer: many small pieces, over the gzip threshold.
  const large = () => [
    Buffer.from('{"items":['),
    ...Array.from({ length: 400 }, (_, i) =>
      Buffer.from(`${i ? ',' : ''}{"n":${i},"pad":"${'x'.repeat(400)}"}`),
    ),
    Buffer.from(']}'),
  ];

  it.each([
    ['large, gzip accepted', large, 'gzip', 'gzip'],
    ['large, identity asked for', large, 'identity', undefined],
    ['small, gzip accepted (not worth it)', () => [Buffer.from('{"items":[]}')], 'gzip', undefined],
  ])('%s', async (_what, make, acceptEncoding, wantEncoding) => {
    pieces = make();
    const whole = Buffer.concat(pieces);
    expect(whole.length >= GZIP_MIN_BYTES).toBe(make === large);
    const { headers, body } = await get(acceptEncoding);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['content-encoding']).toBe(wantEncoding);
    expect(headers['vary']).toBe('Accept-Encoding');
    expect(Number(headers['content-length'])).toBe(body.length);
    expect(wantEncoding === 'gzip' ? gunzipSync(body) : body).toEqual(whole);
  });
});

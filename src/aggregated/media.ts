/**
 * Content negotiation as the apiserver does it: JSON only, with the `as`/`g`/`v` parameters selecting
 * a transformed response (Table, PartialObjectMetadata, aggregated discovery). A client that accepts
 * none of what we serve gets 406 — which is also what tells the aggregator to fall back to legacy
 * discovery.
 */

export interface MediaType {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

/** Accept header → media ranges, highest q first (stable for equal q); a missing header accepts anything. */
export function parseAccept(header: string | undefined): MediaType[] {
  if (!header || header.trim() === '') return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  const out: MediaType[] = [];
  for (const range of header.split(',')) {
    const [mime, ...rawParams] = range.split(';').map((s) => s.trim());
    if (!mime) continue;
    const [type, subtype] = mime.toLowerCase().split('/');
    if (!type || !subtype) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq <= 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (key === 'q') q = Number.isFinite(Number(value)) ? Number(value) : 1;
      else params[key] = value;
    }
    if (q > 0) out.push({ type, subtype, params, q });
  }
  return out
    .map((m, i) => ({ m, i }))
    .sort((a, b) => b.m.q - a.m.q || a.i - b.i)
    .map(({ m }) => m);
}

function acceptsJson(m: MediaType): boolean {
  return (m.type === 'application' || m.type === '*') && (m.subtype === 'json' || m.subtype === '*');
}

export type MetaVersion = 'v1' | 'v1beta1';

export type ObjectRendering =
  | { as: 'Object' }
  | { as: 'Table'; version: MetaVersion }
  | { as: 'PartialObjectMetadata'; version: MetaVersion };

function metaVersion(m: MediaType): MetaVersion | undefined {
  if (m.params['g'] !== 'meta.k8s.io') return undefined;
  return m.params['v'] === 'v1' || m.params['v'] === 'v1beta1' ? m.params['v'] : undefined;
}

/** How to render resource responses; undefined when nothing acceptable is served (406). */
export function negotiateObject(accept: string | undefined): ObjectRendering | undefined {
  for (const m of parseAccept(accept)) {
    if (!acceptsJson(m)) continue;
    const as = m.params['as'];
    if (as === undefined) return { as: 'Object' };
    const version = metaVersion(m);
    if (!version) continue;
    if (as === 'Table') return { as: 'Table', version };
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList')
      return { as: 'PartialObjectMetadata', version };
  }
  return undefined;
}

export type DiscoveryRendering = 'legacy' | 'v2' | 'v2beta1';

export const AGGREGATED_DISCOVERY_CONTENT_TYPE = (version: 'v2' | 'v2beta1') =>
  `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;

/** `/apis` with aggregated discovery (apidiscovery.k8s.io v2, or v2beta1 for 1.26–1.29 aggregators) or legacy. */
export function negotiateDiscovery(accept: string | undefined): DiscoveryRendering | undefined {
  for (const m of parseAccept(accept)) {
    if (!acceptsJson(m)) continue;
    const as = m.params['as'];
    if (as === undefined) return 'legacy';
    if (as !== 'APIGroupDiscoveryList' || m.params['g'] !== 'apidiscovery.k8s.io') continue;
    if (m.params['v'] === 'v2' || m.params['v'] === 'v2beta1') return m.params['v'];
  }
  return undefined;
}

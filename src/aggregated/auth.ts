/**
 * Delegated authentication and authorization, as k8s.io/apiserver does it for aggregated servers:
 * a request is trusted only when its TLS client certificate chains to the requestheader CA that the
 * apiserver publishes in kube-system/extension-apiserver-authentication and its CN is an allowed
 * front-proxy name; only then are the X-Remote-* headers believed. Each request is then authorized by
 * a SubjectAccessReview for those attributes. Everything here is pure; security.ts does the I/O.
 */
import { X509Certificate } from 'node:crypto';
import type { RequestAttributes, UserInfo } from '../server/authz.js';
import {
  type ChainVerdict,
  NOT_SIGNED,
  splitPemBundle,
  verifyClientCertificate,
} from '../server/client-cert.js';
import { ApiError, failureStatus, GROUP } from './api.js';

export const AUTHENTICATION_CONFIGMAP = {
  namespace: 'kube-system',
  name: 'extension-apiserver-authentication',
};

export interface RequestHeaderConfig {
  /** The CA bundle as published, PEM (identifies the config version). */
  caPem: string;
  cas: X509Certificate[];
  /** Allowed client-certificate CNs; empty means any certificate signed by the CA. */
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
  uidHeaders: string[];
}

export class AuthConfigError extends Error {}

function jsonList(data: Record<string, string>, key: string, fallback: string[]): string[] {
  const raw = data[key];
  if (raw === undefined || raw.trim() === '') return fallback;
  try {
    const v = JSON.parse(raw) as unknown;
    if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v;
  } catch {
    // reported below
  }
  throw new AuthConfigError(`${AUTHENTICATION_CONFIGMAP.name}: ${key} is not a JSON list of strings: ${raw}`);
}

/** The requestheader settings from the ConfigMap's data; throws when front-proxy authentication is not configured. */
export function parseAuthenticationConfigMap(data: Record<string, string> | undefined): RequestHeaderConfig {
  const d = data ?? {};
  const caPem = d['requestheader-client-ca-file'] ?? '';
  const blocks = splitPemBundle(caPem);
  if (blocks.length === 0) {
    throw new AuthConfigError(
      `${AUTHENTICATION_CONFIGMAP.namespace}/${AUTHENTICATION_CONFIGMAP.name} has no requestheader-client-ca-file: ` +
        'the apiserver runs without --requestheader-client-ca-file, so no request can be authenticated',
    );
  }
  let cas: X509Certificate[];
  try {
    cas = blocks.map((b) => new X509Certificate(b));
  } catch (err) {
    throw new AuthConfigError(`requestheader-client-ca-file: ${(err as Error).message}`);
  }
  const lower = (l: string[]) => l.map((s) => s.toLowerCase());
  return {
    caPem,
    cas,
    allowedNames: jsonList(d, 'requestheader-allowed-names', []),
    usernameHeaders: lower(jsonList(d, 'requestheader-username-headers', ['X-Remote-User'])),
    groupHeaders: lower(jsonList(d, 'requestheader-group-headers', ['X-Remote-Group'])),
    extraHeaderPrefixes: lower(jsonList(d, 'requestheader-extra-headers-prefix', ['X-Remote-Extra-'])),
    uidHeaders: lower(jsonList(d, 'requestheader-uid-headers', [])),
  };
}

export type { ChainVerdict };

/**
 * Verifies a presented chain up to one of the requestheader CAs, for client authentication, at `now`
 * (src/server/client-cert.ts); then checks the leaf's CN against allowedNames.
 */
export function verifyClientChain(
  chain: readonly X509Certificate[],
  cfg: Pick<RequestHeaderConfig, 'cas' | 'allowedNames'>,
  now: Date,
): ChainVerdict {
  const verdict = verifyClientCertificate(chain, cfg.cas, now);
  if (!verdict.ok) {
    return verdict.reason === NOT_SIGNED
      ? { ok: false, reason: 'client certificate is not signed by the requestheader CA' }
      : verdict;
  }
  if (cfg.allowedNames.length > 0 && !cfg.allowedNames.includes(verdict.commonName)) {
    return {
      ok: false,
      reason: `client certificate CN "${verdict.commonName}" is not an allowed front-proxy name`,
    };
  }
  return verdict;
}

export const AUTHENTICATED_GROUP = 'system:authenticated';
export const MASTERS_GROUP = 'system:masters';

/** Header name (lower case) → its values, one per header line (Node's `req.headersDistinct`). */
export type HeaderLines = Record<string, string[] | undefined>;

function firstValue(headers: HeaderLines, names: string[]): string | undefined {
  for (const name of names) {
    const v = headers[name]?.find((s) => s !== '');
    if (v !== undefined) return v;
  }
  return undefined;
}

function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/**
 * The user the front proxy vouches for; undefined without a user name. Like k8s.io/apiserver, every
 * authenticated user is also in system:authenticated (RBAC's discovery bindings rely on it).
 */
export function userFromHeaders(headers: HeaderLines, cfg: RequestHeaderConfig): UserInfo | undefined {
  const name = firstValue(headers, cfg.usernameHeaders);
  if (!name) return undefined;
  const groups: string[] = [];
  for (const h of cfg.groupHeaders) groups.push(...(headers[h] ?? []));
  if (!groups.includes(AUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  const extra: Record<string, string[]> = {};
  for (const [header, values] of Object.entries(headers)) {
    const prefix = cfg.extraHeaderPrefixes.find((p) => header.startsWith(p));
    if (!prefix || !values) continue;
    const key = unescapeExtraKey(header.slice(prefix.length).toLowerCase());
    extra[key] = [...(extra[key] ?? []), ...values];
  }
  const uid = firstValue(headers, cfg.uidHeaders);
  return { name, ...(uid ? { uid } : {}), groups, extra };
}

function truthy(v: string | undefined): boolean {
  return v === 'true' || v === '1';
}

/**
 * What the request does, as k8s.io/apiserver's RequestInfoResolver sees it: /apis/<g>/<v>/[watch/]
 * [namespaces/<ns>/]<resource>[/<name>[/<subresource>]] is a resource request (GET → get, list or
 * watch); anything shorter (/apis, /apis/<g>, /apis/<g>/<v>) and /openapi are non-resource URLs.
 */
export function requestAttributes(
  method: string,
  path: string,
  query: Record<string, string | undefined>,
): RequestAttributes {
  const nonResource = { kind: 'nonResource' as const, verb: method.toLowerCase(), path };
  const parts = path.split('/').filter((p) => p !== '');
  if (parts[0] !== 'apis' || parts.length < 4) return nonResource;
  const group = parts[1] as string;
  const version = parts[2] as string;
  let rest = parts.slice(3);
  let watch = false;
  if (rest[0] === 'watch') {
    watch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource] = rest;
  if (!resource) return nonResource;
  const m = method.toUpperCase();
  let verb: string;
  if (m === 'GET' || m === 'HEAD') verb = watch || truthy(query['watch']) ? 'watch' : name ? 'get' : 'list';
  else
    verb =
      { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: name ? 'delete' : 'deletecollection' }[m] ??
      m.toLowerCase();
  return {
    kind: 'resource',
    verb,
    group,
    version,
    resource,
    ...(subresource ? { subresource } : {}),
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
  };
}

export const ALWAYS_ALLOWED_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/livez']);

/** Requests k8s.io/apiserver authorizes without asking (health paths, system:masters). */
export function alwaysAllowed(user: UserInfo | undefined, attrs: RequestAttributes): boolean {
  if (attrs.kind === 'nonResource' && ALWAYS_ALLOWED_PATHS.has(attrs.path)) return true;
  return user?.groups.includes(MASTERS_GROUP) ?? false;
}

/** The 403 as the apiserver words it, so kubectl prints the familiar "cannot list resource" line. */
export function forbidden(user: UserInfo, attrs: RequestAttributes, reason: string): ApiError {
  const suffix = reason ? `: ${reason}` : '';
  if (attrs.kind === 'nonResource') {
    return new ApiError(
      failureStatus(
        403,
        'Forbidden',
        `forbidden: User "${user.name}" cannot ${attrs.verb} path "${attrs.path}"${suffix}`,
      ),
    );
  }
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const qualified = `${attrs.resource}.${attrs.group}`;
  const scope = attrs.namespace ? `in the namespace "${attrs.namespace}"` : 'at the cluster scope';
  const named = attrs.name ? ` "${attrs.name}"` : '';
  return new ApiError(
    failureStatus(
      403,
      'Forbidden',
      `${qualified}${named} is forbidden: User "${user.name}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.group}" ${scope}${suffix}`,
      { ...(attrs.name ? { name: attrs.name } : {}), group: attrs.group || GROUP, kind: attrs.resource },
    ),
  );
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserInfo } from '../server/authz.js';
import { TestPki } from '../server/testing-pki.js';
import {
  AuthConfigError,
  alwaysAllowed,
  forbidden,
  parseAuthenticationConfigMap,
  type RequestHeaderConfig,
  requestAttributes,
  userFromHeaders,
  verifyClientChain,
} from './auth.js';

let pki: TestPki;
const pem: Record<string, string> = {};
const cert = (name: string) => pki.cert(name);

beforeAll(() => {
  pki = new TestPki();
  pem['front-proxy-ca'] = pki.ca('front-proxy-ca');
  pem['cluster-ca'] = pki.ca('cluster-ca');
  pki.ca('intermediate', 'front-proxy-ca');
  pki.leaf('proxy', 'front-proxy-client', 'front-proxy-ca');
  pki.leaf('other-cn', 'someone-else', 'front-proxy-ca');
  pki.leaf('via-intermediate', 'front-proxy-client', 'intermediate');
  pki.leaf('server-only', 'front-proxy-client', 'front-proxy-ca', 'extendedKeyUsage=serverAuth\n');
  pki.leaf('wrong-ca', 'front-proxy-client', 'cluster-ca');
});

afterAll(() => pki?.dispose());

function configMap(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'client-ca-file': pem['cluster-ca'] as string,
    'requestheader-client-ca-file': pem['front-proxy-ca'] as string,
    'requestheader-allowed-names': '["front-proxy-client"]',
    'requestheader-username-headers': '["X-Remote-User"]',
    'requestheader-group-headers': '["X-Remote-Group"]',
    'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
    'requestheader-uid-headers': '["X-Remote-Uid"]',
    ...extra,
  };
}

describe('parseAuthenticationConfigMap', () => {
  it('reads the requestheader settings the apiserver publishes (header names lower-cased)', () => {
    const cfg = parseAuthenticationConfigMap(configMap());
    expect(cfg.cas).toHaveLength(1);
    expect(cfg.allowedNames).toEqual(['front-proxy-client']);
    expect(cfg.usernameHeaders).toEqual(['x-remote-user']);
    expect(cfg.groupHeaders).toEqual(['x-remote-group']);
    expect(cfg.extraHeaderPrefixes).toEqual(['x-remote-extra-']);
    expect(cfg.uidHeaders).toEqual(['x-remote-uid']);
  });

  it('accepts a bundle of several CAs', () => {
    const cfg = parseAuthenticationConfigMap(
      configMap({ 'requestheader-client-ca-file': `${pem['front-proxy-ca']}\n${pem['cluster-ca']}` }),
    );
    expect(cfg.cas).toHaveLength(2);
  });

  it.each([
    ['no ConfigMap', () => undefined, 'has no requestheader-client-ca-file'],
    [
      'no requestheader CA',
      () => ({ 'client-ca-file': pem['cluster-ca'] as string }),
      'has no requestheader-client-ca-file',
    ],
    [
      'allowed names not a JSON list',
      () => configMap({ 'requestheader-allowed-names': 'a,b' }),
      'not a JSON list',
    ],
  ])('fails with %s', (_what, data, message) => {
    expect(() => parseAuthenticationConfigMap(data())).toThrow(AuthConfigError);
    expect(() => parseAuthenticationConfigMap(data())).toThrow(message);
  });
});

describe('verifyClientChain', () => {
  const now = () => new Date();
  let cfg: RequestHeaderConfig;
  beforeAll(() => {
    cfg = parseAuthenticationConfigMap(configMap());
  });

  it('accepts the front-proxy client certificate', () => {
    expect(verifyClientChain([cert('proxy')], cfg, now())).toEqual({
      ok: true,
      commonName: 'front-proxy-client',
    });
  });

  it('follows intermediates the client presents', () => {
    expect(verifyClientChain([cert('via-intermediate'), cert('intermediate')], cfg, now()).ok).toBe(true);
    expect(verifyClientChain([cert('via-intermediate')], cfg, now()).ok).toBe(false);
  });

  it.each([
    ['no certificate', [] as string[], 'no client certificate'],
    ['a certificate from another CA (e.g. a user cert)', ['wrong-ca'], 'not signed by the requestheader CA'],
    ['a CN outside the allowed names', ['other-cn'], 'not an allowed front-proxy name'],
    ['a certificate only for servers', ['server-only'], 'not for client authentication'],
  ])('rejects %s', (_what, names, reason) => {
    const verdict = verifyClientChain(names.map(cert), cfg, now());
    expect(verdict.ok).toBe(false);
    expect(!verdict.ok && verdict.reason).toContain(reason);
  });

  it('rejects an expired certificate', () => {
    const later = new Date(Date.now() + 3 * 24 * 3600_000);
    expect(verifyClientChain([cert('proxy')], cfg, later)).toEqual({
      ok: false,
      reason: 'client certificate expired or not yet valid',
    });
  });

  it('accepts any CN when no allowed names are published', () => {
    expect(verifyClientChain([cert('other-cn')], { ...cfg, allowedNames: [] }, now()).ok).toBe(true);
  });
});

describe('userFromHeaders', () => {
  let cfg: RequestHeaderConfig;
  beforeAll(() => {
    cfg = parseAuthenticationConfigMap(configMap());
  });

  it('reads user, every group line, uid and extras (keys unescaped, lower-cased)', () => {
    const user = userFromHeaders(
      {
        'x-remote-user': ['alice'],
        'x-remote-group': ['dev', 'ops, with comma'],
        'x-remote-uid': ['u-1'],
        'x-remote-extra-scopes': ['a', 'b'],
        'x-remote-extra-example.com%2fteam': ['blue'],
        'x-other': ['ignored'],
      },
      cfg,
    );
    expect(user).toEqual({
      name: 'alice',
      uid: 'u-1',
      groups: ['dev', 'ops, with comma', 'system:authenticated'],
      extra: { scopes: ['a', 'b'], 'example.com/team': ['blue'] },
    });
  });

  it('does not add system:authenticated twice', () => {
    const user = userFromHeaders(
      { 'x-remote-user': ['bob'], 'x-remote-group': ['system:authenticated'] },
      cfg,
    );
    expect(user?.groups).toEqual(['system:authenticated']);
  });

  it.each([[{}], [{ 'x-remote-user': [''] }]])('finds no user in %j', (headers) => {
    expect(userFromHeaders(headers, cfg)).toBeUndefined();
  });
});

describe('requestAttributes', () => {
  it.each([
    ['GET', '/apis/nodeload.example.com/v1alpha1/nodeloads', {}, { verb: 'list', resource: 'nodeloads' }],
    ['GET', '/apis/nodeload.example.com/v1alpha1/nodeloads', { watch: 'true' }, { verb: 'watch' }],
    ['GET', '/apis/nodeload.example.com/v1alpha1/nodeloads', { watch: '1' }, { verb: 'watch' }],
    ['GET', '/apis/nodeload.example.com/v1alpha1/nodeloads/n1', {}, { verb: 'get', name: 'n1' }],
    [
      'GET',
      '/apis/nodeload.example.com/v1alpha1/watch/nodeloads',
      {},
      { verb: 'watch', resource: 'nodeloads' },
    ],
    ['GET', '/apis/nodeload.example.com/v1alpha1/watch/nodeloads/n1', {}, { verb: 'watch', name: 'n1' }],
    ['DELETE', '/apis/nodeload.example.com/v1alpha1/nodeloads', {}, { verb: 'deletecollection' }],
    ['POST', '/apis/nodeload.example.com/v1alpha1/nodeloads', {}, { verb: 'create' }],
    [
      'GET',
      '/apis/g.io/v1/namespaces/ns/things/t/status',
      {},
      { verb: 'get', namespace: 'ns', resource: 'things', name: 't', subresource: 'status' },
    ],
  ])('%s %s %j is a resource request', (method, path, query, want) => {
    expect(requestAttributes(method, path, query)).toMatchObject({ kind: 'resource', ...want });
  });

  it.each([
    '/apis',
    '/apis/nodeload.example.com',
    '/apis/nodeload.example.com/v1alpha1',
    '/openapi/v3',
    '/healthz',
  ])('%s is a non-resource URL', (path) => {
    expect(requestAttributes('GET', path, {})).toEqual({ kind: 'nonResource', verb: 'get', path });
  });
});

const alice: UserInfo = { name: 'alice', groups: ['dev', 'system:authenticated'], extra: {} };
const list = requestAttributes('GET', '/apis/nodeload.example.com/v1alpha1/nodeloads', {});

describe('alwaysAllowed', () => {
  it.each([
    ['health paths, even anonymous', undefined, requestAttributes('GET', '/readyz', {}), true],
    ['system:masters', { ...alice, groups: ['system:masters'] }, list, true],
    ['anyone else', alice, list, false],
  ])('%s', (_what, user, attrs, want) => {
    expect(alwaysAllowed(user, attrs)).toBe(want);
  });
});

describe('forbidden', () => {
  it('words a 403 as the apiserver does', () => {
    const err = forbidden(
      alice,
      requestAttributes('GET', '/apis/nodeload.example.com/v1alpha1/nodeloads/n1', {}),
      '',
    );
    expect(err.status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'nodeloads.nodeload.example.com "n1" is forbidden: User "alice" cannot get resource "nodeloads" in API group "nodeload.example.com" at the cluster scope',
      reason: 'Forbidden',
      details: { name: 'n1', group: 'nodeload.example.com', kind: 'nodeloads' },
      code: 403,
    });
    expect(forbidden(alice, requestAttributes('GET', '/openapi/v2', {}), 'no RBAC').message).toBe(
      'forbidden: User "alice" cannot get path "/openapi/v2": no RBAC',
    );
  });
});

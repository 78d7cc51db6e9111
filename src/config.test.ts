import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('applies defaults', () => {
    const c = loadConfig([], {});
    expect(c).toMatchObject({
      httpPort: 8080,
      httpsPort: 8443,
      schedulerName: 'nodeload-scheduler',
      leaderElect: true,
      anonymousUserPort: false,
      corsAllowedOrigins: [],
      production: false,
    });
  });

  it('reads the CORS allow-list as a comma-separated list of origins', () => {
    expect(
      loadConfig(['--cors-allowed-origins', 'https://a.example/, https://b.example:8443'], {})
        .corsAllowedOrigins,
    ).toEqual(['https://a.example', 'https://b.example:8443']);
  });

  it.each([
    { argv: ['--http-port', '9000'], env: {}, key: 'httpPort', want: 9000 },
    { argv: [], env: { NODELOAD_HTTP_PORT: '9001' }, key: 'httpPort', want: 9001 },
    { argv: ['--http-port', '9002'], env: { NODELOAD_HTTP_PORT: '9001' }, key: 'httpPort', want: 9002 },
    { argv: ['--leader-elect', 'false'], env: {}, key: 'leaderElect', want: false },
    {
      argv: ['--lease-renew-deadline-seconds', '10', '--lease-retry-period-seconds', '2'],
      env: {},
      key: 'leaseRetryPeriodSeconds',
      want: 2,
    },
    { argv: [], env: { KUBECONFIG: '/k' }, key: 'kubeconfig', want: '/k' },
    {
      argv: ['--stale-metrics-policy', 'fail-closed'],
      env: {},
      key: 'staleMetricsPolicy',
      want: 'fail-closed',
    },
    {
      argv: ['--anonymous-user-port=true', '--bind-address=127.0.0.1'],
      env: {},
      key: 'anonymousUserPort',
      want: true,
    },
    { argv: [], env: {}, key: 'anonymousUserPort', want: false },
    { argv: ['--production=true'], env: {}, key: 'production', want: true },
    {
      argv: [
        '--user-tls-cert-file=/tls/tls.crt',
        '--user-tls-key-file=/tls/tls.key',
        '--user-client-ca-file=/ca.crt',
      ],
      env: {},
      key: 'userClientCaFile',
      want: '/ca.crt',
    },
    {
      argv: ['--user-tls-cert-file=/tls/tls.crt', '--user-tls-key-file=/tls/tls.key'],
      env: {},
      key: 'userClientCaFile',
      want: undefined,
    },
  ])('$argv $env → $key=$want', ({ argv, env, key, want }) => {
    expect(loadConfig(argv, env)[key as keyof ReturnType<typeof loadConfig>]).toBe(want);
  });

  it.each([
    { argv: ['--http-port', 'abc'], msg: '--http-port (NODELOAD_HTTP_PORT)' },
    { argv: ['--http-port', '70000'], msg: '--http-port' },
    { argv: ['--tls-cert-file', '/c'], msg: '--tls-cert-file and --tls-key-file go together' },
    { argv: ['--log-level', 'loud'], msg: '--log-level' },
    { argv: ['--bogus', 'x'], msg: "Unknown option '--bogus'" },
    {
      argv: ['--lease-renew-deadline-seconds', '15'],
      msg: '--lease-renew-deadline-seconds (NODELOAD_LEASE_RENEW_DEADLINE_SECONDS): --lease-renew-deadline-seconds (15 s) must be less than --lease-duration-seconds (15 s)',
    },
    {
      argv: ['--lease-retry-period-seconds', '9'],
      msg: '--lease-retry-period-seconds (NODELOAD_LEASE_RETRY_PERIOD_SECONDS): --lease-retry-period-seconds (9 s) × 1.2 must be less than --lease-renew-deadline-seconds (10 s)',
    },
    {
      argv: ['--lease-duration-seconds', '30', '--lease-retry-period-seconds', '0'],
      msg: '--lease-retry-period-seconds must be greater than zero',
    },
    {
      argv: ['--anonymous-user-port=true'],
      msg: '--anonymous-user-port (NODELOAD_ANONYMOUS_USER_PORT): --anonymous-user-port=true serves every request without a token, so it needs a loopback --bind-address',
    },
    { argv: ['--anonymous-user-port=true', '--bind-address=10.0.0.5'], msg: '--anonymous-user-port' },
    ...[
      ['--user-tls-cert-file=/c'],
      ['--user-tls-key-file=/k'],
      ['--user-tls-cert-file=/c', '--user-client-ca-file=/ca'],
    ].map((argv) => ({
      argv,
      msg: '--user-tls-cert-file (NODELOAD_USER_TLS_CERT_FILE): --user-tls-cert-file and --user-tls-key-file go together',
    })),
    ...[['--user-client-ca-file=/ca'], ['--user-client-ca-file=/ca', '--user-tls-key-file=/k']].map(
      (argv) => ({
        argv,
        msg: '--user-client-ca-file (NODELOAD_USER_CLIENT_CA_FILE): --user-client-ca-file authenticates TLS client certificates, so the HTTP port must serve TLS: give --user-tls-cert-file and --user-tls-key-file too',
      }),
    ),
  ])('rejects $argv with a message naming the flag', ({ argv, msg }) => {
    expect(() => loadConfig(argv, {})).toThrow(ConfigError);
    expect(() => loadConfig(argv, {})).toThrow(msg);
  });
});

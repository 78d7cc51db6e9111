/**
 * Gateway configuration from flags and environment, validated once at start. Flags win over
 * environment variables (NODELOAD_*), which win over defaults.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { checkElectionTimings, electionTimings } from './leader/election.js';
import { isLoopbackAddress } from './server/authn.js';
import { parseOrigins } from './server/cors.js';
import { USER_PORT_GATE_DEFAULTS } from './server/user-port-gate.js';

const port = z.coerce.number().int().min(0).max(65535);
const bool = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1'),
]);
const percentFactor = z.coerce.number().min(0).max(10);
/** A comma-separated flag value as a list (empty items dropped). */
const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export const ConfigSchema = z
  .object({
    kubeconfig: z.string().min(1).optional().describe('Path to a kubeconfig; in-cluster config when unset'),
    httpPort: port.default(8080).describe('User-facing HTTP port (GraphQL, dashboard, health, metrics)'),
    httpsPort: port.default(8443).describe('Kube-facing HTTPS port (webhook, aggregated API)'),
    bindAddress: z.string().default('0.0.0.0'),
    tlsCertFile: z.string().min(1).optional(),
    tlsKeyFile: z.string().min(1).optional(),
    userTlsCertFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'With --user-tls-key-file: the HTTP port serves HTTPS with this certificate (reloaded when the files change)',
      ),
    userTlsKeyFile: z.string().min(1).optional().describe('The key of --user-tls-cert-file'),
    userClientCaFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Authenticate HTTP-port clients by a TLS client certificate this CA signed (user: its CN, groups: its O values), besides bearer tokens; needs --user-tls-cert-file',
      ),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    schedulerName: z.string().min(1).default('nodeload-scheduler'),
    /** The gateway's own namespace: leases live here and the webhooks never touch it. */
    namespace: z.string().min(1).default('nodeload-system'),
    identity: z.string().min(1).optional().describe('Leader-election identity; hostname_<random> when unset'),
    leaderElect: bool.default(true),
    leaseName: z.string().min(1).default('nodeload-gateway'),
    leaseDurationSeconds: z.coerce.number().int().min(2).default(15),
    leaseRenewDeadlineSeconds: z.coerce
      .number()
      .optional()
      .describe('A leader that could not renew for this long steps down; default ⅔ of the lease duration'),
    leaseRetryPeriodSeconds: z.coerce
      .number()
      .optional()
      .describe('Leader renewals and follower attempts happen this often; default ⅓ of the lease duration'),
    installCrd: bool
      .default(true)
      .describe(
        'Create or update the NodeLoadRule CRD at start; false (the Deployment): only wait until it is installed and Established',
      ),
    certRotation: z
      .enum(['none', 'self-signed'])
      .default('none')
      .describe(
        'self-signed: keep an own CA and serving certificate in --cert-secret and the caBundles in step (instead of --tls-cert-file)',
      ),
    certSecret: z.string().min(1).default('nodeload-gateway-certs'),
    certService: z
      .string()
      .min(1)
      .default('nodeload-gateway')
      .describe('The Service whose DNS names (in --namespace) the self-signed certificate carries'),
    certExtraNames: z
      .string()
      .default('')
      .transform(list)
      .describe('More DNS names or IP addresses for the self-signed certificate, comma-separated'),
    certWebhookConfigurations: z
      .string()
      .default('nodeload-gateway')
      .transform(list)
      .describe('Mutating and validating webhook configurations whose caBundle the rotation sets'),
    certApiServices: z
      .string()
      .default('v1alpha1.nodeload.example.com')
      .transform(list)
      .describe('APIServices whose caBundle the rotation sets'),
    metricsStalenessSeconds: z.coerce.number().int().min(1).default(180),
    staleMetricsPolicy: z.enum(['fail-open', 'fail-closed']).default('fail-open'),
    metricsPollSeconds: z.coerce.number().int().min(1).default(15),
    estimateCpuFactor: percentFactor.default(0.85),
    estimateMemoryFactor: percentFactor.default(0.7),
    scoreCpuWeight: z.coerce.number().min(0).default(1).describe('Weight of CPU load in the score'),
    scoreMemoryWeight: z.coerce.number().min(0).default(1).describe('Weight of memory load in the score'),
    schedulerConfig: z
      .string()
      .min(1)
      .optional()
      .describe('KubeSchedulerConfiguration file: the profile (plugins, weights, args) for --scheduler-name'),
    burstMaxPlacements: z.coerce.number().int().min(0).default(0).describe('Global burst guard; 0 = off'),
    burstWindowSeconds: z.coerce.number().int().min(1).max(3600).default(10),
    bindQps: z.coerce.number().positive().default(500),
    bindBurst: z.coerce.number().int().positive().default(1000),
    overrideExplicitScheduler: bool.default(false),
    nativeScheduler: bool
      .default(true)
      .describe(
        "Run nodeload's own scheduling loop; false in extender mode (kube-scheduler places the pods)",
      ),
    extenderClientCaFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Serve the kube-scheduler extender verbs on the HTTPS port to clients whose certificate this CA signed',
      ),
    webhookBodyLimit: z.string().default('8mb'),
    anonymousUserPort: bool
      .default(false)
      .describe(
        'Serve requests without a token on the HTTP port as an unrestricted user; only with a loopback --bind-address',
      ),
    corsAllowedOrigins: z
      .string()
      .default('')
      .transform(parseOrigins)
      .describe(
        'Comma-separated origins whose pages may call the HTTP port (CORS, WebSocket); none by default',
      ),
    production: bool.default(false).describe('GraphiQL and GraphQL introspection off'),
    maxSubscriptionsPerConnection: z.coerce
      .number()
      .int()
      .min(1)
      .default(100)
      .describe('Operations one GraphQL WebSocket connection may run at once'),
    // The TokenReview cache's TTL: each pass finds the last verdict just expired, so one review per token.
    streamTokenReviewSeconds: z.coerce
      .number()
      .positive()
      .default(10)
      .describe(
        'How often the token of each open GraphQL stream (WebSocket, SSE subscription) is reviewed again; one that no longer authenticates closes the stream',
      ),
    userBodyLimitBytes: z.coerce
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024)
      .describe('Largest request body and WebSocket message on the HTTP port'),
    userPortConcurrency: z.coerce
      .number()
      .int()
      .min(0)
      .default(USER_PORT_GATE_DEFAULTS.concurrency)
      .describe(
        'HTTP-port requests run at once, the next admitted only after the event loop served the HTTPS port (webhook, aggregated API) and the scheduler; 0 = no limit',
      ),
    userPortLoopShare: z.coerce
      .number()
      .gt(0)
      .max(1)
      .default(USER_PORT_GATE_DEFAULTS.loopShare)
      .describe(
        'Fraction of the event loop HTTP-port requests may take while the HTTPS port (webhook, aggregated API) or the scheduler has work; 1 = no limit. Nothing is held back while they are idle',
      ),
    idleMemoryReclaimSeconds: z.coerce
      .number()
      .min(0)
      .default(60)
      .describe(
        'After a busy period (a burst of pods), once the event loop has been quiet this long, one memory-reducing GC returns the heap the burst grew to the OS (one pause, ~0.6 s at 1,000 nodes); needs node --expose-gc; 0 = off',
      ),
    userPortMaxQueued: z.coerce
      .number()
      .int()
      .min(0)
      .default(USER_PORT_GATE_DEFAULTS.maxQueued)
      .describe('HTTP-port requests that may wait for their turn; more are answered 503 with Retry-After'),
    userPortMaxWaitSeconds: z.coerce
      .number()
      .positive()
      .default(USER_PORT_GATE_DEFAULTS.maxWaitMs / 1000)
      .describe('An HTTP-port request that waited this long for its turn is answered 503 with Retry-After'),
  })
  .refine((c) => !c.anonymousUserPort || isLoopbackAddress(c.bindAddress), {
    message:
      '--anonymous-user-port=true serves every request without a token, so it needs a loopback --bind-address (127.0.0.1 or ::1)',
    path: ['anonymousUserPort'],
  })
  .refine((c) => c.certRotation === 'none' || !c.tlsCertFile, {
    message: '--cert-rotation=self-signed makes its own certificate: drop --tls-cert-file and --tls-key-file',
    path: ['certRotation'],
  })
  .refine((c) => Boolean(c.tlsCertFile) === Boolean(c.tlsKeyFile), {
    message: '--tls-cert-file and --tls-key-file go together: give both or neither',
    path: ['tlsCertFile'],
  })
  .refine((c) => Boolean(c.userTlsCertFile) === Boolean(c.userTlsKeyFile), {
    message: '--user-tls-cert-file and --user-tls-key-file go together: give both or neither',
    path: ['userTlsCertFile'],
  })
  .refine((c) => !c.userClientCaFile || Boolean(c.userTlsCertFile && c.userTlsKeyFile), {
    message:
      '--user-client-ca-file authenticates TLS client certificates, so the HTTP port must serve TLS: give --user-tls-cert-file and --user-tls-key-file too',
    path: ['userClientCaFile'],
  })
  .superRefine((c, ctx) => {
    const timings = electionTimings(c.leaseDurationSeconds, {
      renewDeadlineSeconds: c.leaseRenewDeadlineSeconds,
      retryPeriodSeconds: c.leaseRetryPeriodSeconds,
    });
    const problem = checkElectionTimings(timings, {
      leaseDurationMs: '--lease-duration-seconds',
      renewDeadlineMs: '--lease-renew-deadline-seconds',
      retryPeriodMs: '--lease-retry-period-seconds',
    });
    if (!problem) return;
    const path = {
      leaseDurationMs: 'leaseDurationSeconds',
      renewDeadlineMs: 'leaseRenewDeadlineSeconds',
      retryPeriodMs: 'leaseRetryPeriodSeconds',
    }[problem.field];
    ctx.addIssue({ code: 'custom', message: problem.message, path: [path] });
  });

export type GatewayConfig = z.infer<typeof ConfigSchema>;
export type GatewayConfigInput = z.input<typeof ConfigSchema>;

const kebab = (k: string) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const envName = (k: string) => `NODELOAD_${kebab(k).replace(/-/g, '_').toUpperCase()}`;
const KEYS = Object.keys(ConfigSchema.shape) as (keyof GatewayConfig)[];

export class ConfigError extends Error {}

/** Parses argv (without node and script) and env into a validated config, or throws ConfigError listing every problem. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const options = Object.fromEntries(KEYS.map((k) => [kebab(k), { type: 'string' as const }]));
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | undefined
    >;
  } catch (err) {
    throw new ConfigError(
      `${(err as Error).message}\nknown flags: ${KEYS.map((k) => `--${kebab(k)}`).join(' ')}`,
    );
  }
  const raw: Record<string, unknown> = {};
  for (const k of KEYS) {
    const v = values[kebab(k)] ?? env[envName(k)];
    if (v !== undefined && v !== '') raw[k] = v;
  }
  if (raw.kubeconfig === undefined && env.KUBECONFIG) raw.kubeconfig = env.KUBECONFIG;
  return parseConfig(raw);
}

export function parseConfig(raw: GatewayConfigInput | Record<string, unknown>): GatewayConfig {
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) {
    const lines = result.error.issues.map((i) => {
      const key = String(i.path[0] ?? '');
      return `  --${kebab(key)} (${envName(key)}): ${i.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

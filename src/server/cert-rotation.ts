/**
 * --cert-rotation=self-signed: the gateway keeps its own CA and serving certificate in a Secret and the
 * CA in the caBundle of its webhook configurations and APIService, as Gatekeeper's cert-controller does.
 * Only the leader writes (the Secret, the caBundles), checking again every interval and whenever it
 * starts leading; every replica reads the Secret each interval and serves what it holds, so a rotation
 * reaches all of them without a restart. What to write is decided in certs.ts.
 *
 * RBAC (manifests/overlays/self-signed/rbac.yaml): secrets create, get/update on the Secret's name;
 * get/patch on the webhook configurations and the APIService by name.
 */
import {
  AdmissionregistrationV1Api,
  ApiregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Secret,
} from '@kubernetes/client-node';
import { type CertPolicy, type CertSecretData, DEFAULT_CERT_POLICY, planRotation, rotate } from './certs.js';
import type { Logger } from './log.js';

/** What the rotation needs of leader election (src/leader's elector, passed in by the composition root). */
export interface RotationLeadership {
  isLeader(): boolean;
  on(event: 'started-leading', fn: () => void): () => void;
}

/** The API calls the rotation makes (the clients of kubeConfig, or a test's fakes). */
export interface CertRotationApis {
  core: Pick<CoreV1Api, 'readNamespacedSecret' | 'createNamespacedSecret' | 'replaceNamespacedSecret'>;
  admission: Pick<
    AdmissionregistrationV1Api,
    | 'readMutatingWebhookConfiguration'
    | 'patchMutatingWebhookConfiguration'
    | 'readValidatingWebhookConfiguration'
    | 'patchValidatingWebhookConfiguration'
  >;
  registration: Pick<ApiregistrationV1Api, 'readAPIService' | 'patchAPIService'>;
}

interface CertRotatorBaseOptions {
  namespace: string;
  secretName: string;
  /** DNS names and IP addresses of the serving certificate. */
  names: string[];
  /** MutatingWebhookConfigurations and ValidatingWebhookConfigurations of these names get the caBundle. */
  webhookConfigurations: string[];
  apiServices: string[];
  leadership: RotationLeadership;
  log: Logger;
  /** Called with every serving certificate read from the Secret (PEM). */
  onCertificate: (pair: { cert: string; key: string }) => void;
  intervalMs?: number;
  policy?: CertPolicy;
  now?: () => Date;
}

export type CertRotatorOptions = CertRotatorBaseOptions &
  ({ kubeConfig: KubeConfig } | { apis: CertRotationApis });

function apisOf(opts: CertRotatorOptions): CertRotationApis {
  if ('apis' in opts) return opts.apis;
  return {
    core: opts.kubeConfig.makeApiClient(CoreV1Api),
    admission: opts.kubeConfig.makeApiClient(AdmissionregistrationV1Api),
    registration: opts.kubeConfig.makeApiClient(ApiregistrationV1Api),
  };
}

const KEYS = ['tls.crt', 'tls.key', 'ca.crt', 'ca.key'] as const;

function status(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

function decode(secret: V1Secret | undefined): Partial<CertSecretData> | undefined {
  if (!secret?.data) return undefined;
  const out: Partial<CertSecretData> = {};
  for (const k of KEYS) {
    const v = secret.data[k];
    if (v) out[k] = Buffer.from(v, 'base64').toString('utf8');
  }
  return out;
}

const encode = (data: CertSecretData): Record<string, string> =>
  Object.fromEntries(KEYS.map((k) => [k, Buffer.from(data[k]).toString('base64')]));

export class CertRotator {
  private readonly core: CertRotationApis['core'];
  private readonly admission: CertRotationApis['admission'];
  private readonly registration: CertRotationApis['registration'];
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private served: string | undefined;
  private stopped = false;

  constructor(private readonly opts: CertRotatorOptions) {
    ({ core: this.core, admission: this.admission, registration: this.registration } = apisOf(opts));
  }

  /** Whether a certificate from the Secret is being served (readiness waits for it). */
  get loaded(): boolean {
    return this.served !== undefined;
  }

  start(): void {
    this.unsubscribe = this.opts.leadership.on('started-leading', () => void this.check());
    this.timer = setInterval(() => void this.check(), this.opts.intervalMs ?? 60_000);
    this.timer.unref();
    void this.check();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
  }

  /** One round now (or right after the one running): the leader writes what is due, everyone loads. */
  check(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.round();
        } catch (err) {
          this.opts.log.error({ err }, 'certificate rotation failed; retrying at the next check');
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async round(): Promise<void> {
    const { secretName: name, namespace } = this.opts;
    let secret: V1Secret | undefined;
    try {
      secret = await this.core.readNamespacedSecret({ name, namespace });
    } catch (err) {
      if (status(err) !== 404) throw err;
    }
    let data = decode(secret);
    if (this.opts.leadership.isLeader()) {
      const now = (this.opts.now ?? (() => new Date()))();
      const policy = this.opts.policy ?? DEFAULT_CERT_POLICY;
      const plan = planRotation(data, this.opts.names, now, policy);
      const next = rotate(data, plan, this.opts.names, now, policy);
      // The caBundles first: the API server trusts a CA before any replica can serve a certificate it
      // signed (a new CA's, or a reissued one's when a caBundle was lost). A failed patch writes nothing.
      const bundle = (next ?? data)?.['ca.crt'];
      if (bundle) await this.injectCaBundle(bundle);
      if (next && plan.action !== 'keep') {
        await this.write(secret, next);
        this.opts.log.info(
          { secret: `${namespace}/${name}`, action: plan.action, reason: plan.reason },
          'serving certificate written',
        );
        data = next;
      }
    }
    const cert = data?.['tls.crt'];
    const key = data?.['tls.key'];
    if (cert && key && cert !== this.served) {
      this.opts.onCertificate({ cert, key });
      this.served = cert;
      this.opts.log.info({ secret: `${namespace}/${name}` }, 'serving certificate loaded from the Secret');
    }
  }

  private async write(current: V1Secret | undefined, data: CertSecretData): Promise<void> {
    const { secretName: name, namespace } = this.opts;
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: {
        name,
        namespace,
        labels: { 'app.kubernetes.io/name': 'nodeload', 'app.kubernetes.io/component': 'certificates' },
        ...(current?.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
      },
      data: encode(data),
    };
    if (current) await this.core.replaceNamespacedSecret({ name, namespace, body });
    else await this.core.createNamespacedSecret({ namespace, body });
  }

  /** Sets the caBundle wherever it differs; configurations that do not exist (yet) are skipped. */
  private async injectCaBundle(bundlePem: string): Promise<void> {
    const caBundle = Buffer.from(bundlePem).toString('base64');
    const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
    const kinds = [
      {
        kind: 'MutatingWebhookConfiguration',
        read: (name: string) => this.admission.readMutatingWebhookConfiguration({ name }),
        patch: (name: string, body: unknown) =>
          this.admission.patchMutatingWebhookConfiguration({ name, body }, jsonPatch),
      },
      {
        kind: 'ValidatingWebhookConfiguration',
        read: (name: string) => this.admission.readValidatingWebhookConfiguration({ name }),
        patch: (name: string, body: unknown) =>
          this.admission.patchValidatingWebhookConfiguration({ name, body }, jsonPatch),
      },
    ];
    for (const { kind, read, patch } of kinds) {
      for (const name of this.opts.webhookConfigurations) {
        let hooks: { clientConfig: { caBundle?: string } }[];
        try {
          hooks = (await read(name)).webhooks ?? [];
        } catch (err) {
          if (status(err) === 404) continue;
          throw err;
        }
        const ops = hooks.flatMap((h, i) =>
          h.clientConfig.caBundle === caBundle
            ? []
            : [{ op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle }],
        );
        if (ops.length === 0) continue;
        await patch(name, ops);
        this.opts.log.info({ kind, name, webhooks: ops.length }, 'caBundle updated');
      }
    }
    for (const name of this.opts.apiServices) {
      let current: string | undefined;
      try {
        current = (await this.registration.readAPIService({ name })).spec?.caBundle;
      } catch (err) {
        if (status(err) === 404) continue;
        throw err;
      }
      if (current === caBundle) continue;
      await this.registration.patchAPIService(
        { name, body: { spec: { caBundle } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      this.opts.log.info({ kind: 'APIService', name }, 'caBundle updated');
    }
  }
}

import { X509Certificate } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type CertRotationApis, CertRotator, type RotationLeadership } from './cert-rotation.js';
import { type CertSecretData, planRotation, rotate, serviceDnsNames, splitPem } from './certs.js';

const NAMESPACE = 'nodeload-system';
const SECRET = 'nodeload-gateway-certs';
const HOOKS = 'nodeload-gateway';
const API_SERVICE = 'v1alpha1.nodeload.example.com';
const NAMES = serviceDnsNames('nodeload-gateway', NAMESPACE);
const T0 = new Date('2027-01-01T00:00:00Z');
const day = (n: number) => new Date(T0.getTime() + n * 86_400_000);
const b64 = (text: string) => Buffer.from(text).toString('base64');

const notFound = () => Object.assign(new Error('not found'), { code: 404 });

/**
 * The API server as the rotation sees it: one Secret, a mutating and a validating configuration of two
 * webhooks each, one APIService. Reads answer copies; every write is recorded, in order.
 */
function fakeApi() {
  const state = {
    secret: undefined as V1Secret | undefined,
    resourceVersion: 0,
    hooks: {
      MutatingWebhookConfiguration: [{ clientConfig: {} }, { clientConfig: {} }] as {
        clientConfig: { caBundle?: string };
      }[],
      ValidatingWebhookConfiguration: [{ clientConfig: {} }, { clientConfig: {} }] as {
        clientConfig: { caBundle?: string };
      }[],
    },
    apiServiceCaBundle: undefined as string | undefined,
    /** The writes, as `verb Kind name`. */
    writes: [] as string[],
    /** Set to make the next caBundle patch fail (the API server refuses it). */
    failNextPatch: false,
  };
  const storeSecret = (body: V1Secret) => {
    state.resourceVersion++;
    const stored = structuredClone({
      ...body,
      metadata: { ...body.metadata, resourceVersion: String(state.resourceVersion) },
    });
    state.secret = stored;
    return structuredClone(stored);
  };
  const webhooks = (kind: keyof typeof state.hooks) => ({
    read: async ({ name }: { name: string }) => {
      if (name !== HOOKS) throw notFound();
      return structuredClone({ webhooks: state.hooks[kind] }) as never;
    },
    patch: async ({ name, body }: { name: string; body: unknown }) => {
      if (state.failNextPatch) {
        state.failNextPatch = false;
        throw Object.assign(new Error('the API server is unavailable'), { code: 503 });
      }
      for (const op of body as { op: string; path: string; value: string }[]) {
        const i = Number(/^\/webhooks\/(\d+)\/clientConfig\/caBundle$/.exec(op.path)?.[1]);
        const hook = state.hooks[kind][i];
        if (op.op !== 'add' || !hook) throw new Error(`unexpected patch ${JSON.stringify(op)}`);
        hook.clientConfig.caBundle = op.value;
      }
      state.writes.push(`patch ${kind} ${name}`);
      return {} as never;
    },
  });
  const mutating = webhooks('MutatingWebhookConfiguration');
  const validating = webhooks('ValidatingWebhookConfiguration');
  const apis: CertRotationApis = {
    core: {
      readNamespacedSecret: async ({ name, namespace }) => {
        if (name !== SECRET || namespace !== NAMESPACE || !state.secret) throw notFound();
        return structuredClone(state.secret);
      },
      createNamespacedSecret: async ({ namespace, body }) => {
        if (state.secret) throw Object.assign(new Error('already exists'), { code: 409 });
        state.writes.push(`create Secret ${namespace}/${body.metadata?.name}`);
        return storeSecret(body);
      },
      replaceNamespacedSecret: async ({ name, namespace, body }) => {
        if (body.metadata?.resourceVersion !== String(state.resourceVersion)) {
          throw Object.assign(new Error('conflict'), { code: 409 });
        }
        state.writes.push(`replace Secret ${namespace}/${name}`);
        return storeSecret(body);
      },
    },
    admission: {
      readMutatingWebhookConfiguration: mutating.read,
      patchMutatingWebhookConfiguration: mutating.patch,
      readValidatingWebhookConfiguration: validating.read,
      patchValidatingWebhookConfiguration: validating.patch,
    },
    registration: {
      readAPIService: async ({ name }) => {
        if (name !== API_SERVICE) throw notFound();
        return { spec: { caBundle: state.apiServiceCaBundle } } as never;
      },
      patchAPIService: async ({ name, body }) => {
        state.apiServiceCaBundle = (body as { spec: { caBundle: string } }).spec.caBundle;
        state.writes.push(`patch APIService ${name}`);
        return {} as never;
      },
    },
  };
  return {
    apis,
    state,
    /** The Secret's data as the rotation decodes it. */
    secretData(): CertSecretData {
      const data = state.secret?.data ?? {};
      return Object.fromEntries(
        Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
      ) as unknown as CertSecretData;
    },
    /** What an earlier leader left: the Secret with `data`, every caBundle holding its ca.crt. */
    seed(data: CertSecretData) {
      storeSecret({
        metadata: { name: SECRET, namespace: NAMESPACE },
        data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
      });
      for (const hooks of Object.values(state.hooks)) {
        for (const h of hooks) h.clientConfig.caBundle = b64(data['ca.crt']);
      }
      state.apiServiceCaBundle = b64(data['ca.crt']);
    },
    caBundles(): (string | undefined)[] {
      return [
        ...Object.values(state.hooks).flatMap((hooks) => hooks.map((h) => h.clientConfig.caBundle)),
        state.apiServiceCaBundle,
      ];
    },
  };
}

type FakeApi = ReturnType<typeof fakeApi>;

/** Leader election as the rotation sees it: a flag and the started-leading event. */
function fakeLeadership(leader: boolean) {
  const listeners = new Set<() => void>();
  return {
    leader,
    isLeader() {
      return this.leader;
    },
    on(_event: 'started-leading', fn: () => void) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    startLeading() {
      this.leader = true;
      for (const fn of listeners) fn();
    },
  };
}

const rotators: CertRotator[] = [];
afterEach(() => {
  for (const r of rotators.splice(0)) r.stop();
});

/** A replica's rotator over the fake API, its clock at `clock.now`; `served` collects onCertificate's pairs. */
function replica(api: FakeApi, leadership: RotationLeadership, clock: { now: Date }) {
  const served: { cert: string; key: string }[] = [];
  const rotator = new CertRotator({
    apis: api.apis,
    namespace: NAMESPACE,
    secretName: SECRET,
    names: NAMES,
    webhookConfigurations: [HOOKS, 'not-installed'],
    apiServices: [API_SERVICE],
    leadership,
    log: pino({ level: 'silent' }),
    onCertificate: (pair) => served.push(pair),
    now: () => clock.now,
  });
  rotators.push(rotator);
  return { rotator, served };
}

/** The Secret's data an earlier leader wrote: a CA made at `caAt`, a serving certificate issued at `certAt`. */
function issued(caAt: Date, certAt: Date): CertSecretData {
  const bootstrap = rotate(undefined, { action: 'new-ca', reason: 'test' }, NAMES, caAt) as CertSecretData;
  return rotate(bootstrap, { action: 'issue', reason: 'test' }, NAMES, certAt) as CertSecretData;
}

const signedBy = (certPem: string, caPem: string) => {
  const cert = new X509Certificate(certPem);
  const ca = new X509Certificate(caPem);
  return cert.checkIssued(ca) && cert.verify(ca.publicKey);
};

// Each rotation generates RSA-2048 keys, whose prime search takes seconds now and then on a loaded 2-core box.
describe('the self-signed certificate rotation', { timeout: 60_000 }, () => {
  it('leader, serving certificate near expiry: reissued from the same CA, a lost caBundle restored before the Secret', async () => {
    const api = fakeApi();
    const before = issued(T0, T0);
    api.seed(before);
    // The validating configuration was applied again and lost its caBundle.
    for (const h of api.state.hooks.ValidatingWebhookConfiguration) delete h.clientConfig.caBundle;
    const clock = { now: day(100) };
    const leader = replica(api, fakeLeadership(true), clock);

    await leader.rotator.check();
    // Not due yet: the caBundle restored, the Secret untouched, its certificate served.
    expect(api.state.writes).toEqual([`patch ValidatingWebhookConfiguration ${HOOKS}`]);
    expect(leader.served).toEqual([{ cert: before['tls.crt'], key: before['tls.key'] }]);

    for (const h of api.state.hooks.ValidatingWebhookConfiguration) delete h.clientConfig.caBundle;
    api.state.writes.length = 0;
    // 65 days left of 365, within the 90-day lookahead.
    clock.now = day(300);
    expect(planRotation(before, NAMES, clock.now)).toMatchObject({ action: 'issue' });
    await leader.rotator.check();

    expect(api.state.writes).toEqual([
      `patch ValidatingWebhookConfiguration ${HOOKS}`,
      `replace Secret ${NAMESPACE}/${SECRET}`,
    ]);
    const after = api.secretData();
    expect(after['tls.crt']).not.toBe(before['tls.crt']);
    expect(after['ca.crt']).toBe(before['ca.crt']);
    expect(after['ca.key']).toBe(before['ca.key']);
    expect(signedBy(after['tls.crt'], before['ca.crt'])).toBe(true);
    expect(new Date(new X509Certificate(after['tls.crt']).validTo).getTime()).toBeGreaterThan(
      day(600).getTime(),
    );
    expect(api.caBundles()).toEqual(Array(5).fill(b64(before['ca.crt'])));
    expect(api.state.secret?.type).toBe('kubernetes.io/tls');
    expect(leader.served.at(-1)).toEqual({ cert: after['tls.crt'], key: after['tls.key'] });

    // Nothing due: no write at all.
    api.state.writes.length = 0;
    await leader.rotator.check();
    expect(api.state.writes).toEqual([]);
    expect(leader.served).toHaveLength(2);
  });

  it('leader, CA near expiry: every caBundle patched with the new CA before the Secret is replaced', async () => {
    const api = fakeApi();
    // A CA of 3,650 days, its serving certificate reissued 100 days ago: 450 days left of the CA is less
    // than a new certificate's 365 plus the 90-day lookahead.
    const before = issued(T0, day(3100));
    api.seed(before);
    const clock = { now: day(3200) };
    expect(planRotation(before, NAMES, clock.now)).toMatchObject({ action: 'new-ca' });
    const leader = replica(api, fakeLeadership(true), clock);

    await leader.rotator.check();

    expect(api.state.writes).toEqual([
      `patch MutatingWebhookConfiguration ${HOOKS}`,
      `patch ValidatingWebhookConfiguration ${HOOKS}`,
      `patch APIService ${API_SERVICE}`,
      `replace Secret ${NAMESPACE}/${SECRET}`,
    ]);
    const after = api.secretData();
    const [newCa, oldCa, ...rest] = splitPem(after['ca.crt']);
    expect(rest).toEqual([]);
    // The previous CA stays trusted: replicas not yet reloaded still serve a certificate it signed.
    const fingerprint = (pem: string | undefined) => new X509Certificate(pem ?? '').fingerprint256;
    expect(fingerprint(oldCa)).toBe(fingerprint(before['ca.crt']));
    expect(fingerprint(newCa)).not.toBe(fingerprint(before['ca.crt']));
    expect(signedBy(after['tls.crt'], newCa as string)).toBe(true);
    expect(api.caBundles()).toEqual(Array(5).fill(b64(after['ca.crt'])));
    expect(leader.served.at(-1)).toEqual({ cert: after['tls.crt'], key: after['tls.key'] });
  });

  it('leader: a caBundle patch refused leaves the Secret as it was, and the next check completes the rotation', async () => {
    const api = fakeApi();
    const before = issued(T0, day(3100));
    api.seed(before);
    const leader = replica(api, fakeLeadership(true), { now: day(3200) });

    api.state.failNextPatch = true;
    await leader.rotator.check();
    expect(api.state.writes).toEqual([]);
    expect(api.secretData()).toEqual(before);
    expect(leader.served).toEqual([]);

    await leader.rotator.check();
    expect(api.state.writes.at(-1)).toBe(`replace Secret ${NAMESPACE}/${SECRET}`);
    expect(api.secretData()['tls.crt']).not.toBe(before['tls.crt']);
    expect(api.caBundles()).toEqual(Array(5).fill(b64(api.secretData()['ca.crt'])));
  });

  it('follower: never writes, even with everything due, and serves each new certificate the Secret holds', async () => {
    const api = fakeApi();
    const first = issued(T0, T0);
    api.seed(first);
    // Due on every count: the certificate expired, the CA within its lookahead, a caBundle lost.
    delete api.state.hooks.MutatingWebhookConfiguration[0]?.clientConfig.caBundle;
    const clock = { now: day(3600) };
    const follower = replica(api, fakeLeadership(false), clock);

    await follower.rotator.check();
    expect(api.state.writes).toEqual([]);
    expect(follower.served).toEqual([{ cert: first['tls.crt'], key: first['tls.key'] }]);
    expect(follower.rotator.loaded).toBe(true);

    // The same Secret again: nothing new to serve.
    await follower.rotator.check();
    expect(follower.served).toHaveLength(1);

    // The leader (another replica) rotates; the follower's next read picks the new pair up.
    const leader = replica(api, fakeLeadership(true), clock);
    await leader.rotator.check();
    const written = api.secretData();
    expect(written['tls.crt']).not.toBe(first['tls.crt']);
    const writes = api.state.writes.length;

    await follower.rotator.check();
    expect(api.state.writes).toHaveLength(writes);
    expect(follower.served).toEqual([
      { cert: first['tls.crt'], key: first['tls.key'] },
      { cert: written['tls.crt'], key: written['tls.key'] },
    ]);
  });

  it('follower without a Secret yet: serves nothing and is not loaded, until the leader wrote one', async () => {
    const api = fakeApi();
    const clock = { now: T0 };
    const follower = replica(api, fakeLeadership(false), clock);
    await follower.rotator.check();
    expect(api.state.writes).toEqual([]);
    expect(follower.served).toEqual([]);
    expect(follower.rotator.loaded).toBe(false);

    await replica(api, fakeLeadership(true), clock).rotator.check();
    await follower.rotator.check();
    expect(follower.served).toEqual([
      { cert: api.secretData()['tls.crt'], key: api.secretData()['tls.key'] },
    ]);
    expect(follower.rotator.loaded).toBe(true);
  });

  it('a follower that starts leading rotates at once, without waiting for the interval', async () => {
    const api = fakeApi();
    const before = issued(T0, T0);
    api.seed(before);
    const leadership = fakeLeadership(false);
    const r = replica(api, leadership, { now: day(300) });
    r.rotator.start();
    await r.rotator.check();
    expect(api.state.writes).toEqual([]);

    leadership.startLeading();
    await r.rotator.check();
    expect(api.state.writes).toEqual([`replace Secret ${NAMESPACE}/${SECRET}`]);
    expect(r.served.at(-1)?.cert).toBe(api.secretData()['tls.crt']);
    expect(r.served.at(-1)?.cert).not.toBe(before['tls.crt']);
  });
});

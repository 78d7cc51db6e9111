import { describe, expect, it } from 'vitest';
import { DAEMONSET_ANNOTATION } from '../rules/daemonset.js';
import { toRule } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';
import { type AdmitOptions, admitMutation, admitValidation, type WebhookState } from './admit.js';
import { NOT_STEERED_ANNOTATION, OPT_OUT_LABEL } from './gate.js';
import { RULES_ANNOTATION } from './mutate.js';
import { type AdmissionRequest, parseReview } from './review.js';
import { webhookNode } from './testing.js';
import { BREAK_GLASS_LABEL } from './validate.js';

const OPTS: AdmitOptions = {
  schedulerName: 'nodeload-scheduler',
  overrideExplicitScheduler: false,
  excludedNamespaces: new Set(['kube-system', 'nodeload-system']),
};

function rule(namespace: string, name: string, allowedNodes: string[], podSelector?: Record<string, string>) {
  return toRule({
    metadata: { namespace, name, uid: name, resourceVersion: '1' },
    spec: { allowedNodes, ...(podSelector ? { podSelector: { matchLabels: podSelector } } : {}) },
  });
}

const node = webhookNode;

function state(
  rules: NodeLoadRule[],
  ready = true,
  namespaces: Record<string, Record<string, string>> = {},
): WebhookState {
  const nodes = new Map(['n1', 'n2'].map((n) => [n, node(n)]));
  return {
    ready: () => ready,
    rules: () => rules,
    nodes: () => nodes,
    namespaceLabels: (ns) => namespaces[ns],
  };
}

const RULES = [rule('team', 'only-n1', ['n1'], { app: 'web' })];

function request(over: Partial<AdmissionRequest> & { object?: unknown } = {}): AdmissionRequest {
  const p = parseReview({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'uid-1',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'team',
      operation: 'CREATE',
      object: { metadata: { name: 'web-1', labels: { app: 'web' } }, spec: { containers: [] } },
      ...over,
    },
  });
  if (p.kind !== 'ok') throw new Error(`fixture: ${JSON.stringify(p)}`);
  return p.request;
}

const pinned = (nodeName: string, labels: Record<string, string> = { app: 'web' }) => ({
  metadata: { name: 'p', labels },
  spec: { nodeName },
});

const DS_CONTROLLER = 'system:serviceaccount:kube-system:daemon-set-controller';
const DS_OWNER = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'u', controller: true };

/** A covered pod naming a DaemonSet (DS_OWNER unless told) as its controller. */
const dsPod = (annotations?: Record<string, string>, owner: Record<string, unknown> = DS_OWNER) => ({
  metadata: {
    name: 'agent-x',
    labels: { app: 'web' },
    ownerReferences: [owner],
    ...(annotations ? { annotations } : {}),
  },
  spec: { containers: [] },
});

function decodedPatch(r: ReturnType<typeof admitMutation>): unknown[] {
  const patch = r.review.response.patch;
  return patch ? JSON.parse(Buffer.from(patch, 'base64').toString()) : [];
}

describe('admitMutation', () => {
  it('patches a covered pod and reports the rules for the log', () => {
    const r = admitMutation(request(), state(RULES), OPTS);
    expect(r.result).toBe('patched');
    expect(r.review.response.uid).toBe('uid-1');
    expect(decodedPatch(r).map((o) => (o as { path: string }).path)).toEqual([
      '/spec/schedulerName',
      '/spec/affinity',
      '/metadata/annotations',
    ]);
    expect(r.event?.fields).toMatchObject({
      pod: 'team/web-1',
      rules: ['only-n1'],
      changes: ['schedulerName', 'affinity', 'annotation'],
    });
  });

  it('names a pod with generateName by its prefix', () => {
    const object = { metadata: { generateName: 'web-', labels: { app: 'web' } }, spec: {} };
    expect(admitMutation(request({ object }), state(RULES), OPTS).event?.fields.pod).toBe('team/web-*');
  });

  it.each([
    { what: 'no rule in the namespace', req: request({ namespace: 'elsewhere' }), st: state(RULES) },
    {
      what: 'podSelector does not match',
      req: request({ object: { metadata: { labels: { app: 'db' } }, spec: {} } }),
      st: state(RULES),
    },
    {
      what: 'excluded namespace',
      req: request({ namespace: 'kube-system' }),
      st: state([rule('kube-system', 'x', ['n1'])]),
    },
    { what: 'pinned pod (validation judges it)', req: request({ object: pinned('n2') }), st: state(RULES) },
    {
      what: 'DaemonSet pod the controller already vouched for',
      req: request({
        userInfo: { username: DS_CONTROLLER },
        object: dsPod({ [DAEMONSET_ANNOTATION]: 'true' }),
      }),
      st: state(RULES),
    },
    { what: 'an UPDATE', req: request({ operation: 'UPDATE' }), st: state(RULES) },
    {
      what: 'not a pod',
      req: request({ kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, object: { x: 1 } }),
      st: state(RULES),
    },
  ])('$what → allowed, no patch', ({ req, st }) => {
    const r = admitMutation(req, st, OPTS);
    expect(r.result).toBe('allowed');
    expect(r.review.response).toEqual({ uid: 'uid-1', allowed: true });
  });

  it('before the cache is synced: allowed unsteered, with a warning', () => {
    const r = admitMutation(request(), state(RULES, false), OPTS);
    expect(r.review.response).toMatchObject({
      allowed: true,
      warnings: [expect.stringMatching(/not loaded yet/)],
    });
    expect(r.review.response.patch).toBeUndefined();
  });

  it('a pod object that is not a pod → explicit 400 denial with the uid', () => {
    const r = admitMutation(request({ object: { metadata: 'x', spec: {} } }), state(RULES), OPTS);
    expect(r.review.response).toMatchObject({ uid: 'uid-1', allowed: false, status: { code: 400 } });
  });
});

describe('admitMutation: DaemonSet pods', () => {
  const STEERED = ['/spec/schedulerName', '/spec/affinity', '/metadata/annotations'];
  const CLAIM_WARNING = 'not created by the DaemonSet controller: its NodeLoadRules apply as to any pod';
  it.each([
    {
      name: 'real controller (its ServiceAccount): vouched for, not steered',
      user: DS_CONTROLLER,
      object: dsPod(),
      paths: ['/metadata/annotations'],
      warnings: undefined,
    },
    {
      name: 'real controller (kube-controller-manager credentials)',
      user: 'system:kube-controller-manager',
      object: dsPod(),
      paths: ['/metadata/annotations'],
      warnings: undefined,
    },
    {
      name: 'spoofing user: steered like any pod, and told why',
      user: 'alice',
      object: dsPod(),
      paths: STEERED,
      warnings: [CLAIM_WARNING],
    },
    {
      name: 'no userInfo at all: steered',
      user: undefined,
      object: dsPod(),
      paths: STEERED,
      warnings: [CLAIM_WARNING],
    },
    {
      name: 'no owner, from the controller user: steered, nothing to vouch for',
      user: DS_CONTROLLER,
      object: { metadata: { labels: { app: 'web' } }, spec: {} },
      paths: STEERED,
      warnings: undefined,
    },
    {
      name: 'DaemonSet owner that is not the controller: steered',
      user: DS_CONTROLLER,
      object: dsPod(undefined, { ...DS_OWNER, controller: false }),
      paths: STEERED,
      warnings: undefined,
    },
    {
      name: 'another API group’s DaemonSet (e.g. OpenKruise): steered',
      user: DS_CONTROLLER,
      object: dsPod(undefined, { ...DS_OWNER, apiVersion: 'apps.kruise.io/v1alpha1' }),
      paths: STEERED,
      warnings: undefined,
    },
  ])('$name', ({ user, object, paths, warnings }) => {
    const r = admitMutation(
      request({ object, ...(user ? { userInfo: { username: user } } : {}) }),
      state(RULES),
      OPTS,
    );
    expect(r.result).toBe('patched');
    expect(decodedPatch(r).map((o) => (o as { path: string }).path)).toEqual(paths);
    expect(r.review.response.warnings).toEqual(warnings);
  });

  it('vouching adds only the annotation, next to the pod’s own', () => {
    const r = admitMutation(
      request({ userInfo: { username: DS_CONTROLLER }, object: dsPod({ team: 'infra' }) }),
      state(RULES),
      OPTS,
    );
    expect(decodedPatch(r)).toEqual([
      { op: 'add', path: '/metadata/annotations/nodeload.example.com~1daemonset-verified', value: 'true' },
    ]);
    expect(r.event).toBeUndefined();
  });

  it('the steering log line names who claimed the DaemonSet owner', () => {
    const r = admitMutation(
      request({ userInfo: { username: 'alice' }, object: dsPod() }),
      state(RULES),
      OPTS,
    );
    expect(r.event).toMatchObject({
      msg: 'pod steered to its rules',
      level: 'info',
      fields: { daemonSetClaimedBy: 'alice' },
    });
  });

  it('an ordinary steered pod is logged at debug (one line per pod would flood the log under load)', () => {
    const r = admitMutation(request(), state(RULES), OPTS);
    expect(r.result).toBe('patched');
    expect(r.event).toMatchObject({ msg: 'pod steered to its rules', level: 'debug' });
  });
});

describe('admitValidation: the DaemonSet annotation is the webhook’s alone', () => {
  const vouched = { [DAEMONSET_ANNOTATION]: 'true' };
  const plain = (annotations?: Record<string, string>) => ({
    metadata: { name: 'web-1', labels: { app: 'web' }, ...(annotations ? { annotations } : {}) },
    spec: {},
  });
  it.each([
    {
      name: 'CREATE by the controller, vouched → allowed',
      user: DS_CONTROLLER,
      operation: 'CREATE',
      object: dsPod(vouched),
      old: undefined,
      refused: undefined,
    },
    {
      name: 'CREATE by a spoofing user with the annotation → refused',
      user: 'alice',
      operation: 'CREATE',
      object: dsPod(vouched),
      old: undefined,
      refused:
        'is set by nodeload\'s webhook only, on pods the DaemonSet controller creates; user "alice" may not set it',
    },
    {
      name: 'CREATE by the controller user without a DaemonSet owner → refused',
      user: DS_CONTROLLER,
      operation: 'CREATE',
      object: plain(vouched),
      old: undefined,
      refused: 'may not set it',
    },
    {
      name: 'CREATE with another value → refused',
      user: DS_CONTROLLER,
      operation: 'CREATE',
      object: dsPod({ [DAEMONSET_ANNOTATION]: 'yes' }),
      old: undefined,
      refused: 'may not set it',
    },
    {
      name: 'CREATE by a spoofing user without it → allowed',
      user: 'alice',
      operation: 'CREATE',
      object: dsPod(),
      old: undefined,
      refused: undefined,
    },
    {
      name: 'UPDATE adding it → refused',
      user: 'alice',
      operation: 'UPDATE',
      object: dsPod(vouched),
      old: dsPod(),
      refused: 'cannot be added or changed after the pod is created (user "alice")',
    },
    {
      name: 'UPDATE adding it, even by the controller → refused',
      user: DS_CONTROLLER,
      operation: 'UPDATE',
      object: dsPod(vouched),
      old: dsPod(),
      refused: 'cannot be added or changed',
    },
    {
      name: 'UPDATE changing its value → refused',
      user: 'alice',
      operation: 'UPDATE',
      object: dsPod({ [DAEMONSET_ANNOTATION]: 'x' }),
      old: dsPod(vouched),
      refused: 'cannot be added or changed',
    },
    {
      name: 'UPDATE keeping it (a label change) → allowed',
      user: 'alice',
      operation: 'UPDATE',
      object: dsPod({ ...vouched, team: 'a' }),
      old: dsPod(vouched),
      refused: undefined,
    },
    {
      name: 'UPDATE removing it → allowed (only loses the exemption)',
      user: 'alice',
      operation: 'UPDATE',
      object: dsPod(),
      old: dsPod(vouched),
      refused: undefined,
    },
  ] as const)('$name', ({ user, operation, object, old, refused }) => {
    const r = admitValidation(
      request({ userInfo: { username: user }, operation, object, ...(old ? { oldObject: old } : {}) }),
      state(RULES),
      OPTS,
    );
    if (refused === undefined) {
      expect(r.review.response).toEqual({ uid: 'uid-1', allowed: true });
      return;
    }
    expect(r.review.response).toMatchObject({ allowed: false, status: { code: 403, reason: 'Forbidden' } });
    expect(r.review.response.status?.message).toContain(`annotation ${DAEMONSET_ANNOTATION} `);
    expect(r.review.response.status?.message).toContain(refused);
    expect(r.event).toMatchObject({ msg: 'DaemonSet annotation refused', fields: { user, operation } });
  });
});

const OPTED_OUT = { [OPT_OUT_LABEL]: 'disabled' };
const PVC_VOLUME = { name: 'd', persistentVolumeClaim: { claimName: 'data' } };
const GPU_CLAIMS = [{ name: 'gpu' }];
const GPU_REASON = 'DynamicResources: pod uses ResourceClaim "gpu"';

describe('admitMutation: opt-out label', () => {
  it.each([
    {
      what: 'pod labelled disabled',
      req: request({
        object: { metadata: { name: 'web-1', labels: { app: 'web', ...OPTED_OUT } }, spec: {} },
      }),
      st: state(RULES),
      steered: false,
    },
    {
      what: 'namespace labelled disabled (from the namespace cache)',
      req: request(),
      st: state(RULES, true, { team: OPTED_OUT }),
      steered: false,
    },
    {
      what: 'opted-out pod while the cache is not ready: no "not loaded" warning either',
      req: request({
        object: { metadata: { name: 'web-1', labels: { app: 'web', ...OPTED_OUT } }, spec: {} },
      }),
      st: state(RULES, false),
      steered: false,
    },
    {
      what: 'opted-out pod with resource claims: no not-steered annotation, no Event',
      req: request({
        object: {
          metadata: { name: 'web-1', labels: { app: 'web', ...OPTED_OUT } },
          spec: { resourceClaims: GPU_CLAIMS },
        },
      }),
      st: state(RULES),
      steered: false,
    },
    {
      what: 'pod labelled with another value',
      req: request({
        object: { metadata: { name: 'web-1', labels: { app: 'web', [OPT_OUT_LABEL]: 'enabled' } }, spec: {} },
      }),
      st: state(RULES),
      steered: true,
    },
    {
      what: 'another namespace labelled disabled',
      req: request(),
      st: state(RULES, true, { elsewhere: OPTED_OUT }),
      steered: true,
    },
    {
      what: 'namespace not in the cache (the namespaceSelector decides)',
      req: request(),
      st: { ...state(RULES), namespaceLabels: () => undefined },
      steered: true,
    },
  ])('$what → steered: $steered', ({ req, st, steered }) => {
    const r = admitMutation(req, st, OPTS);
    expect(r.notSteered).toBeUndefined();
    if (steered) {
      expect(r.result).toBe('patched');
      expect(decodedPatch(r)).toContainEqual({
        op: 'add',
        path: '/spec/schedulerName',
        value: 'nodeload-scheduler',
      });
    } else {
      expect(r.review.response).toEqual({ uid: 'uid-1', allowed: true });
    }
  });
});

describe('admitMutation: capability gate', () => {
  type Op = { op: string; path: string; value?: unknown };
  const gated = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'web-1' }) =>
    request({ object: { metadata: { labels: { app: 'web' }, ...metadata }, spec } });

  it.each([
    {
      what: 'resource claims beside a PVC',
      spec: { resourceClaims: GPU_CLAIMS, volumes: [PVC_VOLUME] },
      reasons: [GPU_REASON],
    },
    {
      what: 'resource claims',
      spec: { resourceClaims: [{ name: 'gpu' }] },
      reasons: ['DynamicResources: pod uses ResourceClaim "gpu"'],
    },
    {
      what: 'resource claims with an explicit default-scheduler',
      spec: { schedulerName: 'default-scheduler', resourceClaims: [{ name: 'gpu' }] },
      reasons: ['DynamicResources: pod uses ResourceClaim "gpu"'],
    },
  ])(
    "$what: scheduler kept, rules' nodes still applied, reasons annotated and reported",
    ({ spec, reasons }) => {
      const r = admitMutation(gated(spec), state(RULES), { ...OPTS, overrideExplicitScheduler: true });
      const patch = decodedPatch(r) as Op[];
      expect(patch.some((o) => o.path === '/spec/schedulerName')).toBe(false);
      expect(patch.map((o) => o.path)).toEqual(['/spec/affinity', '/metadata/annotations']);
      expect(patch[1]?.value).toEqual({
        [RULES_ANNOTATION]: 'only-n1',
        [NOT_STEERED_ANNOTATION]: reasons.join('; '),
      });
      expect(r.review.response.warnings).toEqual([
        expect.stringMatching(/^not steered to "nodeload-scheduler"/),
      ]);
      expect(r.notSteered).toEqual({ namespace: 'team', name: 'web-1', generateName: '', reasons });
      expect(r.event).toMatchObject({ msg: expect.stringMatching(/not steered/), fields: { reasons } });
    },
  );

  it.each([
    { what: 'a PVC', volumes: [PVC_VOLUME] },
    {
      what: 'a generic ephemeral volume',
      volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }],
    },
  ])('$what: steered (the scheduler binds volumes), nothing reported', ({ volumes }) => {
    const r = admitMutation(gated({ volumes }), state(RULES), OPTS);
    expect(decodedPatch(r)).toContainEqual({
      op: 'add',
      path: '/spec/schedulerName',
      value: 'nodeload-scheduler',
    });
    expect(r.notSteered).toBeUndefined();
    expect(r.review.response.warnings).toBeUndefined();
  });

  it('a generateName pod is expected by its prefix', () => {
    const r = admitMutation(
      gated({ resourceClaims: GPU_CLAIMS }, { generateName: 'web-' }),
      state(RULES),
      OPTS,
    );
    expect(r.notSteered).toMatchObject({ name: '', generateName: 'web-' });
  });

  it('a dry run gets the annotation but no Event (no pod will exist)', () => {
    const req = { ...gated({ resourceClaims: GPU_CLAIMS }), dryRun: true };
    const r = admitMutation(req, state(RULES), OPTS);
    expect(r.result).toBe('patched');
    expect(r.notSteered).toBeUndefined();
  });

  it('idempotent: the annotated pod needs no patch, yet is still expected (the Event is per pod)', () => {
    const annotations = {
      [RULES_ANNOTATION]: 'only-n1',
      [NOT_STEERED_ANNOTATION]: GPU_REASON,
    };
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }],
        },
      },
    };
    const r = admitMutation(
      gated({ resourceClaims: GPU_CLAIMS, affinity }, { name: 'web-1', annotations }),
      state(RULES),
      OPTS,
    );
    expect(r.result).toBe('allowed');
    expect(r.review.response.patch).toBeUndefined();
    expect(r.notSteered?.reasons).toEqual([annotations[NOT_STEERED_ANNOTATION]]);
  });

  it.each([
    {
      what: 'no rule covers the pod',
      req: request({
        namespace: 'elsewhere',
        object: { metadata: {}, spec: { resourceClaims: GPU_CLAIMS } },
      }),
    },
    {
      what: 'pinned pod',
      req: request({
        object: {
          metadata: { labels: { app: 'web' } },
          spec: { nodeName: 'n1', resourceClaims: GPU_CLAIMS },
        },
      }),
    },
  ])('$what: untouched, not reported', ({ req }) => {
    const r = admitMutation(req, state(RULES), OPTS);
    expect(r.review.response).toEqual({ uid: 'uid-1', allowed: true });
    expect(r.notSteered).toBeUndefined();
  });
});

describe('admitValidation', () => {
  it('denies a pod pinned to a forbidden node, naming the rule', () => {
    const r = admitValidation(request({ object: pinned('n2') }), state(RULES), OPTS);
    expect(r.result).toBe('denied');
    expect(r.review.response).toMatchObject({
      uid: 'uid-1',
      allowed: false,
      status: { code: 403, reason: 'Forbidden' },
    });
    expect(r.review.response.status?.message).toMatch(/NodeLoadRule "only-n1" does not allow node "n2"/);
  });

  it.each([
    { what: 'allowed node', object: pinned('n1') },
    { what: 'not covered by the rule', object: pinned('n2', { app: 'db' }) },
    { what: 'not pinned', object: { metadata: { labels: { app: 'web' } }, spec: {} } },
  ])('$what → allowed', ({ object }) => {
    expect(admitValidation(request({ object }), state(RULES), OPTS).review.response).toEqual({
      uid: 'uid-1',
      allowed: true,
    });
  });

  it.each([
    {
      what: 'forbidden node, label "true" → allowed, warned, counted',
      object: pinned('n2', { app: 'web', [BREAK_GLASS_LABEL]: 'true' }),
      ready: true,
      warnings: [`break-glass (${BREAK_GLASS_LABEL}): pinned to "n2" despite NodeLoadRule "only-n1"`],
      rules: ['only-n1'],
    },
    {
      what: 'rules not loaded yet, label "true" → allowed, warned, counted',
      object: pinned('n2', { app: 'web', [BREAK_GLASS_LABEL]: 'true' }),
      ready: false,
      warnings: [`break-glass (${BREAK_GLASS_LABEL}): pinned to "n2" despite unloaded rules`],
      rules: [],
    },
    {
      what: 'forbidden node, label "yes" → denied',
      object: pinned('n2', { app: 'web', [BREAK_GLASS_LABEL]: 'yes' }),
      ready: true,
      warnings: undefined,
      rules: undefined,
    },
    {
      what: 'allowed node, label "true" → allowed, nothing was broken',
      object: pinned('n1', { app: 'web', [BREAK_GLASS_LABEL]: 'true' }),
      ready: true,
      warnings: undefined,
      rules: undefined,
    },
  ])('break-glass: $what', ({ object, ready, warnings, rules }) => {
    const r = admitValidation(
      request({ object, userInfo: { username: 'oncall' } }),
      state(RULES, ready),
      OPTS,
    );
    const denied = object.spec.nodeName === 'n2' && warnings === undefined;
    expect(r.review.response.allowed).toBe(!denied);
    expect(r.review.response.warnings).toEqual(warnings);
    expect(r.breakGlass).toBe(rules === undefined ? undefined : true);
    if (rules !== undefined) {
      expect(r.event).toMatchObject({
        msg: 'pinned pod allowed by break-glass',
        level: 'warn',
        fields: { pod: 'team/p', node: 'n2', rules, user: 'oncall' },
      });
    }
  });

  it('break-glass is no opt-out of steering: an unpinned pod with the label is steered', () => {
    const object = { metadata: { name: 'w', labels: { app: 'web', [BREAK_GLASS_LABEL]: 'true' } }, spec: {} };
    expect(admitMutation(request({ object }), state(RULES), OPTS).result).toBe('patched');
  });

  it('refuses pinned pods while the rules are not loaded (validation holds)', () => {
    const r = admitValidation(request({ object: pinned('n1') }), state(RULES, false), OPTS);
    expect(r.review.response).toMatchObject({ allowed: false, status: { code: 503 } });
  });

  it('warns about a NodeLoadRule, never denies it', () => {
    const r = admitValidation(
      request({
        kind: { group: 'example.com', version: 'v1', kind: 'NodeLoadRule' },
        resource: { group: 'example.com', version: 'v1', resource: 'nodeloadrules' },
        object: { metadata: { name: 'new' }, spec: { allowedNodes: ['n1', 'n1', 'ghost'] } },
      }),
      state(RULES),
      OPTS,
    );
    expect(r.result).toBe('allowed');
    expect(r.review.response.allowed).toBe(true);
    expect(r.review.response.warnings).toEqual([
      'spec.allowedNodes: "n1" is listed 2 times',
      'spec.allowedNodes: no node named "ghost"',
    ]);
  });

  it('a NodeLoadRule review without an object → 400 denial', () => {
    const r = admitValidation(
      request({ kind: { group: 'example.com', version: 'v1', kind: 'NodeLoadRule' }, object: null }),
      state(RULES),
      OPTS,
    );
    expect(r.review.response).toMatchObject({ allowed: false, status: { code: 400 } });
  });
});

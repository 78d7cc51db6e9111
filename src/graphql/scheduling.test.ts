import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { rawNode, rawPod, rawRule } from '../../test/kit/objects.js';
import {
  createTestYoga,
  decisionFixture,
  explainedDecision,
  FakeScheduling,
  FixtureCluster,
  fixtureSources,
  post,
} from './testing.js';

const log = pino({ level: 'silent' });
let cluster: FixtureCluster;

afterEach(() => cluster?.stop());

function setup() {
  cluster = new FixtureCluster().add(
    rawNode('node-a'),
    rawNode('node-b'),
    // Not ready: the node lifecycle controller taints it (kube-scheduler has no readiness filter).
    rawNode('node-c', {
      ready: false,
      taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
    }),
    rawPod('shop', 'busy', { node: 'node-a', cpu: '2500m' }),
    rawPod('shop', 'web-1', { cpu: '500m', labels: { app: 'web' } }),
    rawPod('shop', 'huge', { cpu: '5', labels: { app: 'web' } }),
    rawRule('shop', 'web', { maxCPU: 70 }),
  );
  const scheduling = new FakeScheduling(cluster);
  const yoga = createTestYoga({ sources: fixtureSources(cluster, { scheduling }), log });
  return { yoga, scheduling };
}

describe('Query.decision', () => {
  it('explains every candidate node: verdict, reasons, score and the numbers', async () => {
    const { yoga, scheduling } = setup();
    const d = explainedDecision(cluster, 'shop', 'web-1');
    scheduling.record(d);
    const res = await post<{ decision: Record<string, unknown> & { candidates: Record<string, unknown>[] } }>(
      yoga,
      `query($id: ID!) { decision(id: $id) {
          id namespace pod result node message totalNodes feasibleNodes
          rules { namespace name maxCPU maxMemory burst { maxPlacements } }
          candidates { node verdict feasible rank score scores { plugin weight score }
            reasons { plugin code reason detail rule unresolvable }
            load { source cpuPercent cpuPercentAfter estimatedCpuMilli requestedCpuMilli allocatableCpuMilli stale }
            rules { rule allowed maxCPU cpuMargin } } } }`,
      { id: d.id },
    );
    expect(res.errors).toBeUndefined();
    const decision = res.data?.decision;
    expect(decision).toMatchObject({
      id: d.id,
      namespace: 'shop',
      pod: 'web-1',
      result: 'SCHEDULED',
      node: 'node-b',
      message: 'Successfully assigned shop/web-1 to node-b',
      totalNodes: 3,
      feasibleNodes: 1,
      rules: [{ namespace: 'shop', name: 'web', maxCPU: 70, maxMemory: 80, burst: null }],
    });
    const [b, a, c] = decision?.candidates ?? [];
    expect(b).toMatchObject({
      node: 'node-b',
      verdict: 'CHOSEN',
      feasible: true,
      rank: 1,
      reasons: [],
      load: {
        source: 'REQUESTS',
        cpuPercent: 0,
        cpuPercentAfter: 12.5,
        requestedCpuMilli: 0,
        allocatableCpuMilli: 4000,
        stale: false,
      },
      rules: [{ rule: 'web', allowed: true, maxCPU: 70, cpuMargin: 57.5 }],
    });
    // LoadAware: least loaded after placement, cpu 100 − 12.5, memory 100 − 1.5625 (128Mi of 8Gi),
    // equally weighted; weighed 5 in the total, which sums every Score plugin's part.
    const scores = b?.['scores'] as { plugin: string; weight: number; score: number }[];
    const loadAware = scores.find((s) => s.plugin === 'LoadAware');
    expect(loadAware?.weight).toBe(5);
    expect(loadAware?.score).toBeCloseTo(92.96875, 5);
    expect(scores.find((s) => s.plugin === 'TaintToleration')).toEqual({
      plugin: 'TaintToleration',
      weight: 3,
      score: 100,
    });
    expect(b?.['score']).toBeCloseTo(
      scores.reduce((t, s) => t + s.weight * s.score, 0),
      5,
    );
    // 2.5 + 0.5 of 4 CPU = 75% after placement: over the rule's 70%, yet kube's resource fit still passes.
    expect(a).toMatchObject({
      node: 'node-a',
      verdict: 'INFEASIBLE',
      feasible: false,
      rank: null,
      score: null,
      scores: [],
      reasons: [
        {
          plugin: 'NodeLoadRules',
          code: 'RuleCPUExceeded',
          reason: 'node(s) exceed rule web cpu 70%',
          detail: 'rule web: cpu 75% > maxCPU 70% with this pod',
          rule: 'web',
          unresolvable: false,
        },
      ],
      load: { cpuPercent: 62.5, cpuPercentAfter: 75 },
      rules: [{ rule: 'web', cpuMargin: -5 }],
    });
    expect(c).toMatchObject({
      node: 'node-c',
      verdict: 'INFEASIBLE',
      reasons: [
        {
          plugin: 'TaintToleration',
          code: 'TaintNotTolerated',
          reason: 'node(s) had untolerated taint(s)',
          detail: 'taint node.kubernetes.io/not-ready:NoSchedule not tolerated',
          rule: null,
          unresolvable: true,
        },
      ],
    });
  });

  it('filters candidates by verdict and says NOT_FOUND for an unknown id', async () => {
    const { yoga, scheduling } = setup();
    const d = explainedDecision(cluster, 'shop', 'huge');
    scheduling.record(d);
    const res = await post<{
      decision: { result: string; node: null; message: string; candidates: { node: string }[] };
    }>(
      yoga,
      `query($id: ID!) { decision(id: $id) { result node message candidates(verdict: INFEASIBLE) { node } } }`,
      { id: d.id },
    );
    expect(res.data?.decision).toEqual({
      result: 'UNSCHEDULABLE',
      node: null,
      message: '0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.',
      candidates: [{ node: 'node-a' }, { node: 'node-b' }, { node: 'node-c' }],
    });
    const missing = await post(yoga, '{ decision(id: "nope") { id } }');
    expect(missing.errors?.[0]).toMatchObject({
      message: 'decision "nope" not found',
      extensions: { code: 'NOT_FOUND' },
    });
  });

  it('shows which engine decided: the native loop or kube-scheduler through the extender', async () => {
    const { yoga, scheduling } = setup();
    const native = decisionFixture({ namespace: 'shop', pod: 'a', engine: 'native' });
    const viaExtender = decisionFixture({ namespace: 'shop', pod: 'b', engine: 'extender' });
    const rebuilt = decisionFixture({ namespace: 'shop', pod: 'c' });
    for (const d of [native, viaExtender, rebuilt]) scheduling.record(d);
    const engine = async (id: string) =>
      (
        await post<{ decision: { engine: string } }>(
          yoga,
          'query($id: ID!) { decision(id: $id) { engine } }',
          { id },
        )
      ).data?.decision.engine;
    expect([await engine(native.id), await engine(viaExtender.id), await engine(rebuilt.id)]).toEqual([
      'NATIVE',
      'EXTENDER',
      'NATIVE',
    ]);
  });
});

describe('Query.schedulingHistory', () => {
  function record(scheduling: FakeScheduling) {
    const made = [
      decisionFixture({ namespace: 'shop', pod: 'p1', node: 'node-a' }),
      decisionFixture({ namespace: 'shop', pod: 'p2', node: 'node-b' }),
      decisionFixture({ namespace: 'ops', pod: 'p3', node: 'node-a' }),
      decisionFixture({ namespace: 'shop', pod: 'p4', node: 'node-a', result: 'error' }),
      decisionFixture({ namespace: 'shop', pod: 'p5', node: 'node-a' }),
    ];
    for (const d of made) scheduling.record(d);
    return made;
  }

  const page = `query($ns: String, $node: String, $since: DateTime, $first: Int, $after: String, $result: DecisionResult) {
    schedulingHistory(namespace: $ns, node: $node, since: $since, first: $first, after: $after, result: $result) {
      items { pod } nextCursor hasNextPage } }`;

  type Page = {
    schedulingHistory: { items: { pod: string }[]; nextCursor: string | null; hasNextPage: boolean };
  };

  it('pages newest first through the filtered decisions', async () => {
    const { yoga, scheduling } = setup();
    record(scheduling);
    const first = await post<Page>(yoga, page, { ns: 'shop', node: 'node-a', first: 2 });
    expect(first.data?.schedulingHistory.items.map((i) => i.pod)).toEqual(['p5', 'p4']);
    expect(first.data?.schedulingHistory.hasNextPage).toBe(true);
    const second = await post<Page>(yoga, page, {
      ns: 'shop',
      node: 'node-a',
      first: 2,
      after: first.data?.schedulingHistory.nextCursor,
    });
    expect(second.data?.schedulingHistory).toEqual({
      items: [{ pod: 'p1' }],
      nextCursor: null,
      hasNextPage: false,
    });
  });

  it.each([
    { what: 'result', vars: { result: 'ERROR' }, pods: ['p4'] },
    { what: 'namespace', vars: { ns: 'ops' }, pods: ['p3'] },
  ])('filters by $what', async ({ vars, pods }) => {
    const { yoga, scheduling } = setup();
    record(scheduling);
    const res = await post<Page>(yoga, page, vars);
    expect(res.errors).toBeUndefined();
    expect(res.data?.schedulingHistory.items.map((i) => i.pod)).toEqual(pods);
  });

  it('narrows by since to decisions at or after the time', async () => {
    const { yoga, scheduling } = setup();
    const made = record(scheduling);
    const res = await post<Page>(yoga, page, { since: made[3]?.time });
    expect(res.data?.schedulingHistory.items.map((i) => i.pod)).toEqual(['p5', 'p4']);
  });

  it.each([
    {
      what: 'first above the maximum',
      vars: { first: 501 },
      field: 'first',
      message: 'first must be between 1 and 500, got 501',
    },
    {
      what: 'first below 1',
      vars: { first: 0 },
      field: 'first',
      message: 'first must be between 1 and 500, got 0',
    },
    {
      what: 'a malformed cursor',
      vars: { after: 'not a cursor!' },
      field: 'after',
      message: 'invalid cursor "not a cursor!"',
    },
  ])('refuses $what with BAD_USER_INPUT', async ({ vars, field, message }) => {
    const { yoga } = setup();
    const res = await post(yoga, page, vars);
    expect(res.errors?.[0]).toMatchObject({ message, extensions: { code: 'BAD_USER_INPUT', field } });
  });

  it('refuses a time that is not RFC 3339 with BAD_USER_INPUT', async () => {
    const { yoga } = setup();
    const res = await post(yoga, page, { since: 'yesterday' });
    expect(res.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toContain('DateTime must be an RFC 3339 string');
    const literal = await post(yoga, '{ schedulingHistory(since: "2026-13-45T00:00:00Z") { hasNextPage } }');
    expect(literal.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  });
});

describe('Query.pendingPods / schedulerStatus', () => {
  it('lists pending pods with their last reason and decision', async () => {
    const { yoga, scheduling } = setup();
    const d = explainedDecision(cluster, 'shop', 'huge');
    scheduling.record(d);
    scheduling.pending = [
      {
        namespace: 'shop',
        pod: 'web-1',
        queue: 'active',
        reason: '',
        since: '2026-11-29T11:00:00Z',
        attempts: 0,
      },
      {
        namespace: 'shop',
        pod: 'huge',
        queue: 'unschedulable',
        reason: d.message,
        since: '2026-11-29T11:00:00Z',
        attempts: 3,
      },
    ];
    const res = await post<{ pendingPods: unknown[] }>(
      yoga,
      '{ pendingPods(namespace: "shop") { namespace name queue reason attempts since lastDecision { id } pod { requests { cpu } } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.pendingPods).toEqual([
      {
        namespace: 'shop',
        name: 'huge',
        queue: 'UNSCHEDULABLE',
        reason: '0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.',
        attempts: 3,
        since: '2026-11-29T11:00:00Z',
        lastDecision: { id: d.id },
        pod: { requests: { cpu: '5' } },
      },
      {
        namespace: 'shop',
        name: 'web-1',
        queue: 'ACTIVE',
        reason: null,
        attempts: 0,
        since: '2026-11-29T11:00:00Z',
        lastDecision: null,
        pod: { requests: { cpu: '500m' } },
      },
    ]);
  });

  it("reports the scheduler's status", async () => {
    const { yoga, scheduling } = setup();
    scheduling.record(decisionFixture({ namespace: 'shop', pod: 'x' }));
    scheduling.statusView = {
      ...scheduling.statusView,
      bound: 7,
      queues: { active: 1, backoff: 2, unschedulable: 3, inFlight: 0 },
    };
    const res = await post<{ schedulerStatus: unknown }>(
      yoga,
      '{ schedulerStatus { schedulerName leader cacheSynced bound historySize startedAt queues { active backoff unschedulable inFlight } } }',
    );
    expect(res.data?.schedulerStatus).toEqual({
      schedulerName: 'nodeload-scheduler',
      leader: true,
      cacheSynced: true,
      bound: 7,
      historySize: 1,
      startedAt: null,
      queues: { active: 1, backoff: 2, unschedulable: 3, inFlight: 0 },
    });
  });
});

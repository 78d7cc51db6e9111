// Who sees what through GraphQL: each kind of data behind its permission (src/server/access.ts), lists
// across namespaces filtered and said so in extensions, one namespace asked for without the permission
// FORBIDDEN with the permission named, streams authorized at subscribe time and filtered per event.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { IN_PROCESS_URL, sseSubscribe } from '../../test/kit/graphql.js';
import { rawNode, rawPod, rawRule } from '../../test/kit/objects.js';
import { RULE_GROUP } from '../rules/types.js';
import { type Access, PERMISSIONS } from '../server/access.js';
import { fakeUserPortAuth } from '../server/testing.js';
import {
  createTestYoga,
  decisionFixture,
  FakeScheduling,
  FixtureCluster,
  fixtureSources,
  post,
  until,
} from './testing.js';

const log = pino({ level: 'silent' });
let cluster: FixtureCluster;

afterEach(() => cluster?.stop());

const gate = fakeUserPortAuth({
  users: {
    // A namespace developer: pods and rules of shop only.
    shop: { name: 'shop-dev', can: ['list pods in shop', 'list nodeloadrules.example.com in shop'] },
    // Node operations: nodes only.
    nodes: { name: 'node-ops', can: ['list nodes'] },
    // The dashboard's read-only ClusterRole.
    viewer: {
      name: 'viewer',
      can: ['list pods', 'list nodeloadrules.example.com', 'list nodes', 'get /scheduler/status'],
    },
  },
});

function setup(user: 'shop' | 'nodes' | 'viewer') {
  cluster = new FixtureCluster().add(
    rawNode('node-a'),
    rawNode('node-b'),
    rawPod('shop', 'web-1', { node: 'node-a' }),
    rawPod('ops', 'agent', { node: 'node-a' }),
    rawPod('shop', 'waiting'),
    rawRule('shop', 'web', { maxCPU: 80 }),
    rawRule('ops', 'agents', { maxCPU: 90 }),
  );
  const scheduling = new FakeScheduling(cluster);
  const yoga = createTestYoga({ sources: fixtureSources(cluster, { scheduling }), log }, gate.accessOf(user));
  return { yoga, scheduling };
}

describe('GraphQL authorization', () => {
  it('names the rules group the permissions ask about', () => {
    expect(PERMISSIONS.listRules.group).toBe(RULE_GROUP);
  });

  it('lists only the readable namespaces and counts the others in extensions', async () => {
    const { yoga } = setup('shop');
    const res = await post<{ rules: { namespace: string; name: string }[] }>(
      yoga,
      '{ rules { namespace name } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.rules).toEqual([{ namespace: 'shop', name: 'web' }]);
    expect(res).toMatchObject({
      extensions: {
        authorization: {
          omittedNamespaces: 1,
          omitted: [{ permission: 'nodeloadrules.example.com list', namespaces: 1 }],
        },
      },
    });
    const viewer = await post(setup('viewer').yoga, '{ rules { name } }');
    expect(viewer).not.toHaveProperty('extensions');
  });

  it('answers FORBIDDEN naming the permission for one namespace asked for without it', async () => {
    const { yoga } = setup('shop');
    for (const [query, permission] of [
      ['{ rules(namespace: "ops") { name } }', 'nodeloadrules.example.com list in ops'],
      ['{ rule(namespace: "ops", name: "agents") { name } }', 'nodeloadrules.example.com list in ops'],
      ['{ pendingPods(namespace: "ops") { name } }', 'pods list in ops'],
      ['{ schedulingHistory(namespace: "ops") { items { id } } }', 'pods list in ops'],
      [
        '{ simulateRule(namespace: "ops", name: "x", spec: { maxCPU: 50 }) { exists } }',
        'nodeloadrules.example.com get in ops',
      ],
      ['{ nodes { name } }', 'nodes list'],
      ['{ node(name: "node-a") { name } }', 'nodes list'],
      ['{ schedulerStatus { bound } }', 'get /scheduler/status'],
    ] as const) {
      const res = await post(yoga, query);
      expect(res.data, query).toBeNull();
      expect(res.errors, query).toEqual([
        expect.objectContaining({
          message: `forbidden: user "shop-dev" lacks ${permission}`,
          extensions: { code: 'FORBIDDEN', permission },
        }),
      ]);
    }
    // A rule that does not exist in a namespace one may not read: FORBIDDEN, not NOT_FOUND (no existence leak).
    const missing = await post(yoga, '{ rule(namespace: "ops", name: "nope") { name } }');
    expect(missing.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
  });

  it("filters a node's pods to readable namespaces, and a rule verdict's node load without `list nodes`", async () => {
    const nodeOps = await post<{ node: { pods: unknown[] } }>(
      setup('nodes').yoga,
      '{ node(name: "node-a") { name pods { namespace name } } }',
    );
    expect(nodeOps.data?.node.pods).toEqual([]);
    expect(nodeOps.extensions).toEqual({
      authorization: { omittedNamespaces: 2, omitted: [{ permission: 'pods list', namespaces: 2 }] },
    });
    cluster.stop();
    const shop = await post<{ rules: { evaluation: { eligible: { node: string; load: unknown }[] } }[] }>(
      setup('shop').yoga,
      '{ rules(namespace: "shop") { evaluation { eligible { node load { cpuPercent } } } } }',
    );
    expect(shop.errors).toBeUndefined();
    expect(shop.data?.rules[0]?.evaluation.eligible.map((v) => v.load)).toEqual([null, null]);
    expect(shop.extensions).toEqual({
      authorization: { omittedNamespaces: 0, omitted: [{ permission: 'nodes list' }] },
    });
  });

  it("fills a history page with the readable namespaces' decisions and hides a decision of another", async () => {
    const { yoga, scheduling } = setup('shop');
    const decisions = ['shop', 'ops', 'ops', 'shop', 'ops', 'shop'].map((namespace, i) =>
      decisionFixture({ namespace, pod: `p${i}` }),
    );
    for (const d of decisions) scheduling.record(d);
    type Page = { schedulingHistory: { items: { pod: string }[]; nextCursor: string | null } };
    const page = `query($after: String) { schedulingHistory(first: 2, after: $after) { items { pod } nextCursor } }`;
    const first = await post<Page>(yoga, page);
    expect(first.data?.schedulingHistory.items.map((d) => d.pod)).toEqual(['p5', 'p3']);
    const second = await post<Page>(yoga, page, { after: first.data?.schedulingHistory.nextCursor });
    expect(second.data?.schedulingHistory).toEqual({ items: [{ pod: 'p0' }], nextCursor: null });
    expect(first.extensions).toMatchObject({ authorization: { omittedNamespaces: 1 } });

    const hidden = await post(yoga, 'query($id: ID!) { decision(id: $id) { pod } }', {
      id: decisions[1]?.id,
    });
    expect(hidden.errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN', permission: 'pods list in ops' });
    const shown = await post(yoga, 'query($id: ID!) { decision(id: $id) { pod } }', { id: decisions[0]?.id });
    expect(shown.data).toEqual({ decision: { pod: 'p0' } });
  });

  it('answers UNAVAILABLE when a review cannot be made', async () => {
    cluster = new FixtureCluster().add(rawNode('node-a'));
    const down: Access = {
      userName: 'alice',
      key: 'alice',
      allowed: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:443')),
      peek: () => undefined,
    };
    const res = await post(
      createTestYoga({ sources: fixtureSources(cluster), log }, down),
      '{ nodes { name } }',
    );
    expect(res.errors).toEqual([
      expect.objectContaining({
        message: 'authorization unavailable: the SubjectAccessReview could not be made',
        extensions: { code: 'UNAVAILABLE' },
      }),
    ]);
  });

  it('lists pending pods of readable namespaces only', async () => {
    const { yoga, scheduling } = setup('shop');
    const since = new Date(0).toISOString();
    scheduling.pending = [
      { namespace: 'ops', pod: 'agent-2', queue: 'active', reason: '', since, attempts: 0 },
      { namespace: 'shop', pod: 'waiting', queue: 'active', reason: '', since, attempts: 0 },
    ];
    const res = await post<{ pendingPods: unknown[] }>(yoga, '{ pendingPods { namespace name } }');
    expect(res.data?.pendingPods).toEqual([{ namespace: 'shop', name: 'waiting' }]);
  });
});

describe('GraphQL subscriptions and authorization', () => {
  it('streams only the decisions of readable namespaces, and refuses a namespace without the permission', async () => {
    const { yoga, scheduling } = setup('shop');
    const refused = await sseSubscribe(
      yoga,
      IN_PROCESS_URL,
      'subscription { schedulingEvents(namespace: "ops") { pod } }',
    );
    expect(await refused.next()).toMatchObject({
      errors: [{ extensions: { code: 'FORBIDDEN', permission: 'pods list in ops' } }],
    });
    await refused.close();

    const sub = await sseSubscribe(
      yoga,
      IN_PROCESS_URL,
      'subscription { schedulingEvents { namespace pod } }',
    );
    const first = sub.next();
    await until(() => scheduling.bus.listenerCount('decision') === 1, 'subscription listening');
    for (const [namespace, pod] of [
      ['ops', 'o1'],
      ['shop', 's1'],
      ['other', 'x1'],
      ['shop', 's2'],
    ] as const) {
      scheduling.record(decisionFixture({ namespace, pod }));
    }
    expect(await first).toEqual({ data: { schedulingEvents: { namespace: 'shop', pod: 's1' } } });
    expect(await sub.next()).toEqual({ data: { schedulingEvents: { namespace: 'shop', pod: 's2' } } });
    await sub.close();
  });

  it("never shares one user's subscription execution with another's", async () => {
    const { yoga: shopYoga, scheduling } = setup('shop');
    const sources = fixtureSources(cluster, { scheduling });
    const viewerYoga = createTestYoga({ sources, log }, gate.accessOf('viewer'));
    const query = 'subscription { schedulingEvents { pod } }';
    const shop = await sseSubscribe(shopYoga, IN_PROCESS_URL, query);
    const viewer = await sseSubscribe(viewerYoga, IN_PROCESS_URL, query);
    const [shopFirst, viewerFirst] = [shop.next(), viewer.next()];
    await until(() => scheduling.bus.listenerCount('decision') === 2, 'two executions listening');
    scheduling.record(decisionFixture({ namespace: 'ops', pod: 'o1' }));
    scheduling.record(decisionFixture({ namespace: 'shop', pod: 's1' }));
    expect(await viewerFirst).toEqual({ data: { schedulingEvents: { pod: 'o1' } } });
    expect(await shopFirst).toEqual({ data: { schedulingEvents: { pod: 's1' } } });
    await shop.close();
    await viewer.close();
  });

  it('needs `list nodes` for load updates', async () => {
    const { yoga } = setup('shop');
    const sub = await sseSubscribe(yoga, IN_PROCESS_URL, 'subscription { nodeLoadUpdates { node } }');
    expect(await sub.next()).toMatchObject({
      errors: [{ extensions: { code: 'FORBIDDEN', permission: 'nodes list' } }],
    });
    await sub.close();
  });
});

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { IN_PROCESS_URL, sseSubscribe } from '../../test/kit/graphql.js';
import { rawNode, rawPod } from '../../test/kit/objects.js';
import {
  createTestYoga,
  decisionFixture,
  FakeScheduling,
  FixtureCluster,
  fixtureSources,
  until,
} from './testing.js';

const log = pino({ level: 'silent' });
let cluster: FixtureCluster;

afterEach(() => cluster?.stop());

function setup() {
  cluster = new FixtureCluster().add(rawNode('node-a'), rawNode('node-b'));
  const scheduling = new FakeScheduling(cluster);
  const yoga = createTestYoga({ sources: fixtureSources(cluster, { scheduling }), log });
  return { yoga, scheduling };
}

describe('Subscription.schedulingEvents over SSE', () => {
  it('streams each decision live to every subscriber whose filter matches', async () => {
    const { yoga, scheduling } = setup();
    const shop = await sseSubscribe(
      yoga,
      IN_PROCESS_URL,
      'subscription { schedulingEvents(namespace: "shop") { id pod node result } }',
    );
    const onB = await sseSubscribe(
      yoga,
      IN_PROCESS_URL,
      'subscription($n: String) { schedulingEvents(node: $n) { pod } }',
      {
        n: 'node-b',
      },
    );
    expect(shop.contentType).toContain('text/event-stream');
    const firstShop = shop.next();
    const firstB = onB.next();
    await until(() => scheduling.bus.listenerCount('decision') === 2, 'both subscriptions listening');

    const burst = [
      decisionFixture({ namespace: 'shop', pod: 'p1', node: 'node-a' }),
      decisionFixture({ namespace: 'ops', pod: 'p2', node: 'node-b' }),
      decisionFixture({
        namespace: 'shop',
        pod: 'p3',
        node: 'node-b',
        result: 'unschedulable',
        message: '0/2 nodes are available.',
      }),
    ];
    for (const d of burst) scheduling.record(d);

    expect(await firstShop).toEqual({
      data: { schedulingEvents: { id: burst[0]?.id, pod: 'p1', node: 'node-a', result: 'SCHEDULED' } },
    });
    expect(await shop.next()).toEqual({
      data: { schedulingEvents: { id: burst[2]?.id, pod: 'p3', node: 'node-b', result: 'UNSCHEDULABLE' } },
    });
    expect(await firstB).toEqual({ data: { schedulingEvents: { pod: 'p2' } } });
    expect(await onB.next()).toEqual({ data: { schedulingEvents: { pod: 'p3' } } });

    await shop.close();
    await onB.close();
    await until(
      () => scheduling.bus.listenerCount('decision') === 0,
      'listeners removed when clients go away',
    );
  });

  it('answers a subscription that fails validation with an error, not a stream', async () => {
    const { yoga } = setup();
    const res = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { schedulingEvents(bogus: 1) { id } }' }),
    });
    const text = await res.text();
    expect(text).toContain('Unknown argument \\"bogus\\"');
  });
});

describe('Subscription.nodeLoadUpdates', () => {
  it('streams load changes of the named nodes as the tracker computes them', async () => {
    const { yoga } = setup();
    const sub = await sseSubscribe(
      yoga,
      IN_PROCESS_URL,
      'subscription { nodeLoadUpdates(names: ["node-a"]) { node removed load { cpuPercent podCount } } }',
    );
    const first = sub.next();
    await until(() => cluster.loads.bus.listenerCount('load') === 1, 'subscription listening');
    cluster.add(
      rawPod('shop', 'elsewhere', { node: 'node-b', cpu: '1' }),
      rawPod('shop', 'here', { node: 'node-a', cpu: '2' }),
    );
    expect(await first).toEqual({
      data: { nodeLoadUpdates: { node: 'node-a', removed: false, load: { cpuPercent: 50, podCount: 1 } } },
    });
    cluster.remove(rawNode('node-a'));
    expect(await sub.next()).toEqual({
      data: { nodeLoadUpdates: { node: 'node-a', removed: true, load: null } },
    });
    await sub.close();
  });
});

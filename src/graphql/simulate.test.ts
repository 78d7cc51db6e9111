import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { rawNode, rawPod, rawRule } from '../../test/kit/objects.js';
import { createTestYoga, FixtureCluster, fixtureSources, post } from './testing.js';

const log = pino({ level: 'silent' });
let cluster: FixtureCluster;

afterEach(() => cluster?.stop());

const SIMULATE = `query($ns: String!, $name: String!, $spec: RuleSpecInput!) {
  simulateRule(namespace: $ns, name: $name, spec: $spec) {
    namespace name exists eligibleBefore eligibleAfter
    spec { maxCPU maxMemory allowedNodes podSelector { matchLabels { key value } } }
    nodesBecomingEligible
    nodesBecomingIneligible { node reasons }
    pendingPodsBecomingSchedulable { namespace pod node message }
    pendingPodsBecomingUnschedulable { namespace pod node message }
    runningPodsBreaching { namespace pod node reasons }
  } }`;

/** a: 50% CPU, b: 25%; rule web allows only node-b; a pending web pod asks for 1.5 CPU (37.5%). */
function setup() {
  cluster = new FixtureCluster().add(
    rawNode('node-a'),
    rawNode('node-b'),
    rawPod('shop', 'web-1', { node: 'node-a', cpu: '2', labels: { app: 'web' } }),
    rawPod('shop', 'web-2', { node: 'node-b', cpu: '1', labels: { app: 'web' } }),
    rawPod('shop', 'pending', { cpu: '1500m', labels: { app: 'web' } }),
    rawRule('shop', 'web', { maxCPU: 80, allowedNodes: ['node-b'] }),
  );
  const before = JSON.stringify([...cluster.cache.rules.values()].map((e) => e.rule));
  const yoga = createTestYoga({ sources: fixtureSources(cluster), log });
  return {
    yoga,
    unchanged: () => JSON.stringify([...cluster.cache.rules.values()].map((e) => e.rule)) === before,
  };
}

describe('Query.simulateRule', () => {
  it('reports nodes, pending pods and running pods a changed spec would affect, changing nothing', async () => {
    const { yoga, unchanged } = setup();
    // Opening node-a and lowering maxCPU to 40: node-a (50%) is still out, on load now; node-b (25%) stays in.
    const res = await post(yoga, SIMULATE, { ns: 'shop', name: 'web', spec: { maxCPU: 40 } });
    expect(res.errors).toBeUndefined();
    expect(res.data?.['simulateRule']).toEqual({
      namespace: 'shop',
      name: 'web',
      exists: true,
      eligibleBefore: 1,
      eligibleAfter: 1,
      spec: { maxCPU: 40, maxMemory: 80, allowedNodes: [], podSelector: null },
      nodesBecomingEligible: [],
      nodesBecomingIneligible: [],
      pendingPodsBecomingSchedulable: [],
      // It fits node-b now (62.5% ≤ 80%); at 40% neither node-b (62.5%) nor node-a (87.5%) would take it.
      pendingPodsBecomingUnschedulable: [
        {
          namespace: 'shop',
          pod: 'pending',
          node: null,
          message: '0/2 nodes are available: 2 node(s) exceed rule web cpu 40%.',
        },
      ],
      runningPodsBreaching: [
        { namespace: 'shop', pod: 'web-1', node: 'node-a', reasons: ['cpu 50% > maxCPU 40%'] },
      ],
    });
    expect(unchanged()).toBe(true);
  });

  it('simulates a rule that does not exist yet', async () => {
    const { yoga } = setup();
    const res = await post<{ simulateRule: Record<string, unknown> }>(yoga, SIMULATE, {
      ns: 'shop',
      name: 'new-rule',
      spec: { maxCPU: 30, podSelector: { matchLabels: [{ key: 'app', value: 'web' }] } },
    });
    expect(res.errors).toBeUndefined();
    expect(res.data?.simulateRule).toMatchObject({
      exists: false,
      eligibleBefore: null,
      eligibleAfter: 1,
      spec: { maxCPU: 30, podSelector: { matchLabels: [{ key: 'app', value: 'web' }] } },
      nodesBecomingIneligible: [{ node: 'node-a', reasons: ['cpu 50% > maxCPU 30%'] }],
      runningPodsBreaching: [{ pod: 'web-1', node: 'node-a' }],
    });
  });

  it.each([
    {
      what: 'maxCPU above 100',
      spec: { maxCPU: 150 },
      field: 'spec.maxCPU',
      message: 'spec.maxCPU must be between 0 and 100, got 150',
    },
    {
      what: 'negative maxMemory',
      spec: { maxMemory: -5 },
      field: 'spec.maxMemory',
      message: 'spec.maxMemory must be between 0 and 100, got -5',
    },
    {
      what: 'an invalid node name',
      spec: { allowedNodes: ['Node_A'] },
      field: 'spec.allowedNodes',
      message:
        "'Node_A' is not a valid node name: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
    },
    {
      what: 'In without values',
      spec: { nodeSelector: { matchExpressions: [{ key: 'zone', operator: 'In' }] } },
      field: 'spec.nodeSelector.matchExpressions[0].values',
      message:
        'spec.nodeSelector.matchExpressions[0]: operators In and NotIn require a non-empty values list',
    },
    {
      what: 'Exists with values',
      spec: { podSelector: { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['x'] }] } },
      field: 'spec.podSelector.matchExpressions[0].values',
      message: 'spec.podSelector.matchExpressions[0]: operators Exists and DoesNotExist must not have values',
    },
    {
      what: 'a zero burst window',
      spec: { burst: { maxPlacements: 2, windowSeconds: 0 } },
      field: 'spec.burst.windowSeconds',
      message: 'spec.burst.windowSeconds must be between 1 and 3600, got 0',
    },
  ])('refuses $what with BAD_USER_INPUT naming the field', async ({ spec, field, message }) => {
    const { yoga } = setup();
    const res = await post(yoga, SIMULATE, { ns: 'shop', name: 'web', spec });
    expect(res.data).toBeNull();
    expect(res.errors).toEqual([
      expect.objectContaining({ message, extensions: { code: 'BAD_USER_INPUT', field } }),
    ]);
  });

  it('refuses an invalid rule name, and a non-integer percentage before resolving', async () => {
    const { yoga } = setup();
    const badName = await post(yoga, SIMULATE, { ns: 'shop', name: 'Web Rule', spec: {} });
    expect(badName.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'name' });
    const fraction = await post(yoga, SIMULATE, { ns: 'shop', name: 'web', spec: { maxCPU: 50.5 } });
    expect(fraction.errors?.[0]?.message).toContain('Int cannot represent non-integer value: 50.5');
  });
});

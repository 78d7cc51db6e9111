import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { rawNode, rawPod, rawRule } from '../../test/kit/objects.js';
import { createTestYoga, FixtureCluster, fixtureSources, post } from './testing.js';

const log = pino({ level: 'silent' });
let cluster: FixtureCluster;

afterEach(() => cluster?.stop());

const writtenStatus = {
  observedGeneration: 1,
  eligibleNodes: ['node-b'],
  eligibleCount: 1,
  ineligibleNodes: [{ node: 'node-a', reasons: ['cpu 75% > maxCPU 50%'] }],
  ineligibleCount: 1,
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'NodesEligible',
      message: '1 of 2 nodes eligible',
      lastTransitionTime: '2026-11-29T11:00:00Z',
      observedGeneration: 1,
    },
  ],
  lastEvaluationTime: '2026-11-29T11:59:00Z',
  suggestions: [{ node: 'node-b', headroom: 37 }],
};

function setup() {
  cluster = new FixtureCluster().add(
    rawNode('node-a'),
    rawNode('node-b'),
    rawPod('shop', 'web-1', { node: 'node-a', cpu: '2', labels: { app: 'web' }, priority: 10 }),
    rawPod('shop', 'web-2', { node: 'node-a', cpu: '1', labels: { app: 'web' } }),
    rawPod('shop', 'api-1', { node: 'node-a', cpu: '100m', labels: { app: 'api' } }),
    rawPod('shop', 'web-3', { node: 'node-b', cpu: '500m', labels: { app: 'web' } }),
    rawRule(
      'shop',
      'web',
      {
        maxCPU: 50,
        allowedNodes: ['node-a', 'node-b'],
        podSelector: { matchLabels: { app: 'web' } },
        burst: { maxPlacements: 5, windowSeconds: 60 },
      },
      writtenStatus,
    ),
    rawRule('ops', 'strict', { maxCPU: 10, maxMemory: 10 }),
  );
  return createTestYoga({ sources: fixtureSources(cluster), log });
}

describe('Query.rules / rule', () => {
  it('returns spec with defaults, the written status and the live evaluation with figures', async () => {
    const yoga = setup();
    const res = await post<{ rule: Record<string, unknown> }>(
      yoga,
      `{ rule(namespace: "shop", name: "web") {
          namespace name generation
          spec { maxCPU maxMemory allowedNodes podSelector { matchLabels { key value } matchExpressions { key } } nodeSelector { matchLabels { key } } burst { maxPlacements windowSeconds } }
          status { eligibleNodes eligibleCount ineligibleCount ineligibleNodes { node reasons } lastEvaluationTime
                   conditions { type status reason message lastTransitionTime } suggestions { node headroom } }
          evaluation { eligibleCount ineligibleCount
            eligible { node eligible allowed headroom load { cpuPercent } }
            ineligible { node allowed headroom reasons { code value threshold margin } load { cpuPercent } } }
          suggestions { node headroom }
          rebalanceHints { namespace rule pod from to reason }
      } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.rule).toEqual({
      namespace: 'shop',
      name: 'web',
      generation: 1,
      spec: {
        maxCPU: 50,
        maxMemory: 80,
        allowedNodes: ['node-a', 'node-b'],
        podSelector: { matchLabels: [{ key: 'app', value: 'web' }], matchExpressions: [] },
        nodeSelector: null,
        burst: { maxPlacements: 5, windowSeconds: 60 },
      },
      status: {
        eligibleNodes: ['node-b'],
        eligibleCount: 1,
        ineligibleCount: 1,
        ineligibleNodes: [{ node: 'node-a', reasons: ['cpu 75% > maxCPU 50%'] }],
        lastEvaluationTime: '2026-11-29T11:59:00Z',
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'NodesEligible',
            message: '1 of 2 nodes eligible',
            lastTransitionTime: '2026-11-29T11:00:00Z',
          },
        ],
        suggestions: [{ node: 'node-b', headroom: 37 }],
      },
      evaluation: {
        eligibleCount: 1,
        ineligibleCount: 1,
        eligible: [
          { node: 'node-b', eligible: true, allowed: true, headroom: 37.5, load: { cpuPercent: 12.5 } },
        ],
        ineligible: [
          {
            node: 'node-a',
            allowed: true,
            headroom: -27.5,
            reasons: [{ code: 'CPUThresholdExceeded', value: 77.5, threshold: 50, margin: 27.5 }],
            load: { cpuPercent: 77.5 },
          },
        ],
      },
      suggestions: [{ node: 'node-b', headroom: 37 }],
      // Covered pods only (api-1 is not web), lower priority first.
      rebalanceHints: [
        {
          namespace: 'shop',
          rule: 'web',
          pod: 'web-2',
          from: 'node-a',
          to: 'node-b',
          reason: 'node node-a: cpu 77.5% > maxCPU 50%',
        },
        {
          namespace: 'shop',
          rule: 'web',
          pod: 'web-1',
          from: 'node-a',
          to: 'node-b',
          reason: 'node node-a: cpu 77.5% > maxCPU 50%',
        },
      ],
    });
  });

  it('lists rules by namespace/name and filters by namespace', async () => {
    const yoga = setup();
    const all = await post<{ rules: { namespace: string; name: string; status: unknown }[] }>(
      yoga,
      '{ rules { namespace name status { eligibleCount } } }',
    );
    expect(all.data?.rules).toEqual([
      { namespace: 'ops', name: 'strict', status: null },
      { namespace: 'shop', name: 'web', status: { eligibleCount: 1 } },
    ]);
    const shop = await post<{ rules: { name: string }[] }>(yoga, '{ rules(namespace: "shop") { name } }');
    expect(shop.data?.rules.map((r) => r.name)).toEqual(['web']);
  });

  it('answers NOT_FOUND for an unknown rule', async () => {
    const yoga = setup();
    const res = await post(yoga, '{ rule(namespace: "shop", name: "nope") { name } }');
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect(res.errors?.[0]?.message).toBe('NodeLoadRule "shop/nope" not found');
  });

  it('serves suggestions and rebalance hints across rules', async () => {
    const yoga = setup();
    const res = await post<{ suggestions: unknown[]; rebalanceHints: { rule: string; pod: string }[] }>(
      yoga,
      `{ suggestions { namespace rule node headroom cpuPercent memoryPercent }
         rebalanceHints(namespace: "shop") { rule pod } }`,
    );
    expect(res.errors).toBeUndefined();
    // ops/strict (10%) has no eligible node: node-a is at 78%, node-b at 12.5%.
    expect(res.data?.suggestions).toEqual([
      {
        namespace: 'shop',
        rule: 'web',
        node: 'node-b',
        headroom: 37.5,
        cpuPercent: 12.5,
        memoryPercent: 1.6,
      },
    ]);
    expect(res.data?.rebalanceHints.map((h) => h.pod)).toEqual(['web-2', 'web-1']);
  });
});

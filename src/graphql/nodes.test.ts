import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { rawNode, rawPod, rawRule } from '../../test/kit/objects.js';
import type { RuleEvaluation } from '../rules/types.js';
import { createTestYoga, FixtureCluster, fixtureSources, post } from './testing.js';

const log = pino({ level: 'silent' });
let cluster: FixtureCluster;

afterEach(() => cluster?.stop());

/** a: 3 CPU of 4 requested (75%), b: 0.5 of 4 (12.5%, zone=b), c: idle but cordoned. */
function setup(evaluations?: Map<string, RuleEvaluation>) {
  cluster = new FixtureCluster().add(
    rawNode('node-a'),
    rawNode('node-b', { labels: { zone: 'b' } }),
    rawNode('node-c', { unschedulable: true }),
    rawPod('shop', 'web-1', { node: 'node-a', cpu: '1', memory: '1Gi', labels: { app: 'web' } }),
    rawPod('shop', 'web-2', { node: 'node-a', cpu: '1', memory: '1Gi', labels: { app: 'web' } }),
    rawPod('other', 'batch', { node: 'node-a', cpu: '1', memory: '1Gi' }),
    rawPod('shop', 'web-3', { node: 'node-b', cpu: '500m', memory: '512Mi', labels: { app: 'web' } }),
    rawPod('shop', 'done', { node: 'node-b', cpu: '2', phase: 'Succeeded' }),
    rawRule('shop', 'web', { maxCPU: 50, maxMemory: 80 }),
    rawRule('shop', 'zone-b', { nodeSelector: { matchLabels: { zone: 'b' } } }),
  );
  return createTestYoga({ sources: fixtureSources(cluster, evaluations ? { evaluations } : {}), log });
}

describe('Query.nodes', () => {
  it('lists every node by name with its load from the LoadTracker', async () => {
    const yoga = setup();
    const res = await post<{ nodes: Record<string, unknown>[] }>(
      yoga,
      `{ nodes { name ready schedulable podCount labels { key value }
         allocatable { cpuMilli memoryBytes cpu memory pods }
         load { cpuPercent memoryPercent source stale unavailable podCount requested { cpuMilli memoryBytes memory } usage { cpuMilli } } } }`,
    );
    expect(res.errors).toBeUndefined();
    const nodes = res.data?.nodes ?? [];
    expect(nodes.map((n) => n['name'])).toEqual(['node-a', 'node-b', 'node-c']);
    expect(nodes[0]).toMatchObject({
      ready: true,
      schedulable: true,
      podCount: 3,
      allocatable: { cpuMilli: 4000, memoryBytes: 8 * 2 ** 30, cpu: '4', memory: '8Gi', pods: 110 },
      load: {
        cpuPercent: 75,
        memoryPercent: 37.5,
        source: 'REQUESTS',
        stale: false,
        unavailable: false,
        podCount: 3,
        requested: { cpuMilli: 3000, memoryBytes: 3 * 2 ** 30, memory: '3Gi' },
        usage: null,
      },
    });
    // The Succeeded pod on node-b no longer counts.
    expect(nodes[1]).toMatchObject({
      podCount: 1,
      labels: [{ key: 'zone', value: 'b' }],
      load: { cpuPercent: 12.5 },
    });
    expect(nodes[2]).toMatchObject({ schedulable: false, podCount: 0 });
  });

  it('tells which rules allow a node and for which it is eligible', async () => {
    const yoga = setup();
    const res = await post<{
      nodes: { name: string; rules: Record<string, unknown>[]; eligibleOnly: { rule: string }[] }[];
    }>(
      yoga,
      `{ nodes { name rules { namespace rule allowed eligible headroom reasons { code message value threshold margin } }
                 eligibleOnly: rules(eligible: true) { rule } } }`,
    );
    expect(res.errors).toBeUndefined();
    const [a, b] = res.data?.nodes ?? [];
    expect(a?.rules).toEqual([
      {
        namespace: 'shop',
        rule: 'web',
        allowed: true,
        eligible: false,
        headroom: -25,
        reasons: [
          {
            code: 'CPUThresholdExceeded',
            message: 'cpu 75% > maxCPU 50%',
            value: 75,
            threshold: 50,
            margin: 25,
          },
        ],
      },
      {
        namespace: 'shop',
        rule: 'zone-b',
        allowed: false,
        eligible: false,
        headroom: 5,
        reasons: [
          {
            code: 'NodeSelectorMismatch',
            message: 'node labels do not match nodeSelector',
            value: null,
            threshold: null,
            margin: null,
          },
        ],
      },
    ]);
    expect(a?.eligibleOnly).toEqual([]);
    expect(b?.eligibleOnly.map((r) => r.rule)).toEqual(['web', 'zone-b']);
  });

  it("prefers the operator's evaluation, so views agree with the status it writes", async () => {
    // A verdict the live figures would not give: the operator's word is what the status says.
    const operatorSays: RuleEvaluation = {
      rule: 'web',
      namespace: 'shop',
      eligible: [],
      ineligible: [
        {
          node: 'node-b',
          eligible: false,
          headroom: -1,
          reasons: [{ code: 'LoadUnavailable', rule: 'web', message: 'from the operator' }],
        },
      ],
    };
    const yoga = setup(new Map([['shop/web', operatorSays]]));
    const res = await post<{
      node: { rules: { rule: string; eligible: boolean; reasons: { message: string }[] }[] };
    }>(yoga, `{ node(name: "node-b") { rules(namespace: "shop") { rule eligible reasons { message } } } }`);
    expect(res.data?.node.rules[0]).toEqual({
      rule: 'web',
      eligible: false,
      reasons: [{ message: 'from the operator' }],
    });
    // A node the operator has not evaluated yet is computed on the spot.
    expect(res.data?.node.rules[1]).toMatchObject({ rule: 'zone-b', eligible: true });
  });

  it('answers node(name) for a known node and NOT_FOUND otherwise', async () => {
    const yoga = setup();
    const ok = await post<{ node: { name: string; pods: { name: string }[] } }>(
      yoga,
      `{ node(name: "node-a") { name pods { name } } }`,
    );
    expect(ok.data?.node).toEqual({
      name: 'node-a',
      pods: [{ name: 'batch' }, { name: 'web-1' }, { name: 'web-2' }],
    });
    const missing = await post(yoga, `{ node(name: "nope") { name } }`);
    expect(missing.data).toBeNull();
    expect(missing.errors?.[0]).toMatchObject({
      message: 'node "nope" not found',
      extensions: { code: 'NOT_FOUND' },
    });
  });
});

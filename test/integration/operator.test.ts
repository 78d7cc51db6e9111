// The NodeLoadRule operator against the real control plane: status written by the elected leader,
// the API server's own validation of rules, status and Events following node load as pods are bound
// and deleted, and the original design's GET /operator/suggestions with real figures.
//
// The operator evaluates rules in every namespace (other test files may run gateways too), so every
// assertion is filtered by this file's namespace and node names.
import { readFileSync } from 'node:fs';
import { CoordinationV1Api, CustomObjectsApi, EventsV1Api } from '@kubernetes/client-node';
import { load as parseYaml } from 'js-yaml';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { LeaderElector } from '../../src/leader/lease.js';
import { operatorComponent } from '../../src/operator/component.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { httpCode, KubeRuleWriter } from '../../src/operator/kube.js';
import type { Operator } from '../../src/operator/operator.js';
import { eventBody, microTime, type Suggestion } from '../../src/operator/plan.js';
import { toRule } from '../../src/rules/rule.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION, type RuleStatus } from '../../src/rules/types.js';
import { createFakeNodes, describeApiError, isApiException } from '../cluster/nodes.js';
import {
  coreApi,
  createBoundPod,
  createNamespace,
  kubeConfig,
  removeTestResources,
  type TestNamespace,
  uniqueName,
  waitFor,
} from './context.js';

const EXAMPLE_RULE = new URL('../../manifests/examples/original-web-tier.yaml', import.meta.url);
const RULE = { group: RULE_GROUP, version: RULE_VERSION, plural: RULE_PLURAL };

interface RuleObject {
  metadata: { name: string; namespace: string; generation: number };
  status?: RuleStatus;
}

let ns: TestNamespace;
let leaseNamespace: string;
let leaseName: string;
let nodes: [string, string, string];
let gateway: Gateway;
let leader: LeaderElector;
let operator: Operator;

const custom = () => kubeConfig().makeApiClient(CustomObjectsApi);

async function readRule(name: string): Promise<RuleObject> {
  return (await custom().getNamespacedCustomObject({ ...RULE, namespace: ns.name, name })) as RuleObject;
}

async function createRule(body: Record<string, unknown>): Promise<void> {
  await custom().createNamespacedCustomObject({
    ...RULE,
    namespace: ns.name,
    body: { apiVersion: `${RULE_GROUP}/${RULE_VERSION}`, kind: 'NodeLoadRule', ...body },
  });
}

/** Waits for a status written for the rule's current generation that satisfies `check`. */
function waitForStatus(name: string, what: string, check: (s: RuleStatus) => boolean): Promise<RuleStatus> {
  return waitFor(`rule ${name}: ${what}`, async () => {
    const rule = await readRule(name);
    const s = rule.status;
    return s && s.observedGeneration === rule.metadata.generation && check(s) ? s : undefined;
  });
}

function bindPod(name: string, node: string, requests: { cpu: string; memory: string }): Promise<void> {
  return createBoundPod(ns.name, name, node, requests, { app: 'web' });
}

async function events(reason: string, node: string) {
  const list = await kubeConfig().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns.name });
  return list.items.filter((e) => e.reason === reason && e.related?.name === node);
}

async function suggestions(): Promise<Suggestion[]> {
  const res = await fetch(`http://127.0.0.1:${gateway.httpPort}/operator/suggestions`);
  expect(res.status).toBe(200);
  return ((await res.json()) as Suggestion[]).filter((s) => s.namespace === ns.name);
}

beforeAll(async () => {
  const kubeconfig = inject('kubeconfig');
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  ns = await createNamespace('it-operator');
  const prefix = uniqueName('it-op');
  nodes = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`];
  await createFakeNodes(
    kubeconfig,
    nodes.map((name) => ({ name, cpu: 4, memory: '8Gi', pods: 20 })),
  );
  leaseNamespace = uniqueName('it-op-lease');
  leaseName = uniqueName('nodeload');
  const config = parseConfig({
    kubeconfig,
    httpPort: 0,
    bindAddress: '127.0.0.1',
    // Reads the user port without a token (test/integration/authz.test.ts covers tokens).
    anonymousUserPort: true,
    leaderElect: true,
    namespace: leaseNamespace,
    leaseName,
    identity: uniqueName('it-operator'),
    installCrd: false,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
  });
  gateway = await startGateway(config, [
    (ctx) => {
      const component = operatorComponent(ctx);
      operator = component.operator;
      return component;
    },
  ]);
  leader = gateway.leader;
  await gateway.cache.ready();
});

afterAll(async () => {
  await gateway?.stop();
  await removeTestResources({ namespace: ns, nodes, extraNamespaces: [leaseNamespace] });
});

describe('operator', () => {
  it('is elected through a Lease in the configured namespace', async () => {
    expect(leader.isLeader()).toBe(true);
    const lease = await kubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: leaseName, namespace: leaseNamespace });
    expect(lease.spec?.holderIdentity).toBe(leader.identity);
    expect(String(lease.spec?.renewTime)).not.toBe('undefined');
  });

  it("writes status for the original design's example rule", async () => {
    const example = parseYaml(readFileSync(EXAMPLE_RULE, 'utf8')) as { metadata: { name: string } };
    await createRule({ ...example, metadata: { ...example.metadata, namespace: ns.name } });
    const status = await waitForStatus('web-tier', 'status written', () => true);
    const ready = status.conditions.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ type: 'Ready', observedGeneration: 1 });
    expect(['NodesEligible', 'NoEligibleNodes']).toContain(ready?.reason);
    expect(ready?.message).toMatch(/^\d+ of \d+ nodes eligible/);
    expect(status.lastEvaluationTime).toMatch(/^\d{4}-\d\d-\d\dT/);
    // allowedNodes names node-a and node-b only: our nodes are out, and say why.
    for (const node of nodes) {
      expect(status.eligibleNodes).not.toContain(node);
      expect(status.ineligibleNodes).toContainEqual({ node, reasons: ['not in allowedNodes'] });
    }
    expect(status.eligibleCount + status.ineligibleCount).toBeGreaterThanOrEqual(3);
  });

  it.each([
    { name: 'maxcpu-150', spec: { maxCPU: 150 }, field: 'spec.maxCPU', says: 'less than or equal to 100' },
    {
      name: 'negative-memory',
      spec: { maxMemory: -5 },
      field: 'spec.maxMemory',
      says: 'greater than or equal to 0',
    },
    { name: 'string-cpu', spec: { maxCPU: 'high' }, field: 'spec.maxCPU', says: 'must be of type integer' },
    {
      name: 'scalar-nodes',
      spec: { allowedNodes: 'node-a' },
      field: 'spec.allowedNodes',
      says: 'must be of type array',
    },
  ])(
    'the API server refuses an invalid rule ($name) with a clear message',
    async ({ name, spec, field, says }) => {
      const err = await createRule({ metadata: { name }, spec }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isApiException(err, 422), `created ${name}; expected 422 (${describeApiError(err)})`).toBe(true);
      const message = describeApiError(err);
      expect(message).toContain(field);
      expect(message).toContain(says);
    },
  );

  it('follows node load as pods are bound and deleted, with Events and real suggestions', async () => {
    const [a, b, c] = nodes;
    await createRule({
      metadata: { name: 'busy' },
      spec: { maxCPU: 50, maxMemory: 80, allowedNodes: [a, b] },
    });
    let status = await waitForStatus('busy', 'both allowed nodes eligible', (s) => s.eligibleCount === 2);
    expect(status.eligibleNodes).toEqual([a, b].sort());
    expect(status.ineligibleNodes).toContainEqual({ node: c, reasons: ['not in allowedNodes'] });
    expect(status.conditions[0]).toMatchObject({ type: 'Ready', status: 'True', reason: 'NodesEligible' });

    // 2.5 of 4 CPUs requested on a: 62.5% > 50%.
    await bindPod('heavy', a, { cpu: '2500m', memory: '1Gi' });
    // 1 CPU and 2 GiB of 8 on b: 25% cpu, 25% memory — eligible, with 25 points of headroom.
    await bindPod('light', b, { cpu: '1', memory: '2Gi' });
    status = await waitForStatus('busy', `${a} ineligible on cpu`, (s) => s.eligibleNodes.join() === b);
    expect(status.ineligibleNodes).toContainEqual({ node: a, reasons: ['cpu 62.5% > maxCPU 50%'] });
    expect(status.conditions[0]).toMatchObject({
      status: 'True',
      message: expect.stringMatching(/^1 of \d+ nodes eligible/),
    });

    const warned = await waitFor('a NodeIneligible Event', async () => {
      const found = await events('NodeIneligible', a);
      return found.length > 0 ? found : undefined;
    });
    expect(warned[0]).toMatchObject({
      type: 'Warning',
      action: 'Evaluate',
      reportingController: 'nodeload.example.com/operator',
      regarding: { kind: 'NodeLoadRule', name: 'busy', namespace: ns.name },
    });
    expect(warned[0]?.note).toContain('cpu 62.5% > maxCPU 50%');

    const busy = await waitFor('suggestions reflect the light pod', async () => {
      const rows = (await suggestions()).filter((s) => s.rule === 'busy');
      return rows.length === 1 && rows[0]?.cpuPercent === 25 ? rows : undefined;
    });
    expect(busy).toEqual([
      { node: b, rule: 'busy', namespace: ns.name, headroom: 25, cpuPercent: 25, memoryPercent: 25 },
    ]);
    // Hints name running pods only: KWOK moves the bound pod to Running shortly.
    const hints = await waitFor('a rebalancing hint for the heavy pod', () => {
      const found = operator.rebalanceHints().filter((h) => h.namespace === ns.name);
      return found.length > 0 ? found : undefined;
    });
    expect(hints).toEqual([expect.objectContaining({ rule: 'busy', pod: 'heavy', from: a, to: b })]);

    await coreApi().deleteNamespacedPod({ name: 'heavy', namespace: ns.name, gracePeriodSeconds: 0 });
    status = await waitForStatus('busy', `${a} eligible again`, (s) => s.eligibleCount === 2);
    expect(status.eligibleNodes).toEqual([a, b].sort());
    await waitFor('a NodeEligible Event', async () => (await events('NodeEligible', a)).length > 0);
    // The status above may have been written by another test file's gateway: wait for ours too.
    const rows = await waitFor('suggestions without the heavy pod', async () => {
      const found = (await suggestions()).filter((s) => s.rule === 'busy');
      return found.length === 2 ? found : undefined;
    });
    expect(rows).toEqual([
      { node: a, rule: 'busy', namespace: ns.name, headroom: 50, cpuPercent: 0, memoryPercent: 0 },
      { node: b, rule: 'busy', namespace: ns.name, headroom: 25, cpuPercent: 25, memoryPercent: 25 },
    ]);
  });

  // Which gateway writes a flap's status first is a race between this file's and other files' gateways,
  // so the series is driven here through the operator's writer itself: the API server's validation of
  // the Event it creates, of the series patch (count, MicroTime), and its 404 once the Event is gone.
  it('writes a repeated Event as a series on the first: count and lastObservedTime patched, note kept', async () => {
    await createRule({ metadata: { name: 'flapping' }, spec: { maxCPU: 50, allowedNodes: [nodes[0]] } });
    const raw = await readRule('flapping');
    const rule = toRule(raw);
    const writer = new KubeRuleWriter(kubeConfig());
    const spec = {
      type: 'Warning',
      reason: 'NodeIneligible',
      node: nodes[0],
      note: `node ${nodes[0]} is no longer eligible for rule flapping: cpu 62.5% > maxCPU 50%`,
    } as const;
    const first = eventBody(rule, spec, 'it-operator-series', Date.now());
    await writer.createEvent(first);
    const lastObservedTime = microTime(Date.now() + 1000);
    await writer.patchEventSeries(ns.name, first.metadata.name, { count: 2, lastObservedTime });
    const read = await kubeConfig()
      .makeApiClient(EventsV1Api)
      .readNamespacedEvent({ name: first.metadata.name, namespace: ns.name });
    expect(read.series?.count).toBe(2);
    expect(new Date(read.series?.lastObservedTime ?? 0).getTime()).toBe(Date.parse(lastObservedTime));
    expect(read.note).toBe(spec.note);
    expect(read.related?.name).toBe(nodes[0]);

    const gone = await writer
      .patchEventSeries(ns.name, `${first.metadata.name}x`, { count: 2, lastObservedTime })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(httpCode(gone)).toBe(404);
  });
});

describe('leader election', () => {
  it('a second instance follows; when the leader stops it releases the lease and the follower takes over', async () => {
    const second = new LeaderElector({
      kubeConfig: kubeConfig(),
      namespace: leaseNamespace,
      name: leaseName,
      identity: uniqueName('it-operator-second'),
      leaseDurationSeconds: 3,
      enabled: true,
      log: pino({ level: 'silent' }),
    });
    let started = 0;
    second.on('started-leading', () => {
      started++;
    });
    await second.start();
    try {
      expect(second.isLeader()).toBe(false);
      expect(second.leaderIdentity()).toBe(leader.identity);
      // The lease is 15 s long: only the release lets the follower in within a few seconds.
      await leader.stop();
      expect(leader.isLeader()).toBe(false);
      await waitFor('the follower to lead', () => second.isLeader(), { timeoutMs: 10_000 });
      expect(started).toBe(1);
      const lease = await kubeConfig()
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ name: leaseName, namespace: leaseNamespace });
      expect(lease.spec?.holderIdentity).toBe(second.identity);
      expect(lease.spec?.leaseTransitions).toBe(1);
    } finally {
      await second.stop();
    }
  });
});

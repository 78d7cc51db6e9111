// Node USAGE through the real aggregation layer: a test-only metrics.k8s.io/v1beta1 backend
// (test/fixtures/metrics-server.ts) registered with an APIService, polled by an in-process gateway
// through the kube-apiserver. Shows the load model end to end: metrics as the source, rule status
// following usage, pods bound after the sample counted as requests × factor until a sample sees them,
// and stale samples under both policies.
//
// The APIService v1beta1.metrics.k8s.io is cluster-wide, so this file runs on a private control plane
// of its own (usePrivateCluster): no other file's gateway ever sees the fixture.
import { CustomObjectsApi, EventsV1Api } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import type { NodeLoad } from '../../src/load/types.js';
import { operatorComponent } from '../../src/operator/component.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import type { EventObject, RuleWriter } from '../../src/operator/kube.js';
import type { Operator } from '../../src/operator/operator.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION, type RuleStatus } from '../../src/rules/types.js';
import { createFakeNodes } from '../cluster/nodes.js';
import { type FakeMetricsServer, startFakeMetricsServer } from '../fixtures/metrics-server.js';
import {
  coreApi,
  createBoundPod,
  createNamespace,
  kubeConfig,
  kubectl,
  provided,
  removeTestResources,
  type TestNamespace,
  uniqueName,
  usePrivateCluster,
  waitFor,
} from './context.js';

const RULE = { group: RULE_GROUP, version: RULE_VERSION, plural: RULE_PLURAL };
const RULE_NAME = 'usage';
const CPU_TOO_HIGH = 'cpu 80% > maxCPU 70%';
const GiB = 2 ** 30;
const LOW = { cpu: '1', memory: '2Gi' }; // 25% of 4 CPUs, 25% of 8 GiB
/**
 * Long enough that a fixed sample taken just before a bind stays fresh through every wait of the
 * estimate test (a 5 s window would make it a race); the stale cases use samples minutes old instead.
 */
const STALENESS_SECONDS = 60;

interface RuleObject {
  metadata: { generation: number };
  status?: RuleStatus;
}

let metrics: FakeMetricsServer;
let ns: TestNamespace;
let nodes: [string, string, string];
let leaseNamespace: string;
let gateway: Gateway;
let failClosed: Gateway | undefined;

const custom = () => kubeConfig().makeApiClient(CustomObjectsApi);

/** The status as the API server has it, once written for the rule's current generation and passing `check`. */
function waitForStatus(what: string, check: (s: RuleStatus) => boolean): Promise<RuleStatus> {
  return waitFor(`rule ${RULE_NAME}: ${what}`, async () => {
    const rule = (await custom().getNamespacedCustomObject({
      ...RULE,
      namespace: ns.name,
      name: RULE_NAME,
    })) as RuleObject;
    const s = rule.status;
    return s && s.observedGeneration === rule.metadata.generation && check(s) ? s : undefined;
  });
}

const isEligible = (node: string) => (s: RuleStatus) => s.eligibleNodes.includes(node);
const isTooBusy = (node: string) => (s: RuleStatus) =>
  !s.eligibleNodes.includes(node) &&
  s.ineligibleNodes.some((n) => n.node === node && n.reasons.join() === CPU_TOO_HIGH);

function waitForLoad(
  g: Gateway,
  node: string,
  what: string,
  check: (l: NodeLoad) => boolean,
): Promise<NodeLoad> {
  return waitFor(`${node}: ${what}`, () => {
    const load = g.loads.loadOf(node);
    return load && check(load) ? load : undefined;
  });
}

/** A sample time `secondsAgo` back, to the second as the API serialises it (so comparisons are exact). */
function sampleTime(secondsAgo: number): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000 - secondsAgo * 1000);
}

/** Waits until the gateway's cache holds exactly this sample (the next poll after setUsage). */
function waitForSample(g: Gateway, node: string, at: Date, cpuMilli: number): Promise<unknown> {
  return waitFor(`${node}: the sample of ${at.toISOString()} in the cache`, () => {
    const m = g.cache.metrics.get(node);
    return m !== undefined && Date.parse(m.timestamp) === at.getTime() && m.usage.cpuMilli === cpuMilli;
  });
}

function bindPod(name: string, node: string, requests: { cpu: string; memory: string }): Promise<void> {
  return createBoundPod(ns.name, name, node, requests);
}

const metricsCondition = (s: RuleStatus) => s.conditions.find((c) => c.type === 'MetricsAvailable');

/** The rule's Events of this reason, as written through the real API server. */
async function ruleEvents(reason: string): Promise<{ type: string | undefined; note: string | undefined }[]> {
  const list = await kubeConfig().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: ns.name });
  return list.items
    .filter((e) => e.reason === reason && e.regarding?.name === RULE_NAME)
    .map((e) => ({ type: e.type, note: e.note }));
}

/** Waits for the rule's first Event of this reason, then returns every one written (one expected). */
async function eventsOnceWritten(reason: string) {
  await waitFor(`a ${reason} Event`, async () => (await ruleEvents(reason)).length > 0);
  return ruleEvents(reason);
}

async function deletePod(name: string): Promise<void> {
  await coreApi().deleteNamespacedPod({ name, namespace: ns.name, gracePeriodSeconds: 0 });
}

/**
 * Keeps what the fail-closed gateway would write: it evaluates every rule in the cluster, and its
 * LoadUnavailable verdicts for every node without a sample (all other files' nodes) must not reach them.
 */
class DryRunWriter implements RuleWriter {
  readonly statuses = new Map<string, RuleStatus>();
  private seq = 0;

  async patchStatus(namespace: string, name: string, status: RuleStatus): Promise<string> {
    this.statuses.set(`${namespace}/${name}`, status);
    return `dry-run-${++this.seq}`;
  }

  async createEvent(_event: EventObject): Promise<void> {}

  async patchEventSeries(): Promise<void> {}
}

beforeAll(async () => {
  // metrics.k8s.io is cluster-wide: other files' gateways must not see this fixture.
  await usePrivateCluster();
  const kubeconfig = provided('kubeconfig');
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  metrics = await startFakeMetricsServer({ pkiDir: provided('pkiDir'), kubeconfig });
  ns = await createNamespace('it-metrics');
  const prefix = uniqueName('it-usage');
  nodes = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`];
  await createFakeNodes(
    kubeconfig,
    nodes.map((name) => ({ name, cpu: 4, memory: '8Gi', pods: 20 })),
  );
  for (const node of nodes) metrics.setUsage(node, LOW);

  leaseNamespace = uniqueName('it-metrics-lease');
  gateway = await startGateway(
    parseConfig({
      kubeconfig,
      httpPort: 0,
      bindAddress: '127.0.0.1',
      leaderElect: true,
      namespace: leaseNamespace,
      leaseName: uniqueName('nodeload'),
      identity: uniqueName('it-metrics'),
      installCrd: false,
      metricsPollSeconds: 1,
      metricsStalenessSeconds: STALENESS_SECONDS,
      logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
    }),
    [(ctx) => operatorComponent(ctx, {})],
  );
  await gateway.cache.ready();
  await custom().createNamespacedCustomObject({
    ...RULE,
    namespace: ns.name,
    body: {
      apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
      kind: 'NodeLoadRule',
      metadata: { name: RULE_NAME },
      spec: { maxCPU: 70, maxMemory: 90, allowedNodes: nodes },
    },
  });
});

afterAll(async () => {
  await failClosed?.stop();
  await gateway?.stop();
  await metrics?.stop();
  await removeTestResources({ namespace: ns, nodes, extraNamespaces: [leaseNamespace] });
});

describe('node usage from metrics.k8s.io through the aggregator', () => {
  it('is discovered and polled: the load source is metrics', async () => {
    const [a] = nodes;
    await waitFor('metrics.k8s.io served', () => gateway.cache.metricsServed);
    const load = await waitForLoad(gateway, a, 'load from metrics', (l) => l.source === 'metrics');
    expect(load).toMatchObject({
      source: 'metrics',
      metricsStale: false,
      unavailable: false,
      usage: { cpuMilli: 1000, memoryBytes: 2 * GiB, windowSeconds: 20 },
      effective: { cpuMilli: 1000, memoryBytes: 2 * GiB },
      cpuPercent: 25,
      memoryPercent: 25,
    });
    // The samples were fetched through the API server: the aggregator forwarded the admin user.
    expect(metrics.requests()).toContainEqual({ path: '/apis/metrics.k8s.io/v1beta1/nodes', user: 'admin' });
    const viaKubectl = JSON.parse(await kubectl(['get', '--raw', `/apis/metrics.k8s.io/v1beta1/nodes/${a}`]));
    expect(viaKubectl).toMatchObject({ kind: 'NodeMetrics', usage: LOW, window: '20s' });
  });

  it('rule status follows usage: over maxCPU is ineligible, back under is eligible again', async () => {
    const [a] = nodes;
    await waitForStatus('every node eligible', (s) => nodes.every((n) => s.eligibleNodes.includes(n)));

    metrics.setUsage(a, { cpu: '3200m', memory: '2Gi' });
    const status = await waitForStatus(`${a} over maxCPU`, isTooBusy(a));
    expect(status.ineligibleNodes).toContainEqual({ node: a, reasons: [CPU_TOO_HIGH] });
    expect(gateway.loads.loadOf(a)).toMatchObject({ source: 'metrics', cpuPercent: 80 });

    metrics.setUsage(a, LOW);
    await waitForStatus(`${a} eligible again`, isEligible(a));
    expect(gateway.loads.loadOf(a)).toMatchObject({ source: 'metrics', cpuPercent: 25 });
  });

  it('a pod bound after the sample or within its window counts as requests × 0.85 until a window follows its bind', async () => {
    const [, b] = nodes;
    // 2350m is 58.75%: eligible. A pod requesting 1 CPU adds an estimated 850m: 3200m, 80%.
    const before = sampleTime(1);
    metrics.setUsage(b, { cpu: '2350m', memory: '2Gi' }, before);
    await waitForSample(gateway, b, before, 2350);
    await waitForStatus(`${b} eligible at 58.75%`, isEligible(b));

    await bindPod('late', b, { cpu: '1', memory: '1Gi' });
    const estimated = await waitForLoad(gateway, b, 'estimate added', (l) => l.source === 'metrics+estimate');
    expect(estimated).toMatchObject({
      requested: { cpuMilli: 1000, memoryBytes: GiB },
      usage: { cpuMilli: 2350, memoryBytes: 2 * GiB, timestamp: before.toISOString().replace('.000Z', 'Z') },
      estimated: { cpuMilli: 850, memoryBytes: Math.round(GiB * 0.7) },
      estimatedPods: 1,
      effective: { cpuMilli: 3200, memoryBytes: 2 * GiB + Math.round(GiB * 0.7) },
      cpuPercent: 80,
      metricsStale: false,
    });
    let status = await waitForStatus(`${b} over maxCPU with the estimate`, isTooBusy(b));
    expect(status.ineligibleNodes).toContainEqual({ node: b, reasons: [CPU_TOO_HIGH] });

    // Deleted before any sample saw it: its estimate goes with it.
    await deletePod('late');
    await waitForLoad(
      gateway,
      b,
      'estimate gone with the pod',
      (l) => l.source === 'metrics' && l.podCount === 0,
    );
    status = await waitForStatus(`${b} eligible after the delete`, isEligible(b));

    // Bound again. A sample taken after the bind whose 20 s window began before it shows the pod's CPU
    // rate in part at most: the estimate stays (2500m measured + 850m, the safe side).
    const again = sampleTime(1);
    metrics.setUsage(b, { cpu: '2350m', memory: '2Gi' }, again);
    await waitForSample(gateway, b, again, 2350);
    await bindPod('measured', b, { cpu: '1', memory: '1Gi' });
    await waitForLoad(gateway, b, 'estimate added', (l) => l.source === 'metrics+estimate');
    metrics.setUsage(b, { cpu: '2500m', memory: '3Gi' });
    const partly = await waitForLoad(gateway, b, 'the live sample read', (l) => l.usage?.cpuMilli === 2500);
    expect(partly).toMatchObject({
      source: 'metrics+estimate',
      estimatedPods: 1,
      effective: { cpuMilli: 3350 },
    });
    // A sample whose window (1 s) began after the bind measures it, replacing the estimate.
    metrics.setUsage(b, { cpu: '2500m', memory: '3Gi' }, undefined, '1s');
    const measured = await waitForLoad(
      gateway,
      b,
      'the new sample includes the pod',
      (l) => l.source === 'metrics' && l.effective.cpuMilli === 2500,
    );
    expect(measured).toMatchObject({
      estimatedPods: 0,
      estimated: { cpuMilli: 0, memoryBytes: 0 },
      podCount: 1,
    });
    expect(measured.cpuPercent).toBe(62.5);
    await waitForStatus(`${b} eligible at 62.5% measured`, isEligible(b));
  });

  it('stale samples: fail-open falls back to requests, fail-closed makes the node unavailable', async () => {
    const [a, b, c] = nodes;
    await bindPod('stale-requests', c, { cpu: '500m', memory: '512Mi' });
    const old = sampleTime(10 * 60);
    metrics.setUsage(c, { cpu: '3900m', memory: '2Gi' }, old);
    const open = await waitForLoad(
      gateway,
      c,
      'stale, requests-based',
      (l) => l.metricsStale && l.podCount === 1,
    );
    expect(open).toMatchObject({
      source: 'requests',
      metricsStale: true,
      unavailable: false,
      effective: { cpuMilli: 500, memoryBytes: 512 * 2 ** 20 },
      cpuPercent: 12.5,
    });
    // The stale 97.5% does not count: by requests c is well under maxCPU.
    await waitForStatus(`${c} eligible on requests`, isEligible(c));
    // …and the rule says so, with a Warning on the transition (its earlier status had metrics current).
    const degraded = await waitForStatus(
      'MetricsAvailable False',
      (s) => metricsCondition(s)?.status === 'False',
    );
    expect(metricsCondition(degraded)).toMatchObject({
      reason: 'MetricsMissing',
      message: '1 of 3 nodes without a fresh metrics sample: judged by requests (fail-open)',
    });
    expect(await eventsOnceWritten('MetricsUnavailable')).toEqual([
      {
        type: 'Warning',
        note: '1 of 3 nodes without a fresh metrics sample: judged by requests (fail-open)',
      },
    ]);

    const writer = new DryRunWriter();
    let operator: Operator | undefined;
    failClosed = await startGateway(
      parseConfig({
        kubeconfig: provided('kubeconfig'),
        httpPort: 0,
        bindAddress: '127.0.0.1',
        // Always leads, but writes only to the dry-run writer.
        leaderElect: false,
        namespace: leaseNamespace,
        identity: uniqueName('it-metrics-fail-closed'),
        installCrd: false,
        metricsPollSeconds: 1,
        metricsStalenessSeconds: STALENESS_SECONDS,
        staleMetricsPolicy: 'fail-closed',
        logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
      }),
      [
        (ctx) => {
          const component = operatorComponent(ctx, { writer });
          operator = component.operator;
          return component;
        },
      ],
    );
    const closed = failClosed;
    await closed.cache.ready();
    expect(closed.cache.metricsServed).toBe(true);
    expect(await waitForLoad(closed, c, 'unavailable', (l) => l.unavailable)).toMatchObject({
      source: 'requests',
      metricsStale: true,
      unavailable: true,
    });

    const verdictOf = (node: string) => {
      const evaluation = operator?.evaluation(ns.name, RULE_NAME);
      return [...(evaluation?.eligible ?? []), ...(evaluation?.ineligible ?? [])].find(
        (v) => v.node === node,
      );
    };
    const unavailable = await waitFor(`${c} ineligible under fail-closed`, () => {
      const v = verdictOf(c);
      return v && !v.eligible ? v : undefined;
    });
    expect(unavailable.reasons).toEqual([
      { code: 'LoadUnavailable', rule: RULE_NAME, message: 'metrics stale or missing (fail-closed)' },
    ]);
    // Fresh samples keep a and b in.
    expect(verdictOf(a)?.eligible).toBe(true);
    expect(verdictOf(b)?.eligible).toBe(true);
    const planned = await waitFor('the fail-closed status it would write', () =>
      writer.statuses.get(`${ns.name}/${RULE_NAME}`),
    );
    expect(planned.ineligibleNodes).toContainEqual({
      node: c,
      reasons: ['metrics stale or missing (fail-closed)'],
    });

    // A node missing from the metrics API is as unknown as a stale one; a fresh sample brings it back.
    metrics.clear(c);
    await waitFor(`${c} sample gone`, () => !closed.cache.metrics.has(c));
    expect(verdictOf(c)?.eligible).toBe(false);
    // (A 1 s window: the pod bound on c seconds ago is in it, measured rather than estimated.)
    metrics.setUsage(c, LOW, undefined, '1s');
    await waitFor(`${c} eligible again under fail-closed`, () => verdictOf(c)?.eligible === true);
    expect(closed.loads.loadOf(c)).toMatchObject({
      source: 'metrics',
      unavailable: false,
      metricsStale: false,
    });
    // The fail-open gateway agrees now that the sample is fresh, and says so once.
    await waitForLoad(gateway, c, 'fresh again', (l) => l.source === 'metrics' && !l.metricsStale);
    const current = await waitForStatus(
      'MetricsAvailable True',
      (s) => metricsCondition(s)?.status === 'True',
    );
    expect(metricsCondition(current)).toMatchObject({
      reason: 'MetricsCurrent',
      message: '3 nodes judged on measured usage',
    });
    expect(await eventsOnceWritten('MetricsAvailable')).toEqual([
      { type: 'Normal', note: '3 nodes judged on measured usage' },
    ]);
  });
});

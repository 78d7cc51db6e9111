// End to end on the real control plane, with every component of the gateway in-process (allComponents):
// a what-if from GraphQL's simulateRule checked against what the scheduler and the operator then really do
// once the rule is changed, and a pod's whole path through the API server — admission webhook (steering),
// scheduler (binding), KWOK (running) — for a bare pod and a Deployment.
//
// Other test files share the cluster: this file's pods carry (or get from the webhook) a scheduler name of
// its own, its nodes are its own, and its webhooks only act in namespaces carrying a label of its own. The
// aggregated API component runs too, but its APIService is not registered here (aggregated.test.ts owns it).
import { readFile } from 'node:fs/promises';
import {
  AppsV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
  type V1PodCondition,
} from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/app.js';
import { allComponents } from '../../src/components.js';
import { parseConfig } from '../../src/config.js';
import { ensureCrd } from '../../src/operator/install-crd.js';
import { RULE_GROUP, RULE_PLURAL, RULE_VERSION, type RuleStatus } from '../../src/rules/types.js';
import { createFakeNodes, deleteFakeNodes } from '../cluster/nodes.js';
import { applyLocalWebhooks, deleteLocalWebhooks, type LocalWebhooks } from '../cluster/webhooks.js';
import { postGraphQL } from '../kit/graphql.js';
import {
  coreApi,
  createNamespace,
  kubeConfig,
  kubectl,
  pkiPath,
  type TestNamespace,
  uniqueName,
  waitFor,
} from './context.js';

const POOL_LABEL = 'nodeload.test/pool';
const WEBHOOK_LABEL = 'nodeload.example.com/test-e2e';
const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const RULE = { group: RULE_GROUP, version: RULE_VERSION, plural: RULE_PLURAL };

const schedulerName = uniqueName('nodeload-it-e2e');
const scope = uniqueName('e2e');
let gateway: Gateway;
let webhooks: LocalWebhooks | undefined;
const namespaces: TestNamespace[] = [];
const createdNodes: string[] = [];

async function gql<T>(query: string, variables?: Record<string, unknown>): Promise<T> {
  const result = await postGraphQL<T>(
    { fetch },
    `http://127.0.0.1:${gateway.httpPort}/graphql`,
    query,
    variables,
  );
  expect(result.errors).toBeUndefined();
  return result.data as T;
}

async function nodePool(
  prefix: string,
  specs: { cpu: number; memory: string }[],
): Promise<{ pool: string; names: string[] }> {
  const pool = uniqueName(prefix);
  const names = specs.map((_, i) => `${pool}-${i}`);
  await createFakeNodes(
    inject('kubeconfig'),
    specs.map((s, i) => ({ name: names[i] as string, ...s, pods: 20, labels: { [POOL_LABEL]: pool } })),
  );
  createdNodes.push(...names);
  return { pool, names };
}

async function createRule(namespace: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      ...RULE,
      namespace,
      body: { apiVersion: `${RULE_GROUP}/${RULE_VERSION}`, kind: 'NodeLoadRule', metadata: { name }, spec },
    });
  // The scheduler and the webhook must know the rule before the pods it covers arrive.
  await waitFor(`rule ${name} in the cache`, () => gateway.cache.rules.has(`${namespace}/${name}`));
}

/** Really changes the rule, as `kubectl patch --type merge` would; returns the new generation. */
async function patchRuleSpec(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<number> {
  const obj = (await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject(
      { ...RULE, namespace, name, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as { metadata: { generation: number } };
  return obj.metadata.generation;
}

/** The rule's status once the operator has written it for `generation`. */
async function statusFor(namespace: string, name: string, generation: number): Promise<RuleStatus> {
  return await waitFor(
    `the status of rule ${name} for generation ${generation}`,
    async () => {
      const obj = (await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .getNamespacedCustomObject({ ...RULE, namespace, name })) as { status?: RuleStatus };
      return obj.status?.observedGeneration === generation ? obj.status : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

/** A pod for this file's scheduler (`scheduled`), pinned to a node, or bare for the webhook to steer. */
function podBody(
  name: string,
  o: { cpu: string; scheduled?: boolean; pool?: string; nodeName?: string },
): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'e2e' } },
    spec: {
      ...(o.scheduled ? { schedulerName } : {}),
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.pool ? { nodeSelector: { [POOL_LABEL]: o.pool } } : {}),
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          resources: { requests: { cpu: o.cpu, memory: '64Mi' } },
        },
      ],
    },
  };
}

async function readPod(namespace: string, name: string): Promise<V1Pod> {
  return await coreApi().readNamespacedPod({ namespace, name });
}

function unschedulable(pod: V1Pod): V1PodCondition | undefined {
  return pod.status?.conditions?.find(
    (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
  );
}

const sorted = (list: readonly string[]) => [...list].sort();

beforeAll(async () => {
  await ensureCrd(kubeConfig(), pino({ level: 'silent' }));
  const config = parseConfig({
    kubeconfig: inject('kubeconfig'),
    httpPort: 0,
    httpsPort: 0,
    bindAddress: '127.0.0.1',
    // Reads the user port without a token (test/integration/authz.test.ts covers tokens).
    anonymousUserPort: true,
    tlsCertFile: pkiPath('serving.crt'),
    tlsKeyFile: pkiPath('serving.key'),
    leaderElect: false,
    // Leases (unused without election) and the webhook's own exemption: a namespace of this file only.
    namespace: uniqueName('it-e2e-gw'),
    leaseName: uniqueName('e2e'),
    schedulerName,
    identity: uniqueName('it-e2e'),
    installCrd: false,
    logLevel: process.env['NODELOAD_IT_LOG'] ?? 'silent',
  });
  gateway = await startGateway(config, allComponents());
  await gateway.cache.ready();
});

afterAll(async () => {
  // Webhooks first: with the gateway gone they would refuse pinned pods (failurePolicy Fail).
  if (webhooks) await deleteLocalWebhooks(kubeConfig(), webhooks);
  await gateway?.stop();
  const apps = kubeConfig().makeApiClient(AppsV1Api);
  for (const ns of namespaces) {
    // Pods on a deleted KWOK node would wait for the pod GC and hold the namespace in Terminating.
    await apps.deleteCollectionNamespacedDeployment({ namespace: ns.name });
    await coreApi().deleteCollectionNamespacedPod({ namespace: ns.name, gracePeriodSeconds: 0 });
  }
  if (createdNodes.length) await deleteFakeNodes(inject('kubeconfig'), createdNodes);
  await Promise.all(namespaces.map((ns) => ns.dispose()));
});

describe('end to end', () => {
  it('simulateRule agrees with what the scheduler then does when the rule is really changed', async () => {
    const ns = await createNamespace('it-e2e-sim');
    namespaces.push(ns);
    // 8 cpu each. s0 carries a 3-cpu ballast (37.5%); s1..s3 are empty.
    const { pool, names } = await nodePool('it-e2e-sim', Array(4).fill({ cpu: 8, memory: '16Gi' }));
    const [s0, ...free] = names as [string, ...string[]];
    await waitFor('the pool in the cache', () => names.every((n) => gateway.cache.nodes.has(n)));
    const rule = 'tight';
    const selector = { matchLabels: { [POOL_LABEL]: pool } };
    await createRule(ns.name, rule, { maxCPU: 30, nodeSelector: selector });

    const core = coreApi();
    await core.createNamespacedPod({
      namespace: ns.name,
      body: podBody('ballast', { cpu: '3', nodeName: s0 }),
    });
    await waitFor(
      'the ballast in the load of its node',
      () => gateway.loads.loadOf(s0)?.requested.cpuMilli === 3000,
    );
    // Under maxCPU 30 none of these fits: mid-* (40%) and big (62.5%) exceed the rule everywhere, huge
    // (9 cpu) fits no node at all. maxCPU 60 lets each mid-* onto an empty node — both at once, there are
    // three — while big still exceeds it and huge still fits nowhere.
    const pending = { 'mid-a': '3200m', 'mid-b': '3200m', big: '5', huge: '9' };
    for (const [name, cpu] of Object.entries(pending))
      await core.createNamespacedPod({
        namespace: ns.name,
        body: podBody(name, { cpu, pool, scheduled: true }),
      });
    await waitFor(
      'every pending pod marked unschedulable',
      async () => {
        for (const name of Object.keys(pending))
          if (!unschedulable(await readPod(ns.name, name))) return false;
        return true;
      },
      { timeoutMs: 60_000 },
    );

    type Simulation = {
      exists: boolean;
      eligibleBefore: number | null;
      eligibleAfter: number;
      nodesBecomingEligible: string[];
      nodesBecomingIneligible: { node: string; reasons: string[] }[];
      pendingPodsBecomingSchedulable: { namespace: string; pod: string; node: string | null }[];
      pendingPodsBecomingUnschedulable: { namespace: string; pod: string; message: string | null }[];
      runningPodsBreaching: { namespace: string; pod: string; node: string; reasons: string[] }[];
    };
    // The simulation works on the live state. The eligible set it starts from is the operator's evaluation,
    // taken once that has caught up with the same state (the operator runs after a debounce).
    const simulate = async (maxCPU: number) => {
      // Every answer, not only the last, must add up: before, after and the listed changes come from one
      // snapshot of the live state.
      const inconsistent: Simulation[] = [];
      const result = await waitFor(`a simulation of maxCPU ${maxCPU}, the operator current`, async () => {
        const data = await gql<{
          rule: { evaluation: { eligible: { node: string }[] } };
          simulateRule: Simulation;
        }>(
          `query($ns: String!, $name: String!, $spec: RuleSpecInput!) {
            rule(namespace: $ns, name: $name) { evaluation { eligible { node } } }
            simulateRule(namespace: $ns, name: $name, spec: $spec) {
              exists eligibleBefore eligibleAfter nodesBecomingEligible
              nodesBecomingIneligible { node reasons }
              pendingPodsBecomingSchedulable { namespace pod node }
              pendingPodsBecomingUnschedulable { namespace pod message }
              runningPodsBreaching { namespace pod node reasons } } }`,
          {
            ns: ns.name,
            name: rule,
            spec: { maxCPU, nodeSelector: { matchLabels: [{ key: POOL_LABEL, value: pool }] } },
          },
        );
        const sim = data.simulateRule;
        const { nodesBecomingEligible: entering, nodesBecomingIneligible: leaving } = sim;
        if (sim.eligibleAfter !== (sim.eligibleBefore ?? 0) + entering.length - leaving.length)
          inconsistent.push(sim);
        const current = data.rule.evaluation.eligible.map((e) => e.node);
        if (current.length !== sim.eligibleBefore) return undefined;
        const left = new Set(leaving.map((c) => c.node));
        return { sim, eligibleAfter: sorted([...current.filter((n) => !left.has(n)), ...entering]) };
      });
      expect(inconsistent).toEqual([]);
      return result;
    };

    // Relax: 30% → 60%.
    const relax = await simulate(60);
    expect(relax.sim).toMatchObject({
      exists: true,
      eligibleBefore: 3,
      eligibleAfter: 4,
      nodesBecomingEligible: [s0],
      nodesBecomingIneligible: [],
      pendingPodsBecomingUnschedulable: [],
      runningPodsBreaching: [],
    });
    expect(relax.eligibleAfter).toEqual(sorted(names));
    const named = relax.sim.pendingPodsBecomingSchedulable;
    expect(named.map((p) => p.pod)).toEqual(['mid-a', 'mid-b']);
    for (const p of named) {
      expect(p.namespace).toBe(ns.name);
      expect(free).toContain(p.node);
    }

    const relaxed = await patchRuleSpec(ns.name, rule, { maxCPU: 60 });
    // Exactly the named pods get scheduled, onto the nodes the rule now admits.
    const placed = await waitFor(
      'the named pods bound',
      async () => {
        const list = await core.listNamespacedPod({ namespace: ns.name });
        const bound = list.items.filter((p) => p.spec?.nodeName && p.metadata?.name !== 'ballast');
        return bound.length >= named.length ? bound : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(sorted(placed.map((p) => p.metadata?.name ?? ''))).toEqual(named.map((p) => p.pod));
    const midNodes = placed.map((p) => p.spec?.nodeName ?? '');
    for (const n of midNodes) expect(free).toContain(n);
    expect(new Set(midNodes).size).toBe(2);
    // The others stay pending, their reasons now told against the changed rule.
    const big = await waitFor(
      'big retried against maxCPU 60',
      async () => {
        const c = unschedulable(await readPod(ns.name, 'big'));
        return c?.message?.includes(`exceed rule ${rule} cpu 60%`) ? c : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(big.message).toMatch(/^0\/\d+ nodes are available: /);
    const huge = unschedulable(await readPod(ns.name, 'huge'));
    expect(huge?.message).toMatch(/^0\/\d+ nodes are available: .*\b4 Insufficient cpu/);
    for (const name of ['big', 'huge']) expect((await readPod(ns.name, name)).spec?.nodeName).toBeFalsy();
    // The operator's eligible set is the one the simulation announced.
    const relaxedStatus = await statusFor(ns.name, rule, relaxed);
    expect(sorted(relaxedStatus.eligibleNodes)).toEqual(relax.eligibleAfter);
    expect(relaxedStatus.eligibleCount).toBe(relax.sim.eligibleAfter);

    // Tighten: 60% → 35%, once the cache sees the running pods (s0 37.5%, the mid-* nodes 40%).
    const running = ['ballast', 'mid-a', 'mid-b'];
    await waitFor('the bound pods running in the cache', () =>
      running.every((p) => {
        const pod = gateway.cache.pods.get(`${ns.name}/${p}`);
        return pod?.phase === 'Running' && gateway.loads.loadOf(pod.nodeName)?.podCount === 1;
      }),
    );
    const tighten = await simulate(35);
    expect(tighten.sim).toMatchObject({
      eligibleBefore: 4,
      eligibleAfter: 1,
      nodesBecomingEligible: [],
      pendingPodsBecomingSchedulable: [],
      // big and huge cannot be placed either way; no pending pod would lose a place.
      pendingPodsBecomingUnschedulable: [],
    });
    const overNodes = sorted([s0, ...midNodes]);
    expect(tighten.sim.nodesBecomingIneligible.map((c) => c.node)).toEqual(overNodes);
    for (const c of tighten.sim.nodesBecomingIneligible)
      expect(c.reasons).toEqual([c.node === s0 ? 'cpu 37.5% > maxCPU 35%' : 'cpu 40% > maxCPU 35%']);
    expect(tighten.sim.runningPodsBreaching.map((p) => [p.pod, p.node])).toEqual([
      ['ballast', s0],
      ...placed
        .map((p) => [p.metadata?.name, p.spec?.nodeName])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    ]);

    const tightened = await patchRuleSpec(ns.name, rule, { maxCPU: 35 });
    const tightStatus = await statusFor(ns.name, rule, tightened);
    expect(sorted(tightStatus.eligibleNodes)).toEqual(tighten.eligibleAfter);
    expect(tightStatus.eligibleCount).toBe(tighten.sim.eligibleAfter);
    expect(
      tightStatus.ineligibleNodes
        .filter((e) => names.includes(e.node))
        .sort((a, b) => a.node.localeCompare(b.node)),
    ).toEqual(tighten.sim.nodesBecomingIneligible);
    // This gateway's operator ends up hinting at the very pods the simulation said would breach. (The
    // status above may come from another file's gateway: every operator writes every rule's status.)
    const breachingPods = JSON.stringify(tighten.sim.runningPodsBreaching.map((p) => [p.pod, p.node]).sort());
    let hinted = '';
    const hintsAgree = async () => {
      const res = await fetch(
        `http://127.0.0.1:${gateway.httpPort}/operator/rebalance-hints?namespace=${ns.name}`,
      );
      const hints = (await res.json()) as { pod: string; from: string }[];
      hinted = JSON.stringify(hints.map((h) => [h.pod, h.from]).sort());
      return hinted === breachingPods;
    };
    await waitFor('rebalance hints for the breaching pods', hintsAgree, { timeoutMs: 30_000 }).catch(
      () => undefined,
    );
    expect(hinted).toBe(breachingPods);
    for (const name of ['big', 'huge']) expect((await readPod(ns.name, name)).spec?.nodeName).toBeFalsy();
  }, 180_000);

  it('a pod and a Deployment go through the webhook and the scheduler onto the nodes their rule allows', async () => {
    const ns = await createNamespace('it-e2e-path');
    namespaces.push(ns);
    await coreApi().patchNamespace(
      { name: ns.name, body: { metadata: { labels: { [WEBHOOK_LABEL]: scope } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // The third node is the biggest: on load alone the scheduler would prefer it.
    const { names } = await nodePool('it-e2e-path', [
      { cpu: 4, memory: '8Gi' },
      { cpu: 4, memory: '8Gi' },
      { cpu: 16, memory: '32Gi' },
    ]);
    const allowed = sorted(names.slice(0, 2));
    await waitFor('the nodes in the cache', () => names.every((n) => gateway.cache.nodes.has(n)));
    const rule = 'two-of-three';
    await createRule(ns.name, rule, { allowedNodes: allowed });

    webhooks = await applyLocalWebhooks(kubeConfig(), {
      port: gateway.httpsPort ?? 0,
      caPem: await readFile(pkiPath('ca.crt'), 'utf8'),
      nameSuffix: scope,
      namespaceSelector: { matchLabels: { [WEBHOOK_LABEL]: scope } },
    });
    // The API server picks up new webhook configurations through an informer.
    await waitFor(
      'the mutating webhook to be called',
      async () => {
        const probe = await coreApi().createNamespacedPod({
          namespace: ns.name,
          body: { metadata: { name: 'probe' }, spec: { containers: [{ name: 'app', image: 'x' }] } },
          dryRun: 'All',
        });
        return probe.spec?.schedulerName === schedulerName;
      },
      { timeoutMs: 60_000 },
    );

    const manifest = podBody('web', { cpu: '100m' });
    const created = JSON.parse(
      await kubectl(['apply', '-n', ns.name, '-o', 'json', '-f', '-'], { input: JSON.stringify(manifest) }),
    ) as V1Pod;
    expect(created.spec?.schedulerName).toBe(schedulerName);
    expect(created.spec?.affinity?.nodeAffinity?.[REQUIRED]?.nodeSelectorTerms).toEqual(
      allowed.map((n) => ({ matchFields: [{ key: 'metadata.name', operator: 'In', values: [n] }] })),
    );
    const bound = await waitFor('the pod bound', async () => (await readPod(ns.name, 'web')).spec?.nodeName, {
      timeoutMs: 60_000,
    });
    expect(allowed).toContain(bound);

    const template = podBody('x', { cpu: '100m' });
    const labels = { app: 'e2e-deploy' };
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 4,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: template.spec },
      },
    };
    await kubectl(['apply', '-n', ns.name, '-f', '-'], { input: JSON.stringify(deployment) });
    const replicas = await waitFor(
      '4 replicas bound',
      async () => {
        const list = await coreApi().listNamespacedPod({
          namespace: ns.name,
          labelSelector: 'app=e2e-deploy',
        });
        return list.items.length === 4 && list.items.every((p) => p.spec?.nodeName) ? list.items : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    for (const p of replicas) {
      expect(p.spec?.schedulerName).toBe(schedulerName);
      expect(allowed).toContain(p.spec?.nodeName);
    }
    await waitFor(
      'the deployment available',
      async () => {
        const d = await kubeConfig()
          .makeApiClient(AppsV1Api)
          .readNamespacedDeployment({ name: 'web', namespace: ns.name });
        return d.status?.availableReplicas === 4;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    // Nothing of this namespace ever went to the node the rule leaves out.
    const all = await coreApi().listNamespacedPod({ namespace: ns.name });
    expect(all.items.filter((p) => p.spec?.nodeName === names[2])).toEqual([]);
  }, 240_000);
});

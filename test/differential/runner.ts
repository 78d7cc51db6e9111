// Runs scenarios against a live control plane: each scenario once per engine (kube-scheduler, nodeload),
// each run on its own fresh KWOK nodes and namespaces (isolate.ts), then checks the final state.
import { randomBytes } from 'node:crypto';
import {
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  type KubeConfig,
  NodeV1Api,
  StorageV1Api,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { describeApiError, isApiException } from '../cluster/nodes.js';
import {
  type ClusterSnapshot,
  checkHardConstraints,
  checkRules,
  podKey,
  type RuleForCheck,
  type Violation,
} from './checker.js';
import { checkPreemption, checkVolumes } from './checker-volumes.js';
import { checkExpectation, compareEngines } from './compare.js';
import { compareEvents, type EventRecord, eventRecords } from './events.js';
import { planRun, RUN_LABEL, type RunPlan } from './isolate.js';
import { RunObjectsLifecycle } from './objects.js';
import { ENGINES, type Engine, type PodOutcome, type Scenario } from './types.js';

export interface HarnessEnv {
  kubeConfig: KubeConfig;
  /** Resolves once the nodeload gateway's cache holds rule namespace/name. */
  waitForRule(namespace: string, name: string): Promise<void>;
  /** Batch runs: how long every decision must stay unchanged to count as settled (default 2500 ms). */
  stableMs?: number;
  /** Deadline for a run's pods to be decided (default 45 s). */
  decideTimeoutMs?: number;
}

export interface RunResult {
  engine: Engine;
  runId: string;
  outcomes: PodOutcome[];
  violations: Violation[];
  /** Mismatches with the scenario's expectation for this engine. */
  expectation: string[];
  /** Existing pods (logical names) preempted during the run: deleted or being deleted at the end. */
  victims: string[];
  /** The scheduler's Events about the run's pods (events.ts). */
  events: EventRecord[];
  error?: string;
  ms: number;
}

export interface ScenarioResult {
  scenario: Scenario;
  runs: Record<Engine, RunResult>;
  /** nodeload vs kube-scheduler differences (per the scenario's comparison mode). */
  differences: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function poll<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = ` (last error: ${describeApiError(err)})`;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last}`);
    await sleep(200);
  }
}

/**
 * A pod's decision: bound, or PodScheduled=False; undefined while undecided. A nominated pod is undecided
 * until it binds (its victims are on their way out) unless `nominationDecides` (they are held).
 */
function decision(p: V1Pod | undefined, nominationDecides = false): string | undefined {
  if (!p) return undefined;
  if (p.spec?.nodeName) return `node:${p.spec.nodeName}`;
  const nominated = p.status?.nominatedNodeName;
  if (nominated && !nominationDecides) return undefined;
  const c = p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (!c) return undefined;
  return nominated ? `nominated:${nominated}` : `unschedulable:${c.reason}`;
}

class Run {
  private readonly core: CoreV1Api;
  readonly objects: RunObjectsLifecycle;
  /** Existing pods as the API server admitted them (spec.priority filled in from the PriorityClass). */
  readonly existing = new Map<string, V1Pod>();
  constructor(
    private readonly env: HarnessEnv,
    private readonly scenario: Scenario,
    readonly plan: RunPlan,
  ) {
    this.core = env.kubeConfig.makeApiClient(CoreV1Api);
    this.objects = new RunObjectsLifecycle(env.kubeConfig, plan.objects, poll);
  }

  async setUp(): Promise<void> {
    const { plan, core } = this;
    for (const body of plan.namespaces) await core.createNamespace({ body });
    await Promise.all(
      plan.namespaces.map((ns) =>
        poll(`ServiceAccount ${ns.metadata?.name}/default`, 60_000, async () => {
          await core.readNamespacedServiceAccount({
            name: 'default',
            namespace: ns.metadata?.name as string,
          });
          return true;
        }),
      ),
    );
    const node = this.env.kubeConfig.makeApiClient(NodeV1Api);
    for (const body of plan.runtimeClasses) await node.createRuntimeClass({ body });
    await this.objects.createClasses();
    await Promise.all(plan.nodes.map((n) => this.createNode(n)));
    await Promise.all(plan.nodes.map((n) => this.waitNodeSettled(n)));
    await this.objects.createStorage(plan.actualNamespace('main'));
    const custom = this.env.kubeConfig.makeApiClient(CustomObjectsApi);
    for (const body of plan.rules) {
      const md = body['metadata'] as { name: string; namespace: string };
      await custom.createNamespacedCustomObject({
        group: 'example.com',
        version: 'v1',
        plural: 'nodeloadrules',
        namespace: md.namespace,
        body,
      });
      await this.env.waitForRule(md.namespace, md.name);
    }
    await this.objects.createBudgets();
    for (const body of plan.existing) await this.createPod(body);
    for (const p of plan.existing) {
      const running = await poll(`existing pod ${podKey(p)} running`, 30_000, async () => {
        const got = await core.readNamespacedPod({
          name: p.metadata?.name as string,
          namespace: p.metadata?.namespace as string,
        });
        return got.status?.phase === 'Running' ? got : undefined;
      });
      this.existing.set(podKey(p), running);
    }
    await this.objects.waitBudgets();
    // Both schedulers learn of nodes and bound pods through their informers: give them a moment.
    await sleep(500);
  }

  private async createNode(body: V1Node): Promise<void> {
    const name = body.metadata?.name as string;
    const created = await this.core.createNode({ body });
    const statusOf = (n: V1Node) =>
      JSON.stringify([n.status?.allocatable, n.status?.declaredFeatures ?? [], n.status?.images ?? []]);
    if (statusOf(created) === statusOf(body)) return;
    for (let attempt = 0; ; attempt++) {
      const current = await this.core.readNodeStatus({ name });
      current.status = {
        ...current.status,
        capacity: body.status?.capacity,
        allocatable: body.status?.allocatable,
        ...(body.status?.declaredFeatures ? { declaredFeatures: body.status.declaredFeatures } : {}),
        ...(body.status?.images ? { images: body.status.images } : {}),
      };
      try {
        await this.core.replaceNodeStatus({ name, body: current });
        return;
      } catch (err) {
        if (!isApiException(err, 409) || attempt > 10) throw err;
      }
    }
  }

  /**
   * Ready (KWOK), with exactly the scenario's taints plus the cordon taint the controller adds, for half a
   * second in a row (admission taints every new node not-ready until the controller sees it Ready).
   */
  private async waitNodeSettled(body: V1Node): Promise<void> {
    const name = body.metadata?.name as string;
    const want = new Set((body.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`));
    if (body.spec?.unschedulable) want.add('node.kubernetes.io/unschedulable:NoSchedule');
    let since: number | undefined;
    await poll(`node ${name} Ready with its taints`, 60_000, async () => {
      const n = await this.core.readNode({ name });
      const ready = n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      const have = new Set((n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`));
      const same = have.size === want.size && [...want].every((t) => have.has(t));
      if (!ready || !same) since = undefined;
      else since ??= Date.now();
      return since !== undefined && Date.now() - since >= 500 ? true : undefined;
    });
  }

  private async createPod(body: V1Pod): Promise<void> {
    try {
      await this.core.createNamespacedPod({ namespace: body.metadata?.namespace as string, body });
    } catch (err) {
      throw new Error(`creating pod ${podKey(body)}: ${describeApiError(err)}`);
    }
  }

  async listPods(): Promise<V1Pod[]> {
    const lists = await Promise.all(
      this.plan.namespaces.map((ns) =>
        this.core.listNamespacedPod({ namespace: ns.metadata?.name as string }),
      ),
    );
    return lists.flatMap((l) => l.items);
  }

  private async decisions(): Promise<Map<string, string | undefined>> {
    const byKey = new Map((await this.listPods()).map((p) => [podKey(p), p]));
    const held = this.scenario.nominationDecides === true;
    return new Map(this.plan.incoming.map((p) => [podKey(p), decision(byKey.get(podKey(p)), held)]));
  }

  /** Creates the incoming pods (one by one, or all at once) and waits until their decisions are stable. */
  async schedule(): Promise<void> {
    const timeout = this.env.decideTimeoutMs ?? 45_000;
    if (this.scenario.orderIndependent) {
      await Promise.all(this.plan.incoming.map((p) => this.createPod(p)));
    } else {
      for (const p of this.plan.incoming) {
        await this.createPod(p);
        await poll(`a decision for ${podKey(p)}`, timeout, async () =>
          (await this.decisions()).get(podKey(p)),
        );
      }
    }
    const stableMs = this.env.stableMs ?? 2500;
    const deadline = Date.now() + timeout;
    let last = '';
    let since = Date.now();
    for (;;) {
      const d = await this.decisions();
      const sig = JSON.stringify([...d]);
      if (sig !== last) {
        last = sig;
        since = Date.now();
      } else if ([...d.values()].every(Boolean) && Date.now() - since >= stableMs) return;
      if (Date.now() > deadline) return; // undecided pods are reported as such
      await sleep(250);
    }
  }

  async snapshot(): Promise<ClusterSnapshot> {
    const selector = `${RUN_LABEL}=${this.plan.runId}`;
    const storage = this.env.kubeConfig.makeApiClient(StorageV1Api);
    const byRun = { labelSelector: selector };
    const [classes, drivers, capacities] = await Promise.all([
      storage.listStorageClass(byRun),
      storage.listCSIDriver(byRun),
      storage.listCSIStorageCapacityForAllNamespaces(byRun),
    ]);
    const [nodes, namespaces, pods, claims, volumes, csiNodes, attachments] = await Promise.all([
      this.core.listNode({ labelSelector: selector }),
      this.core.listNamespace({ labelSelector: selector }),
      this.listPods(),
      Promise.all(
        this.plan.namespaces.map((ns) =>
          this.core.listNamespacedPersistentVolumeClaim({ namespace: ns.metadata?.name as string }),
        ),
      ),
      this.core.listPersistentVolume(),
      storage.listCSINode({ labelSelector: selector }),
      storage.listVolumeAttachment({ labelSelector: selector }),
    ]);
    const claimList = claims.flatMap((l) => l.items);
    const used = new Set([
      ...claimList.map((c) => c.spec?.volumeName),
      ...attachments.items.map((a) => a.spec?.source?.persistentVolumeName),
    ]);
    used.delete(undefined);
    return {
      nodes: nodes.items,
      namespaces: namespaces.items,
      pods,
      claims: claimList,
      volumes: volumes.items.filter((v) => used.has(v.metadata?.name)),
      csiNodes: csiNodes.items,
      storageClasses: classes.items,
      csiDrivers: drivers.items,
      storageCapacities: capacities.items,
      volumeAttachments: attachments.items,
    };
  }

  outcomes(snap: ClusterSnapshot): PodOutcome[] {
    const byKey = new Map(snap.pods.map((p) => [podKey(p), p]));
    return this.plan.incoming.map((want) => {
      const p = byKey.get(podKey(want));
      const pod = want.metadata?.name as string;
      if (p?.spec?.nodeName) return { pod, node: this.plan.logicalNode(p.spec.nodeName) };
      const c = p?.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
      const nominated = p?.status?.nominatedNodeName;
      return {
        pod,
        ...(nominated ? { nominated: this.plan.logicalNode(nominated) } : {}),
        unschedulable: c
          ? { reason: c.reason ?? '', message: c.message ?? '' }
          : {
              reason: 'NoDecision',
              message: p ? 'no scheduling decision before the deadline' : 'pod missing',
            },
      };
    });
  }

  async tearDown(): Promise<void> {
    const { core, plan } = this;
    const quiet = async (f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (err) {
        if (!isApiException(err, 404)) throw err;
      }
    };
    // Finalizers first, or those pods (and their namespaces) would stay behind.
    for (const p of plan.existing.filter((p) => p.metadata?.finalizers?.length)) {
      const { name, namespace } = p.metadata as { name: string; namespace: string };
      await quiet(() =>
        core.patchNamespacedPod({ name, namespace, body: [{ op: 'remove', path: '/metadata/finalizers' }] }),
      );
    }
    for (const ns of plan.namespaces) {
      const namespace = ns.metadata?.name as string;
      await quiet(() => core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }));
    }
    await Promise.all(
      plan.nodes.map((n) => quiet(() => core.deleteNode({ name: n.metadata?.name as string }))),
    );
    for (const ns of plan.namespaces)
      await quiet(() => core.deleteNamespace({ name: ns.metadata?.name as string }));
    const nodeApi = this.env.kubeConfig.makeApiClient(NodeV1Api);
    for (const rc of plan.runtimeClasses) {
      const name = rc.metadata?.name as string;
      await quiet(() => nodeApi.deleteRuntimeClass({ name }));
    }
    await this.objects.delete();
  }

  /** The scheduler Events about the run's pods, in logical names. */
  async events(snap: ClusterSnapshot): Promise<EventRecord[]> {
    const api = this.env.kubeConfig.makeApiClient(EventsV1Api);
    const lists = await Promise.all(
      this.plan.namespaces.map((ns) => api.listNamespacedEvent({ namespace: ns.metadata?.name as string })),
    );
    return eventRecords(
      lists.flatMap((l) => l.items),
      this.plan.runId,
      [...snap.pods, ...this.existing.values()],
    );
  }

  /** Existing pods gone, or on their way out, at the end of the run (logical names). */
  victims(snap: ClusterSnapshot): string[] {
    const live = new Map(snap.pods.map((p) => [podKey(p), p]));
    return [...this.existing.keys()]
      .filter((k) => {
        const p = live.get(k);
        return !p || Boolean(p.metadata?.deletionTimestamp);
      })
      .map((k) => k.split('/')[1] as string)
      .sort();
  }
}

function newRunId(index: number, engine: Engine): string {
  return `d${index}${engine === 'nodeload' ? 'n' : 'k'}${randomBytes(3).toString('hex')}`;
}

export async function runEngine(
  env: HarnessEnv,
  scenario: Scenario,
  engine: Engine,
  index: number,
): Promise<RunResult> {
  const started = Date.now();
  const plan = planRun(scenario, engine, newRunId(index, engine));
  const run = new Run(env, scenario, plan);
  const result: RunResult = {
    engine,
    runId: plan.runId,
    outcomes: [],
    violations: [],
    expectation: [],
    victims: [],
    events: [],
    ms: 0,
  };
  try {
    await run.setUp();
    await run.schedule();
    const snap = await run.snapshot();
    result.outcomes = run.outcomes(snap);
    result.victims = run.victims(snap);
    result.events = await run.events(snap);
    const preBound = new Set(
      [...plan.existing, ...plan.incoming.filter((p) => p.spec?.nodeName)].map((p) => podKey(p)),
    );
    const scheduled = (p: V1Pod) => !preBound.has(podKey(p));
    result.violations = [
      ...checkHardConstraints(snap, scheduled),
      ...checkVolumes(snap, scheduled),
      ...checkPreemption(snap, [...run.existing.values()], scheduled),
      ...run.objects.provisionerErrors.map((message) => ({
        pod: '-',
        node: '-',
        plugin: 'TestProvisioner',
        message,
      })),
    ];
    if (plan.rules.length) {
      // The rule bodies as created (allowedNodes and nodeSelector already in the run's names).
      const rules = plan.rules.map((body) => {
        const md = body['metadata'] as { name: string; namespace: string };
        return { ...(body['spec'] as RuleForCheck), name: md.name, namespace: md.namespace };
      });
      result.violations.push(...checkRules(snap, rules, scheduled));
    }
    const logicalPod = (key: string) => {
      const [ns = '', name = ''] = key.split('/');
      return `${plan.logicalNamespace(ns)}/${name}`;
    };
    for (const v of result.violations) {
      v.node = plan.logicalNode(v.node);
      v.pod = v.pod.split(', ').map(logicalPod).join(', ');
      v.message = v.message.replaceAll(`${plan.runId}-`, '');
    }
    const exp =
      engine === 'nodeload' && scenario.expectDifference
        ? scenario.expectDifference.nodeload
        : scenario.expect;
    result.expectation = [
      ...result.outcomes
        .filter((o) => o.unschedulable?.reason === 'NoDecision')
        .map((o) => `${o.pod}: neither bound nor marked PodScheduled=False (${o.unschedulable?.message})`),
      ...checkExpectation(exp, result.outcomes, result.victims),
    ];
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
  } finally {
    await run.tearDown().catch((err: unknown) => {
      result.error ??= `teardown: ${describeApiError(err)}`;
    });
    result.ms = Date.now() - started;
  }
  return result;
}

export async function runScenario(
  env: HarnessEnv,
  scenario: Scenario,
  index: number,
): Promise<ScenarioResult> {
  const [kube, nodeload] = (await Promise.all(ENGINES.map((e) => runEngine(env, scenario, e, index)))) as [
    RunResult,
    RunResult,
  ];
  const differences =
    kube.error || nodeload.error
      ? []
      : [...compareEngines(scenario, kube, nodeload), ...compareEvents(scenario, kube, nodeload)];
  return { scenario, runs: { 'kube-scheduler': kube, nodeload }, differences };
}

/** Starts every scenario with at most `concurrency` in flight; one promise per scenario name (never rejects). */
export function runAll(
  env: HarnessEnv,
  scenarios: Scenario[],
  concurrency = 4,
): Map<string, Promise<ScenarioResult>> {
  const out = new Map<string, Promise<ScenarioResult>>();
  let active = 0;
  const waiting: Array<() => void> = [];
  const slot = async () => {
    if (active >= concurrency) await new Promise<void>((r) => waiting.push(r));
    active++;
  };
  const release = () => {
    active--;
    waiting.shift()?.();
  };
  scenarios.forEach((s, i) => {
    out.set(
      s.name,
      (async () => {
        await slot();
        try {
          return await runScenario(env, s, i);
        } finally {
          release();
        }
      })(),
    );
  });
  return out;
}

// Creating and removing a run's storage, priority and disruption objects (isolate-objects.ts builds
// them), and waiting until the cluster has done its part before any pod is scheduled: pre-bound claims
// Bound by the PV controller, PodDisruptionBudgets' status computed by the disruption controller.
import {
  CoreV1Api,
  type KubeConfig,
  PolicyV1Api,
  SchedulingV1Api,
  StorageV1Api,
  type V1PodDisruptionBudget,
} from '@kubernetes/client-node';
import { isApiException } from '../cluster/nodes.js';
import { startTestProvisioner, type TestProvisioner } from '../fixtures/provisioner.js';
import type { RunObjects } from './isolate-objects.js';
import { selectorMatches } from './semantics.js';

type Poll = <T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>) => Promise<T>;

export class RunObjectsLifecycle {
  private readonly core: CoreV1Api;
  private readonly storage: StorageV1Api;
  private readonly scheduling: SchedulingV1Api;
  private readonly policy: PolicyV1Api;
  private provisioner: TestProvisioner | undefined;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly objects: RunObjects,
    private readonly poll: Poll,
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.storage = kubeConfig.makeApiClient(StorageV1Api);
    this.scheduling = kubeConfig.makeApiClient(SchedulingV1Api);
    this.policy = kubeConfig.makeApiClient(PolicyV1Api);
  }

  /** Cluster-scoped kinds a pod or a claim refers to: before the nodes' pods and claims exist. */
  async createClasses(): Promise<void> {
    for (const body of this.objects.priorityClasses) await this.scheduling.createPriorityClass({ body });
    for (const body of this.objects.storageClasses) await this.storage.createStorageClass({ body });
  }

  /**
   * After the nodes: CSINodes, PVs, VolumeAttachments, claims (and the provisioner); waits for pre-bound
   * claims. No attach/detach controller acts on a VolumeAttachment made after it started (it reads them
   * once, at start), so one made here stays as written.
   */
  async createStorage(mainNamespace: string): Promise<void> {
    const o = this.objects;
    for (const body of o.csiNodes) await this.storage.createCSINode({ body });
    for (const body of o.csiDrivers) await this.storage.createCSIDriver({ body });
    for (const body of o.storageCapacities)
      await this.storage.createNamespacedCSIStorageCapacity({
        namespace: body.metadata?.namespace as string,
        body,
      });
    if (o.dynamicProvisioner) {
      this.provisioner = await startTestProvisioner({
        kubeConfig: this.kubeConfig,
        namespace: mainNamespace,
        provisioner: o.dynamicProvisioner,
      });
    }
    for (const body of o.volumes) await this.core.createPersistentVolume({ body });
    for (const body of o.volumeAttachments) await this.storage.createVolumeAttachment({ body });
    for (const body of o.claims)
      await this.core.createNamespacedPersistentVolumeClaim({
        namespace: body.metadata?.namespace as string,
        body,
      });
    for (const c of o.claims.filter((c) => c.spec?.volumeName)) {
      const name = c.metadata?.name as string;
      const namespace = c.metadata?.namespace as string;
      await this.poll(`claim ${namespace}/${name} Bound`, 60_000, async () => {
        const got = await this.core.readNamespacedPersistentVolumeClaim({ name, namespace });
        return got.status?.phase === 'Bound' ? true : undefined;
      });
    }
  }

  /** Namespaced selectors (Services, PodDisruptionBudgets): before the existing pods. */
  async createBudgets(): Promise<void> {
    for (const body of this.objects.services)
      await this.core.createNamespacedService({ namespace: body.metadata?.namespace as string, body });
    for (const body of this.objects.budgets)
      await this.policy.createNamespacedPodDisruptionBudget({
        namespace: body.metadata?.namespace as string,
        body,
      });
  }

  /**
   * Each budget's status counts every running pod it selects: DefaultPreemption reads
   * status.disruptionsAllowed, which the disruption controller computes after the pods exist. Then a
   * budget's disruptedPods are written (as the eviction API does) and the controller's recount awaited.
   */
  async waitBudgets(): Promise<void> {
    for (const b of this.objects.budgets) {
      await this.waitBudgetCounted(b, 0);
      const disrupted = Object.keys(b.status?.disruptedPods ?? {});
      if (disrupted.length === 0) continue;
      await this.markDisrupted(b, disrupted);
      await this.waitBudgetCounted(b, disrupted.length);
    }
  }

  /** Writes status.disruptedPods (now) over the controller's status; retried on a conflict. */
  private async markDisrupted(b: V1PodDisruptionBudget, pods: string[]): Promise<void> {
    const name = b.metadata?.name as string;
    const namespace = b.metadata?.namespace as string;
    for (let attempt = 0; ; attempt++) {
      const body = await this.policy.readNamespacedPodDisruptionBudgetStatus({ name, namespace });
      const now = new Date();
      body.status = {
        ...(body.status as NonNullable<typeof body.status>),
        disruptedPods: Object.fromEntries(pods.map((p) => [p, now])),
      };
      try {
        await this.policy.replaceNamespacedPodDisruptionBudgetStatus({ name, namespace, body });
        return;
      } catch (err) {
        if (!isApiException(err, 409) || attempt > 10) throw err;
      }
    }
  }

  /**
   * The controller's status of `b` is current and counts every running pod it selects healthy but the
   * `disrupted` ones, which it must list.
   */
  private async waitBudgetCounted(b: V1PodDisruptionBudget, disrupted: number): Promise<void> {
    const name = b.metadata?.name as string;
    const namespace = b.metadata?.namespace as string;
    await this.poll(`PodDisruptionBudget ${namespace}/${name} observed`, 60_000, async () => {
      const [got, pods] = await Promise.all([
        this.policy.readNamespacedPodDisruptionBudget({ name, namespace }),
        this.core.listNamespacedPod({ namespace }),
      ]);
      const selected = pods.items.filter(
        (p) => p.status?.phase === 'Running' && selectorMatches(b.spec?.selector, p.metadata?.labels),
      ).length;
      const s = got.status;
      const observed = (s?.observedGeneration ?? 0) >= (got.metadata?.generation ?? 1);
      const listed = Object.keys(s?.disruptedPods ?? {}).length === disrupted;
      const counted = s?.expectedPods === selected && s?.currentHealthy === selected - disrupted;
      return observed && listed && counted ? true : undefined;
    });
  }

  /** The provisioner's errors (a run reports them). */
  get provisionerErrors(): readonly string[] {
    return this.provisioner?.errors ?? [];
  }

  /** Best effort: everything this run created outside its namespaces (those go with the namespaces). */
  async delete(): Promise<void> {
    await this.provisioner?.stop();
    const o = this.objects;
    const names = (list: Array<{ metadata?: { name?: string } }>) =>
      list.map((x) => x.metadata?.name as string);
    const quiet = (p: Promise<unknown>) => p.catch(() => undefined);
    // Dynamically provisioned PVs are named after their claims' UIDs: found by the run's classes.
    const classes = new Set(names(o.storageClasses));
    const provisioned = classes.size
      ? (await this.core.listPersistentVolume()).items
          .filter((pv) => classes.has(pv.spec?.storageClassName ?? ''))
          .map((pv) => pv.metadata?.name as string)
      : [];
    await Promise.all([
      ...[...names(o.volumes), ...provisioned].map((name) =>
        quiet(this.core.deletePersistentVolume({ name })),
      ),
      ...names(o.storageClasses).map((name) => quiet(this.storage.deleteStorageClass({ name }))),
      ...names(o.priorityClasses).map((name) => quiet(this.scheduling.deletePriorityClass({ name }))),
      ...names(o.csiNodes).map((name) => quiet(this.storage.deleteCSINode({ name }))),
      ...names(o.csiDrivers).map((name) => quiet(this.storage.deleteCSIDriver({ name }))),
      ...names(o.volumeAttachments).map((name) => quiet(this.storage.deleteVolumeAttachment({ name }))),
    ]);
  }
}

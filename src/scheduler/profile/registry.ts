/**
 * Every plugin nodeload has, by upstream name, and the default profile: kube-scheduler's default
 * plugins in their order (v1.36), LoadAware in the place of NodeResourcesFit's score, and nodeload's
 * filters after upstream's. Weights are upstream's; LoadAware, the primary score, weighs 5.
 */
import type { DeviceClassInfo, DisruptionBudgetInfo } from '../../cluster/model.js';
import type { BurstGuard as BurstLimit } from '../../rules/types.js';
import type { AnyPlugin } from '../framework/types.js';
import type { BurstView } from '../placement-log.js';
import { balancedAllocation } from '../plugins/balanced-allocation.js';
import { burstGuard } from '../plugins/burst-guard.js';
import { type DefaultPreemptionArgs, defaultPreemption } from '../plugins/default-preemption.js';
import type { WorkloadSelectors } from '../plugins/default-selector.js';
import { dynamicResources } from '../plugins/dynamic-resources.js';
import { imageLocality } from '../plugins/image-locality.js';
import { interPodAffinity } from '../plugins/inter-pod-affinity.js';
import { loadAware } from '../plugins/load-aware.js';
import { PLUGIN } from '../plugins/names.js';
import { type NodeAffinityArgs, nodeAffinity } from '../plugins/node-affinity.js';
import { nodeDeclaredFeatures } from '../plugins/node-declared-features.js';
import { nodeLoadRules } from '../plugins/node-load-rules.js';
import { nodeName } from '../plugins/node-name.js';
import { nodePorts } from '../plugins/node-ports.js';
import { type NodeResourcesFitArgs, nodeResourcesFit } from '../plugins/node-resources-fit.js';
import { nodeUnschedulable } from '../plugins/node-unschedulable.js';
import { nodeVolumeLimits } from '../plugins/node-volume-limits.js';
import { podTopologySpread } from '../plugins/pod-topology-spread.js';
import { prioritySort } from '../plugins/priority-sort.js';
import { schedulingGates } from '../plugins/scheduling-gates.js';
import { taintToleration } from '../plugins/taint-toleration.js';
import { type VolumeBindingArgs, volumeBinding } from '../plugins/volume-binding.js';
import { EMPTY_STORAGE, type StorageView } from '../plugins/volume-common.js';
import { volumeRestrictions } from '../plugins/volume-restrictions.js';
import { volumeZone } from '../plugins/volume-zone.js';
import type { VolumeBinder } from '../volume-binder.js';

/** What plugins get from the scheduler beside their args. */
export interface PluginDeps {
  placements: BurstView;
  /** The cluster-wide burst guard (--burst-max-placements), if on. */
  burst?: BurstLimit;
  /** --score-cpu-weight / --score-memory-weight: LoadAware's defaults. */
  loadWeights?: { cpu: number; memory: number };
  /** PVCs, PVs, StorageClasses, CSINodes (the shared cache's, read-only) for the volume plugins. */
  storage?: StorageView;
  /** VolumeBinding's API writes (PV claimRef, the claim's selected-node). */
  volumeBinder?: VolumeBinder;
  /** Where VolumeBinding reports a failed rollback of its writes. */
  onVolumeRollbackError?: (err: unknown) => void;
  /** PodDisruptionBudgets (the shared cache's) for DefaultPreemption. */
  disruptionBudgets?: () => Iterable<DisruptionBudgetInfo>;
  /** Services, RCs, ReplicaSets, StatefulSets (the shared cache's): PodTopologySpread's default selector. */
  workloads?: WorkloadSelectors;
  /** DeviceClasses (the shared cache's): which extended resources Dynamic Resource Allocation serves. */
  deviceClasses?: ReadonlyMap<string, DeviceClassInfo>;
}

// biome-ignore lint/suspicious/noExplicitAny: plugin args are user-written YAML, validated by each factory.
type Args = any;
type Factory = (args: Args, deps: PluginDeps) => AnyPlugin;

export const PLUGIN_FACTORIES: Readonly<Record<string, Factory>> = {
  [PLUGIN.SchedulingGates]: () => schedulingGates(),
  [PLUGIN.PrioritySort]: () => prioritySort(),
  [PLUGIN.NodeUnschedulable]: () => nodeUnschedulable(),
  [PLUGIN.NodeName]: () => nodeName(),
  [PLUGIN.TaintToleration]: () => taintToleration(),
  [PLUGIN.NodeAffinity]: (a: NodeAffinityArgs) => nodeAffinity(a),
  [PLUGIN.NodePorts]: () => nodePorts(),
  [PLUGIN.NodeResourcesFit]: (a: NodeResourcesFitArgs, deps) => nodeResourcesFit(a, deps.deviceClasses),
  [PLUGIN.VolumeRestrictions]: (_a, deps) => volumeRestrictions(deps.storage ?? EMPTY_STORAGE),
  [PLUGIN.NodeVolumeLimits]: (_a, deps) => nodeVolumeLimits(deps.storage ?? EMPTY_STORAGE),
  [PLUGIN.VolumeBinding]: (a: VolumeBindingArgs, deps) =>
    volumeBinding(a ?? {}, {
      storage: deps.storage ?? EMPTY_STORAGE,
      ...(deps.volumeBinder ? { binder: deps.volumeBinder } : {}),
      ...(deps.onVolumeRollbackError ? { onRollbackError: deps.onVolumeRollbackError } : {}),
    }),
  [PLUGIN.VolumeZone]: (_a, deps) => volumeZone(deps.storage ?? EMPTY_STORAGE),
  [PLUGIN.PodTopologySpread]: (a, deps) => podTopologySpread(a, deps.workloads),
  [PLUGIN.InterPodAffinity]: (a) => interPodAffinity(a),
  [PLUGIN.NodeResourcesBalancedAllocation]: (a) =>
    balancedAllocation(a?.resources?.map((r: { name: string }) => r.name)),
  [PLUGIN.ImageLocality]: () => imageLocality(),
  [PLUGIN.NodeDeclaredFeatures]: () => nodeDeclaredFeatures(),
  [PLUGIN.DynamicResources]: (_a, deps) => dynamicResources(deps.deviceClasses),
  [PLUGIN.NodeLoadRules]: () => nodeLoadRules(),
  [PLUGIN.BurstGuard]: (_a, deps) =>
    burstGuard({ placements: deps.placements, ...(deps.burst ? { limit: deps.burst } : {}) }),
  [PLUGIN.LoadAware]: (a, deps) =>
    loadAware({
      cpuWeight: a?.cpuWeight ?? deps.loadWeights?.cpu,
      memoryWeight: a?.memoryWeight ?? deps.loadWeights?.memory,
    }),
  [PLUGIN.DefaultPreemption]: (a: DefaultPreemptionArgs, deps) =>
    defaultPreemption(a ?? {}, deps.disruptionBudgets ? { disruptionBudgets: deps.disruptionBudgets } : {}),
};

/** The default profile, in run order, with Score weights (multiPoint, as upstream's getDefaultPlugins). */
export const DEFAULT_PLUGINS: readonly { name: string; weight?: number }[] = [
  { name: PLUGIN.SchedulingGates },
  { name: PLUGIN.PrioritySort },
  { name: PLUGIN.NodeUnschedulable },
  { name: PLUGIN.NodeName },
  { name: PLUGIN.TaintToleration, weight: 3 },
  { name: PLUGIN.NodeAffinity, weight: 2 },
  { name: PLUGIN.NodePorts },
  { name: PLUGIN.NodeResourcesFit },
  { name: PLUGIN.VolumeRestrictions },
  { name: PLUGIN.NodeVolumeLimits },
  { name: PLUGIN.VolumeBinding },
  { name: PLUGIN.VolumeZone },
  { name: PLUGIN.PodTopologySpread, weight: 2 },
  { name: PLUGIN.InterPodAffinity, weight: 2 },
  // Upstream's applyDynamicResources puts it before DefaultPreemption; nodeload's only refuses what needs an
  // allocation (claims, and DRA-backed extended resources on nodes without them).
  { name: PLUGIN.DynamicResources },
  { name: PLUGIN.NodeResourcesBalancedAllocation, weight: 1 },
  { name: PLUGIN.ImageLocality, weight: 1 },
  // Appended by upstream's applyFeatureGates (NodeDeclaredFeatures, beta and on in v1.36): its Filter
  // runs after every other upstream filter.
  { name: PLUGIN.NodeDeclaredFeatures },
  { name: PLUGIN.NodeLoadRules },
  { name: PLUGIN.BurstGuard },
  { name: PLUGIN.LoadAware, weight: 5 },
  { name: PLUGIN.DefaultPreemption },
];

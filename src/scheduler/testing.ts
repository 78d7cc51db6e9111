/**
 * Test support for the scheduler's unit tests: plain-data fixtures built through the production
 * converters (toNodeInfo, toPodInfo, toRule, computeNodeLoad), so tests exercise the same arithmetic.
 */
import { toNodeInfo, toPodInfo } from '../cluster/convert.js';
import type { NodeInfo, PodInfo } from '../cluster/model.js';
import { computeNodeLoad } from '../load/model.js';
import { DEFAULT_LOAD_OPTIONS, type LoadOptions, type NodeLoad } from '../load/types.js';
import { DAEMONSET_ANNOTATION, DAEMONSET_ANNOTATION_VALUE } from '../rules/daemonset.js';
import { rulesForPod, toRule } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';

import { type CycleResult, runCycle } from './cycle.js';
import type { Profile } from './framework/runtime.js';
import { Snapshot } from './framework/snapshot.js';
import type { CycleContext } from './framework/types.js';
import { PlacementLog } from './placement-log.js';
import { buildProfile } from './profile/build.js';
import type { PluginDeps } from './profile/registry.js';

export const NOW = Date.parse('2026-11-29T12:00:00Z');
export const Gi = 2 ** 30;
export const Mi = 2 ** 20;

export interface NodeFixture {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  ready?: boolean;
  unschedulable?: boolean;
}

export function node(name: string, f: NodeFixture = {}): NodeInfo {
  const allocatable = { cpu: f.cpu ?? '4', memory: f.memory ?? '8Gi', pods: f.pods ?? '110' };
  return toNodeInfo({
    metadata: { name, uid: `uid-${name}`, resourceVersion: '1', labels: f.labels ?? {} },
    spec: { taints: f.taints, unschedulable: f.unschedulable },
    status: {
      capacity: allocatable,
      allocatable,
      conditions: [{ type: 'Ready', status: f.ready === false ? 'False' : 'True' }],
    },
  });
}

export interface PodFixture {
  namespace?: string;
  cpu?: string;
  memory?: string;
  nodeName?: string;
  labels?: Record<string, string>;
  priority?: number;
  schedulerName?: string;
  nodeSelector?: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: raw affinity terms as a user writes them.
  affinityTerms?: any[];
  tolerations?: { key?: string; operator?: string; value?: string; effect?: string }[];
  /** Created by the DaemonSet controller: its owner reference and the webhook's annotation. */
  daemonSet?: boolean;
  /** Only names a DaemonSet as its controller, as anyone creating a pod can. */
  claimsDaemonSet?: boolean;
  uid?: string;
  phase?: string;
}

export function pod(name: string, f: PodFixture = {}): PodInfo {
  const requests: Record<string, string> = {};
  if (f.cpu) requests['cpu'] = f.cpu;
  if (f.memory) requests['memory'] = f.memory;
  return toPodInfo({
    metadata: {
      namespace: f.namespace ?? 'default',
      name,
      uid: f.uid ?? `uid-${name}`,
      resourceVersion: '1',
      labels: f.labels ?? {},
      creationTimestamp: '2026-11-29T11:00:00Z',
      ...(f.daemonSet || f.claimsDaemonSet
        ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', controller: true }] }
        : {}),
      ...(f.daemonSet ? { annotations: { [DAEMONSET_ANNOTATION]: DAEMONSET_ANNOTATION_VALUE } } : {}),
    },
    spec: {
      schedulerName: f.schedulerName ?? 'nodeload-scheduler',
      nodeName: f.nodeName,
      priority: f.priority,
      nodeSelector: f.nodeSelector,
      tolerations: f.tolerations,
      ...(f.affinityTerms
        ? {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: f.affinityTerms },
              },
            },
          }
        : {}),
      containers: [{ name: 'c', resources: { requests } }],
    },
    status: { phase: f.phase ?? (f.nodeName ? 'Running' : 'Pending') },
  });
}

export function rule(
  name: string,
  spec: {
    maxCPU?: number;
    maxMemory?: number;
    allowedNodes?: string[];
    podSelector?: unknown;
    nodeSelector?: unknown;
    burst?: { maxPlacements: number; windowSeconds: number };
  } = {},
  namespace = 'default',
): NodeLoadRule {
  return toRule({
    metadata: { namespace, name, uid: `uid-${name}`, generation: 1, resourceVersion: '1' },
    spec,
  });
}

/** Requests-based loads (metrics not served) of the nodes with the given bound pods. */
export function loadsFor(
  nodes: NodeInfo[],
  pods: PodInfo[] = [],
  options: LoadOptions = DEFAULT_LOAD_OPTIONS,
): Map<string, NodeLoad> {
  return new Map(nodes.map((n) => [n.name, computeNodeLoad({ node: n, pods, now: NOW, options })]));
}

/** A snapshot holding the nodes and the bound pods. */
export function snapshotOf(nodes: readonly NodeInfo[], pods: readonly PodInfo[] = []): Snapshot {
  const snapshot = new Snapshot();
  for (const n of nodes) snapshot.setNode(n);
  for (const p of pods) snapshot.upsertPod(p);
  return snapshot;
}

/** A plugin's view of a cycle for `p` over these nodes and bound pods (no rules, requests-based loads). */
export function cycleContext(
  p: PodInfo,
  nodes: readonly NodeInfo[],
  pods: readonly PodInfo[] = [],
  namespaceLabels: CycleContext['namespaceLabels'] = () => ({}),
): CycleContext {
  return {
    pod: p,
    snapshot: snapshotOf(nodes, pods),
    rules: [],
    loadOptions: DEFAULT_LOAD_OPTIONS,
    now: 0,
    namespaceLabels,
  };
}

/** The default profile, with an empty placement log unless one is given. */
export function defaultProfile(deps: Partial<PluginDeps> = {}): Profile {
  return buildProfile('nodeload-scheduler', undefined, {
    placements: deps.placements ?? new PlacementLog({ now: () => NOW }),
    ...deps,
  });
}

export interface DecideOptions {
  nodes: readonly NodeInfo[];
  /** Bound pods. */
  pods?: readonly PodInfo[];
  /** Every rule; those covering the pod apply. */
  rules?: readonly NodeLoadRule[];
  loads?: ReadonlyMap<string, NodeLoad>;
  loadOptions?: LoadOptions;
  profile?: Profile;
}

/** One scheduling cycle for `pod`, with the default profile over requests-based loads. */
export function decide(p: PodInfo, o: DecideOptions): CycleResult {
  const pods = o.pods ?? [];
  const loadOptions = o.loadOptions ?? DEFAULT_LOAD_OPTIONS;
  return runCycle({
    profile: o.profile ?? defaultProfile(),
    pod: p,
    snapshot: snapshotOf(o.nodes, pods),
    rules: rulesForPod(o.rules ?? [], p),
    loads: o.loads ?? loadsFor([...o.nodes], [...pods], loadOptions),
    loadOptions,
    now: NOW,
  });
}

/**
 * Test support for the scheduler's unit tests: plain-data fixtures built through the production
 * converters (toNodeInfo, toPodInfo, toRule, computeNodeLoad), so tests exercise the same arithmetic.
 */
import { toNodeInfo, toPodInfo } from '../cluster/convert.js';
import type { NodeInfo, PodInfo } from '../cluster/model.js';
import { computeNodeLoad } from '../load/model.js';
import { DEFAULT_LOAD_OPTIONS, type LoadOptions, type NodeLoad } from '../load/types.js';
import { toRule } from '../rules/rule.js';
import type { NodeLoadRule } from '../rules/types.js';

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
  daemonSet?: boolean;
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
      ...(f.daemonSet ? { ownerReferences: [{ kind: 'DaemonSet', name: 'ds', controller: true }] } : {}),
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

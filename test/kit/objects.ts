/**
 * API objects as the API server sends them, for tests that feed informers or converters (a test then
 * runs the production conversions: toNodeInfo, toPodInfo, toRule), and the test suite's one clock.
 */
import type { InformerStats } from '../../src/cluster/informer.js';
import type { KubeObject } from '../../src/cluster/kube-object.js';

/** "Now" in every unit test that fixes the clock. */
export const NOW = Date.parse('2026-11-29T12:00:00Z');

export interface RawNodeOptions {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  ready?: boolean;
  unschedulable?: boolean;
  taints?: unknown[];
  /** metadata.creationTimestamp (default 2026-11-01T00:00:00Z). */
  created?: string;
}

export function rawNode(name: string, o: RawNodeOptions = {}): KubeObject {
  const resources = { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '1',
      labels: o.labels ?? {},
      creationTimestamp: o.created ?? '2026-11-01T00:00:00Z',
    },
    spec: { unschedulable: o.unschedulable ?? false, taints: o.taints ?? [] },
    status: {
      capacity: resources,
      allocatable: resources,
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

export function rawPod(
  namespace: string,
  name: string,
  o: {
    node?: string;
    cpu?: string;
    memory?: string;
    labels?: Record<string, string>;
    phase?: string;
    priority?: number;
  } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace,
      name,
      uid: `uid-${namespace}-${name}`,
      resourceVersion: '1',
      labels: o.labels ?? {},
      creationTimestamp: '2026-11-29T11:00:00Z',
    },
    spec: {
      nodeName: o.node,
      schedulerName: 'nodeload-scheduler',
      priority: o.priority ?? 0,
      containers: [
        { name: 'c', resources: { requests: { cpu: o.cpu ?? '100m', memory: o.memory ?? '128Mi' } } },
      ],
    },
    status: { phase: o.phase ?? (o.node ? 'Running' : 'Pending') },
  };
}

export function rawRule(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  status?: unknown,
): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'NodeLoadRule',
    metadata: {
      namespace,
      name,
      uid: `uid-rule-${name}`,
      generation: 1,
      resourceVersion: '1',
      creationTimestamp: '2026-11-02T00:00:00Z',
    },
    spec,
    ...(status ? { status } : {}),
  };
}

/** The stats of an informer that has done nothing yet (for fake informers). */
export function idleInformerStats(): InformerStats {
  return {
    lists: 0,
    watches: 0,
    restarts: 0,
    silentRestarts: 0,
    expired: 0,
    watchTimeouts: 0,
    events: { added: 0, modified: 0, deleted: 0, bookmark: 0, error: 0 },
  };
}

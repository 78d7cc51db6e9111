/** Fixtures for the PodTopologySpread tests: raw API objects through toPodInfo/toNodeInfo, one snapshot per case. */

import { toNodeInfo, toPodInfo } from '../../cluster/convert.js';
import type { NodeInfo, PodInfo } from '../../cluster/model.js';
import { type CycleContext, CycleState } from '../framework/types.js';
import type { NodeVerdict } from '../framework/verdict.js';
import { cycleContext } from '../testing.js';
import { workloadSelectors } from './default-selector.testing.js';
import { LABEL_HOSTNAME, type PodTopologySpreadArgs, podTopologySpread } from './pod-topology-spread.js';

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON
export type Json = any;
export const HOST = LABEL_HOSTNAME;
export const foo = { matchExpressions: [{ key: 'foo', operator: 'Exists' }] };
export const bar = { matchExpressions: [{ key: 'bar', operator: 'Exists' }] };
export const unschedulableTaint = [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }];

/** A raw topologySpreadConstraint. */
export function sc(
  maxSkew: number,
  topologyKey: string,
  when: string,
  labelSelector?: Json,
  extra: Json = {},
): Json {
  return { maxSkew, topologyKey, whenUnsatisfiable: when, labelSelector, ...extra };
}
export const hard = (skew: number, key: string, sel: Json = foo, extra?: Json) =>
  sc(skew, key, 'DoNotSchedule', sel, extra);
export const soft = (skew: number, key: string, sel: Json = foo, extra?: Json) =>
  sc(skew, key, 'ScheduleAnyway', sel, extra);

export function labelsOf(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of s.split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    out[k as string] = v ?? '';
  }
  return out;
}

export interface PodOpts {
  name?: string;
  node?: string;
  labels?: string;
  ns?: string;
  spread?: Json[];
  nodeSelector?: Record<string, string>;
  affinity?: [string, string, string[]];
  /** Controller kind and name; the pod gets the label owner=<name>, which its controller selects. */
  owner?: [string, string];
  terminating?: boolean;
}

const API_VERSIONS: Record<string, string> = {
  ReplicaSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  ReplicationController: 'v1',
  Job: 'batch/v1',
};

/**
 * In namespace default, the controllers `owner` names (each selects owner=<its name>) and the Service
 * front (svc=front).
 */
export const WORKLOADS = workloadSelectors({
  services: [{ namespace: 'default', name: 'front', selector: { matchLabels: { svc: 'front' } } }],
  replicaSets: ['rs1', 'rs2'].map((name) => ({
    namespace: 'default',
    name,
    selector: { matchLabels: { owner: name } },
  })),
  statefulSets: [{ namespace: 'default', name: 's', selector: { matchLabels: { owner: 's' } } }],
});

export function pod(o: PodOpts = {}): PodInfo {
  const req = o.affinity && {
    nodeSelectorTerms: [
      { matchExpressions: [{ key: o.affinity[0], operator: o.affinity[1], values: o.affinity[2] }] },
    ],
  };
  return toPodInfo({
    metadata: {
      name: o.name ?? 'p',
      namespace: o.ns ?? 'default',
      labels: { ...labelsOf(o.labels ?? 'foo'), ...(o.owner ? { owner: o.owner[1] } : {}) },
      ownerReferences: o.owner
        ? [{ apiVersion: API_VERSIONS[o.owner[0]], kind: o.owner[0], name: o.owner[1], controller: true }]
        : undefined,
      deletionTimestamp: o.terminating ? '2026-01-01T00:00:00Z' : undefined,
    },
    spec: {
      nodeName: o.node,
      containers: [{ name: 'c' }],
      topologySpreadConstraints: o.spread,
      nodeSelector: o.nodeSelector,
      affinity: req ? { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: req } } : undefined,
    },
    status: { phase: o.node ? 'Running' : 'Pending' },
  });
}

/** Existing pods, "a2 b1:bar y3" = two on node-a, one on node-b labelled bar, three on node-y (label foo by default). */
export function pods(s: string, o: Omit<PodOpts, 'node' | 'name' | 'labels'> = {}): PodInfo[] {
  const out: PodInfo[] = [];
  for (const tok of s.split(' ').filter(Boolean)) {
    const m = /^([a-z])(\d+)(?::(.*))?$/.exec(tok);
    if (!m) throw new Error(tok);
    for (let i = 0; i < Number(m[2]); i++) {
      out.push(
        pod({ ...o, name: `p-${m[1]}${out.length}-${tok}`, node: `node-${m[1]}`, labels: m[3] ?? 'foo' }),
      );
    }
  }
  return out;
}

export function node(name: string, labels: string, taints?: Json[]): NodeInfo {
  return toNodeInfo({
    metadata: { name: `node-${name}`, labels: labelsOf(labels) },
    spec: { taints },
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  });
}
/** node-a/node-b in zone1, node-x/node-y in zone2, each with `node=<name>`. */
export const zn = (n: string, z: string, extra = '', taints?: Json[]) =>
  node(n, `zone=${z},node=node-${n}${extra}`, taints);
export const FOUR = [zn('a', 'zone1'), zn('b', 'zone1'), zn('x', 'zone2'), zn('y', 'zone2')];
export const byNode = (...names: string[]) => names.map((n) => node(n, `node=node-${n}`));

export function setup(nodes: NodeInfo[], existing: PodInfo[], p: PodInfo): CycleContext {
  return cycleContext(p, nodes, existing);
}

export function runFilter(nodes: NodeInfo[], existing: PodInfo[], p: PodInfo, args?: PodTopologySpreadArgs) {
  const plugin = podTopologySpread(args, WORKLOADS);
  const ctx = setup(nodes, existing, p);
  const state = new CycleState();
  const pre = plugin.preFilter(state, ctx);
  const verdicts: NodeVerdict[] = [];
  for (const n of ctx.snapshot.list()) {
    const verdict: NodeVerdict = { node: n.name, feasible: false, reasons: [], rules: [] };
    if (!pre?.skip) plugin.filter(state, ctx, n, verdict);
    verdicts.push(verdict);
  }
  return { pre, verdicts };
}

/** Upstream's codes: Success = ok, Unschedulable = skew, UnschedulableAndUnresolvable = missing. */
export function outcome(v: NodeVerdict): string {
  const r = v.reasons[0];
  if (!r) return 'ok';
  return r.code === 'TopologySpreadMissingLabel' && r.unresolvable
    ? 'missing'
    : r.code === 'TopologySpreadSkew'
      ? 'skew'
      : r.code;
}

export function runScore(
  candidates: NodeInfo[],
  failed: NodeInfo[],
  existing: PodInfo[],
  p: PodInfo,
  args?: PodTopologySpreadArgs,
) {
  const plugin = podTopologySpread(args, WORKLOADS);
  const ctx = setup([...candidates, ...failed], existing, p);
  const names = new Set(candidates.map((n) => n.name));
  const feasible = ctx.snapshot.list().filter((n) => names.has(n.name));
  const state = new CycleState();
  if (plugin.preScore(state, ctx, feasible) === 'skip') return 'skip';
  const scores = new Float64Array(feasible.map((n) => plugin.score(state, ctx, n)));
  plugin.normalizeScore(state, ctx, scores);
  return feasible.map((n, i) => `${n.name.replace('node-', '')}:${scores[i]}`).join(' ');
}

export const hosts = (...names: string[]) => names.map((n) => node(n, `${HOST}=node-${n}`));
export const hostZone = (n: string, z: string) => node(n, `zone=${z},${HOST}=node-${n}`);

/**
 * Fixtures for the volume plugins' tests: raw API objects through the production converters (toPodInfo,
 * toNodeInfo, toClaimInfo, toVolumeInfo, toStorageClassInfo, toCsiNodeInfo), a StorageView over plain
 * maps whose changes the test fires, and a harness running PreFilter + Filter of some plugins per node.
 */

import { toNodeInfo, toPodInfo } from '../../cluster/convert.js';
import {
  toClaimInfo,
  toCsiNodeInfo,
  toStorageClassInfo,
  toVolumeInfo,
} from '../../cluster/convert-storage.js';
import type {
  ClaimInfo,
  CsiDriverInfo,
  CsiNodeInfo,
  CsiStorageCapacityInfo,
  NodeInfo,
  PodInfo,
  StorageClassInfo,
  VolumeAttachmentInfo,
  VolumeInfo,
} from '../../cluster/model.js';
import { type AnyPlugin, type CycleContext, CycleState } from '../framework/types.js';
import { addReason, type NodeVerdict } from '../framework/verdict.js';
import { cycleContext } from '../testing.js';
import type { StorageView } from './volume-common.js';

// biome-ignore lint/suspicious/noExplicitAny: raw API JSON
export type Json = any;

export const NS = 'default';
export const HOSTNAME = 'kubernetes.io/hostname';
export const ZONE = 'topology.kubernetes.io/zone';

export function node(name: string, labels: Record<string, string> = {}): NodeInfo {
  return toNodeInfo({
    metadata: { name, uid: `uid-${name}`, resourceVersion: '1', labels: { [HOSTNAME]: name, ...labels } },
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  });
}

/** Raw pod volumes: "data" → a PVC volume of claim data; {ephemeral: 'x'}, or any raw volume object. */
export type VolumeSpec = string | Json;

function rawVolume(v: VolumeSpec, i: number): Json {
  if (typeof v === 'string') return { name: `v${i}`, persistentVolumeClaim: { claimName: v } };
  if (v.ephemeral && typeof v.ephemeral === 'string')
    return { name: v.ephemeral, ephemeral: { volumeClaimTemplate: { spec: {} } } };
  return { name: `v${i}`, ...v };
}

export function pod(
  name: string,
  volumes: VolumeSpec[] = [],
  o: { node?: string; ns?: string } = {},
): PodInfo {
  return toPodInfo({
    metadata: { name, namespace: o.ns ?? NS, uid: `uid-${name}`, resourceVersion: '1' },
    spec: { nodeName: o.node, containers: [{ name: 'c' }], volumes: volumes.map(rawVolume) },
    status: { phase: o.node ? 'Running' : 'Pending' },
  });
}

export interface ClaimOpts {
  ns?: string;
  /** null: spec.storageClassName absent. */
  class?: string | null;
  modes?: string[];
  request?: string;
  volumeName?: string;
  /** Adds pv.kubernetes.io/bind-completed (with volumeName: fully bound). */
  bound?: boolean;
  selectedNode?: string;
  phase?: string;
  selector?: Json;
  volumeMode?: string;
  /** spec.volumeAttributesClassName. */
  vac?: string;
  deleting?: boolean;
  rv?: string;
}

export function claim(name: string, o: ClaimOpts = {}): ClaimInfo {
  const annotations: Record<string, string> = {};
  if (o.bound) annotations['pv.kubernetes.io/bind-completed'] = 'yes';
  if (o.selectedNode) annotations['volume.kubernetes.io/selected-node'] = o.selectedNode;
  return toClaimInfo({
    metadata: {
      name,
      namespace: o.ns ?? NS,
      uid: `uid-${name}`,
      resourceVersion: o.rv ?? '10',
      annotations,
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      ...(o.class === null ? {} : { storageClassName: o.class ?? 'wffc' }),
      accessModes: o.modes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: o.request ?? '1Gi' } },
      volumeName: o.volumeName,
      selector: o.selector,
      volumeMode: o.volumeMode,
      volumeAttributesClassName: o.vac,
    },
    status: { phase: o.phase ?? (o.bound ? 'Bound' : 'Pending') },
  });
}

export interface PvOpts {
  class?: string;
  capacity?: string;
  modes?: string[];
  /** [namespace/]claim, with the claim's fixture uid. */
  claimRef?: string;
  phase?: string;
  labels?: Record<string, string>;
  /** Hostnames the PV's node affinity allows. */
  hosts?: string[];
  /** Raw nodeSelectorTerms. */
  terms?: Json[];
  csi?: { driver: string; handle?: string };
  /** A raw in-tree source merged into the spec, e.g. { awsElasticBlockStore: { volumeID } }. */
  source?: Json;
  volumeMode?: string;
  /** spec.volumeAttributesClassName. */
  vac?: string;
  /** The legacy volume.beta.kubernetes.io/storage-class annotation. */
  betaClass?: string;
  deleting?: boolean;
  rv?: string;
}

export function pv(name: string, o: PvOpts = {}): VolumeInfo {
  const terms =
    o.terms ??
    (o.hosts ? [{ matchExpressions: [{ key: HOSTNAME, operator: 'In', values: o.hosts }] }] : undefined);
  const ref = o.claimRef?.includes('/') ? o.claimRef.split('/') : [NS, o.claimRef];
  return toVolumeInfo({
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: o.rv ?? '20',
      labels: o.labels,
      ...(o.betaClass ? { annotations: { 'volume.beta.kubernetes.io/storage-class': o.betaClass } } : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      storageClassName: o.class ?? 'wffc',
      volumeAttributesClassName: o.vac,
      capacity: { storage: o.capacity ?? '1Gi' },
      accessModes: o.modes ?? ['ReadWriteOnce'],
      volumeMode: o.volumeMode,
      ...(o.claimRef ? { claimRef: { namespace: ref[0], name: ref[1], uid: `uid-${ref[1]}` } } : {}),
      ...(terms ? { nodeAffinity: { required: { nodeSelectorTerms: terms } } } : {}),
      ...(o.csi ? { csi: { driver: o.csi.driver, volumeHandle: o.csi.handle ?? name } } : {}),
      ...o.source,
    },
    status: { phase: o.phase ?? (o.claimRef ? 'Bound' : 'Available') },
  });
}

export function storageClass(
  name: string,
  o: { provisioner?: string; mode?: string; zones?: string[] } = {},
): StorageClassInfo {
  return toStorageClassInfo({
    metadata: { name, resourceVersion: '1' },
    provisioner: o.provisioner ?? 'kubernetes.io/no-provisioner',
    volumeBindingMode: o.mode ?? 'WaitForFirstConsumer',
    ...(o.zones ? { allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE, values: o.zones }] }] } : {}),
  });
}

export const WFFC = storageClass('wffc');
export const DYNAMIC = storageClass('dynamic', { provisioner: 'csi.example.com' });
export const IMMEDIATE = storageClass('immediate', { provisioner: 'csi.example.com', mode: 'Immediate' });

export function csiNode(name: string, drivers: Record<string, number | undefined>): CsiNodeInfo {
  return toCsiNodeInfo({
    metadata: { name, resourceVersion: '1' },
    spec: {
      drivers: Object.entries(drivers).map(([d, count]) => ({
        name: d,
        nodeID: name,
        ...(count === undefined ? {} : { allocatable: { count } }),
      })),
    },
  });
}

export interface FakeStorage extends StorageView {
  readonly claims: Map<string, ClaimInfo>;
  readonly volumes: Map<string, VolumeInfo>;
  readonly storageClasses: Map<string, StorageClassInfo>;
  readonly csiNodes: Map<string, CsiNodeInfo>;
  readonly csiDrivers: Map<string, CsiDriverInfo>;
  readonly csiStorageCapacities: Map<string, CsiStorageCapacityInfo>;
  readonly volumeAttachments: Map<string, VolumeAttachmentInfo>;
  readonly pods: Map<string, PodInfo>;
  /** Replaces objects (as an informer event) and notifies the listeners. */
  put(...objs: (ClaimInfo | VolumeInfo)[]): void;
  changed(): void;
}

function isClaim(o: ClaimInfo | VolumeInfo): o is ClaimInfo {
  return 'requestBytes' in o;
}

export function storage(
  o: {
    claims?: ClaimInfo[];
    pvs?: VolumeInfo[];
    classes?: StorageClassInfo[];
    csiNodes?: CsiNodeInfo[];
    csiDrivers?: CsiDriverInfo[];
    capacities?: CsiStorageCapacityInfo[];
    attachments?: VolumeAttachmentInfo[];
    pods?: PodInfo[];
  } = {},
): FakeStorage {
  const listeners = new Set<() => void>();
  const s: FakeStorage = {
    claims: new Map((o.claims ?? []).map((c) => [`${c.namespace}/${c.name}`, c])),
    volumes: new Map((o.pvs ?? []).map((v) => [v.name, v])),
    storageClasses: new Map((o.classes ?? [WFFC, DYNAMIC, IMMEDIATE]).map((c) => [c.name, c])),
    csiNodes: new Map((o.csiNodes ?? []).map((c) => [c.name, c])),
    csiDrivers: new Map((o.csiDrivers ?? []).map((d) => [d.name, d])),
    csiStorageCapacities: new Map((o.capacities ?? []).map((c) => [`${c.namespace}/${c.name}`, c])),
    volumeAttachments: new Map((o.attachments ?? []).map((a) => [a.name, a])),
    pods: new Map((o.pods ?? []).map((p) => [`${p.namespace}/${p.name}`, p])),
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    put(...objs) {
      for (const x of objs) {
        if (isClaim(x)) s.claims.set(`${x.namespace}/${x.name}`, x);
        else s.volumes.set(x.name, x);
      }
      s.changed();
    },
    changed() {
      for (const fn of [...listeners]) fn();
    },
  };
  return s;
}

export function context(nodes: NodeInfo[], existing: PodInfo[], p: PodInfo): CycleContext {
  return cycleContext(p, nodes, existing);
}

export interface FilterRun {
  state: CycleState;
  ctx: CycleContext;
  /** Per node: 'ok', or the first reason's text. */
  outcome: Record<string, string>;
  verdicts: NodeVerdict[];
  skipped: boolean;
}

/** PreFilter then Filter of one plugin on every node, as the runtime does it. */
export function runFilter(
  plugin: AnyPlugin,
  nodes: NodeInfo[],
  existing: PodInfo[],
  p: PodInfo,
  prepare?: (ctx: CycleContext) => void,
): FilterRun {
  const ctx = context(nodes, existing, p);
  prepare?.(ctx);
  const state = new CycleState();
  const pre = plugin.preFilter?.(state, ctx);
  const verdicts: NodeVerdict[] = [];
  const outcome: Record<string, string> = {};
  for (const n of ctx.snapshot.list()) {
    const verdict: NodeVerdict = { node: n.name, feasible: false, reasons: [], rules: [] };
    if (pre?.reject) addReason(verdict, { ...pre.reject, plugin: plugin.name });
    else if (!pre?.skip) plugin.filter?.(state, ctx, n, verdict);
    verdict.feasible = verdict.reasons.length === 0;
    verdicts.push(verdict);
    outcome[n.name] = verdict.reasons[0]?.reason ?? 'ok';
  }
  return { state, ctx, outcome, verdicts, skipped: pre?.skip === true };
}

/** "a b" → {a: value, b: value}. */
export function each(names: string, value: string): Record<string, string> {
  return Object.fromEntries(names.split(' ').map((n) => [n, value]));
}

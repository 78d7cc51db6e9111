// The independent checker: given a run's final cluster state (its nodes, the pods of its namespaces and
// the namespaces), verifies every hard constraint kube-scheduler's default profile guarantees for each pod
// a scheduler placed. Written from the Kubernetes API semantics; it imports nothing from src/.
//
// Checks run against the FINAL state, so each is phrased to be sound for placements that were valid when
// they were made (pods are only ever added during a run):
//  * resources: a node's total requests exceed allocatable for a resource some scheduled pod requests;
//  * ports, node selection, taints, unschedulable: per pod, as the filter would;
//  * required anti-affinity: no two pods in one domain where either one's term matches the other (unless
//    both were pre-bound by the scenario) — covers the incoming pod's terms and existing pods' symmetry;
//  * required affinity: each term's domain holds another pod matching all terms, or the pod was plausibly
//    the first of its group (it matches its own terms and no pre-bound pod matches them anywhere);
//  * topology spread (DoNotSchedule): count in the pod's domain − global minimum over eligible domains
//    ≤ maxSkew (minimum 0 when fewer domains than minDomains), counting as kube-scheduler does. Later pods
//    matching the selector could only break this if they lacked the constraint: scenarios avoid that.
import type {
  V1CSIDriver,
  V1CSINode,
  V1CSIStorageCapacity,
  V1Namespace,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodAffinityTerm,
  V1StorageClass,
  V1TopologySpreadConstraint,
  V1VolumeAttachment,
} from '@kubernetes/client-node';
import {
  hostPorts,
  nodeAffinityMatches,
  podRequests,
  selectorMatches,
  toResourceList,
  UNSCHEDULABLE_TAINT,
  untoleratedTaint,
} from './semantics.js';

export interface ClusterSnapshot {
  nodes: V1Node[];
  /** Every pod of the run's namespaces. */
  pods: V1Pod[];
  namespaces: V1Namespace[];
  /** The claims of the run's namespaces, the PVs they are bound to, the run's CSINodes. */
  claims?: V1PersistentVolumeClaim[];
  volumes?: V1PersistentVolume[];
  csiNodes?: V1CSINode[];
  /** The run's VolumeAttachments (their PVs are in `volumes`). */
  volumeAttachments?: V1VolumeAttachment[];
  /** The run's StorageClasses, CSIDrivers and CSIStorageCapacities (fixed while a run lasts). */
  storageClasses?: V1StorageClass[];
  csiDrivers?: V1CSIDriver[];
  storageCapacities?: V1CSIStorageCapacity[];
}

export interface Violation {
  /** `namespace/name` of the offending scheduled pod(s). */
  pod: string;
  node: string;
  plugin: string;
  message: string;
}

export const podKey = (p: V1Pod): string => `${p.metadata?.namespace}/${p.metadata?.name}`;

export const isActive = (p: V1Pod): boolean =>
  Boolean(p.spec?.nodeName) &&
  !p.metadata?.deletionTimestamp &&
  p.status?.phase !== 'Succeeded' &&
  p.status?.phase !== 'Failed';

interface Ctx {
  nodes: Map<string, V1Node>;
  bound: V1Pod[];
  byNode: Map<string, V1Pod[]>;
  nsLabels: Map<string, Record<string, string>>;
  scheduled: (p: V1Pod) => boolean;
  out: Violation[];
}

/**
 * Every hard-constraint violation of the pods `scheduled` says a scheduler placed (the others — pre-bound
 * by the scenario — are context only).
 */
export function checkHardConstraints(snap: ClusterSnapshot, scheduled: (p: V1Pod) => boolean): Violation[] {
  const bound = snap.pods.filter(isActive);
  const byNode = new Map<string, V1Pod[]>();
  for (const p of bound)
    byNode.set(p.spec?.nodeName as string, [...(byNode.get(p.spec?.nodeName as string) ?? []), p]);
  const ctx: Ctx = {
    nodes: new Map(snap.nodes.map((n) => [n.metadata?.name as string, n])),
    bound,
    byNode,
    nsLabels: new Map(snap.namespaces.map((n) => [n.metadata?.name as string, n.metadata?.labels ?? {}])),
    scheduled,
    out: [],
  };
  for (const p of bound) {
    if (!scheduled(p)) continue;
    const node = ctx.nodes.get(p.spec?.nodeName as string);
    if (!node) {
      violate(ctx, p, p.spec?.nodeName as string, 'Isolation', 'bound to a node outside its run');
      continue;
    }
    checkNode(ctx, p, node);
    checkPorts(ctx, p, node);
    checkAffinity(ctx, p, node);
    checkSpread(ctx, p, node);
  }
  checkAntiAffinity(ctx);
  for (const [name, node] of ctx.nodes) checkResources(ctx, node, ctx.byNode.get(name) ?? []);
  return ctx.out;
}

function violate(ctx: Ctx, p: V1Pod | string, node: string, plugin: string, message: string): void {
  ctx.out.push({ pod: typeof p === 'string' ? p : podKey(p), node, plugin, message });
}

const nodeName = (n: V1Node) => n.metadata?.name as string;
const labelsOf = (n: V1Node) => n.metadata?.labels ?? {};

function checkNode(ctx: Ctx, p: V1Pod, node: V1Node): void {
  if (node.spec?.unschedulable && untoleratedTaint(p, [UNSCHEDULABLE_TAINT]))
    violate(ctx, p, nodeName(node), 'NodeUnschedulable', 'node is unschedulable (cordoned)');
  const taint = untoleratedTaint(p, node.spec?.taints);
  if (taint) {
    const t = `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
    violate(ctx, p, nodeName(node), 'TaintToleration', `untolerated taint ${t}`);
  }
  if (!nodeAffinityMatches(p, node))
    violate(
      ctx,
      p,
      nodeName(node),
      'NodeAffinity',
      'node does not match nodeSelector / required node affinity',
    );
}

function checkPorts(ctx: Ctx, p: V1Pod, node: V1Node): void {
  const mine = hostPorts(p);
  if (!mine.length) return;
  for (const other of ctx.byNode.get(nodeName(node)) ?? []) {
    if (other === p) continue;
    for (const a of mine) {
      for (const b of hostPorts(other)) {
        const ipClash = a.ip === b.ip || a.ip === '0.0.0.0' || b.ip === '0.0.0.0';
        if (a.port === b.port && a.protocol === b.protocol && ipClash) {
          violate(
            ctx,
            p,
            nodeName(node),
            'NodePorts',
            `${a.protocol} ${a.ip}:${a.port} also used by ${podKey(other)}`,
          );
        }
      }
    }
  }
}

function checkResources(ctx: Ctx, node: V1Node, onNode: V1Pod[]): void {
  const mine = onNode.filter(ctx.scheduled);
  if (!mine.length) return;
  const alloc = toResourceList(node.status?.allocatable);
  const who = mine.map(podKey).join(', ');
  const podsAllowed = alloc.get('pods') ?? 0n;
  if (BigInt(onNode.length) * 1000n > podsAllowed)
    violate(
      ctx,
      who,
      nodeName(node),
      'NodeResourcesFit',
      `${onNode.length} pods > allocatable pods ${podsAllowed / 1000n}`,
    );
  const total = new Map<string, bigint>();
  const requestedByMine = new Set<string>();
  for (const p of onNode) {
    for (const [k, v] of podRequests(p)) {
      total.set(k, (total.get(k) ?? 0n) + v);
      if (v > 0n && ctx.scheduled(p)) requestedByMine.add(k);
    }
  }
  for (const r of requestedByMine) {
    const want = total.get(r) ?? 0n;
    const have = alloc.get(r) ?? 0n;
    if (want > have) {
      violate(
        ctx,
        who,
        nodeName(node),
        'NodeResourcesFit',
        `${r}: requested ${fmt(want)} > allocatable ${fmt(have)}`,
      );
    }
  }
}

const fmt = (m: bigint) => (m % 1000n === 0n ? String(m / 1000n) : `${m}m`);

// ---- inter-pod affinity ---------------------------------------------------------------------------------

/** Whether `candidate` is selected by `term` of `owner` (namespaces, namespaceSelector, matchLabelKeys). */
export function termSelects(
  term: V1PodAffinityTerm,
  owner: V1Pod,
  candidate: V1Pod,
  nsLabels: Map<string, Record<string, string>>,
): boolean {
  const ns = candidate.metadata?.namespace as string;
  const explicit = term.namespaces ?? [];
  if (!explicit.length && !term.namespaceSelector) {
    if (ns !== owner.metadata?.namespace) return false;
  } else if (!explicit.includes(ns) && !selectorMatches(term.namespaceSelector, nsLabels.get(ns) ?? {})) {
    return false;
  }
  if (!term.labelSelector) return false;
  const ownerLabels = owner.metadata?.labels ?? {};
  const sel = structuredClone(term.labelSelector);
  sel.matchExpressions ??= [];
  for (const [keys, operator] of [
    [term.matchLabelKeys, 'In'],
    [term.mismatchLabelKeys, 'NotIn'],
  ] as const) {
    for (const k of keys ?? []) {
      const v = ownerLabels[k];
      if (v !== undefined) sel.matchExpressions.push({ key: k, operator, values: [v] });
    }
  }
  return selectorMatches(sel, candidate.metadata?.labels ?? {});
}

function sameDomain(ctx: Ctx, a: V1Pod, b: V1Pod, key: string): boolean {
  const va = ctx.nodes.get(a.spec?.nodeName as string)?.metadata?.labels?.[key];
  const vb = ctx.nodes.get(b.spec?.nodeName as string)?.metadata?.labels?.[key];
  return va !== undefined && va === vb;
}

function checkAffinity(ctx: Ctx, p: V1Pod, node: V1Node): void {
  const terms = p.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  if (!terms.length) return;
  for (const t of terms) {
    if (labelsOf(node)[t.topologyKey] === undefined) {
      violate(ctx, p, nodeName(node), 'InterPodAffinity', `node lacks topology key ${t.topologyKey}`);
      return;
    }
  }
  const matchesAll = (q: V1Pod) => terms.every((t) => termSelects(t, p, q, ctx.nsLabels));
  const others = ctx.bound.filter((q) => q !== p && matchesAll(q));
  const unsatisfied = terms.filter((t) => !others.some((q) => sameDomain(ctx, p, q, t.topologyKey)));
  if (!unsatisfied.length) return;
  // The first pod of a group with affinity to itself: allowed when no pod matched the terms before it.
  const sameTerms = (q: V1Pod) =>
    JSON.stringify(q.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution) ===
    JSON.stringify(terms);
  const blocking = others.filter((q) => !ctx.scheduled(q) || sameTerms(q));
  if (matchesAll(p) && blocking.length === 0) return;
  const why = blocking.length
    ? `matching pods exist elsewhere (${blocking.map(podKey).join(', ')})`
    : 'no matching pod in the domain and the pod does not match its own terms';
  violate(
    ctx,
    p,
    nodeName(node),
    'InterPodAffinity',
    `required affinity (${unsatisfied.map((t) => t.topologyKey).join(', ')}) unsatisfied: ${why}`,
  );
}

function checkAntiAffinity(ctx: Ctx): void {
  for (const x of ctx.bound) {
    const terms = x.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    for (const t of terms) {
      for (const y of ctx.bound) {
        if (y === x || !sameDomain(ctx, x, y, t.topologyKey) || !termSelects(t, x, y, ctx.nsLabels)) continue;
        const xs = ctx.scheduled(x);
        const ys = ctx.scheduled(y);
        if (!xs && !ys) continue;
        const culprit = xs ? x : y;
        const how = xs
          ? `its anti-affinity (${t.topologyKey}) matches ${podKey(y)}`
          : `anti-affinity (${t.topologyKey}) of ${podKey(x)} matches it`;
        violate(ctx, culprit, culprit.spec?.nodeName as string, 'InterPodAffinity', how);
      }
    }
  }
}

// ---- topology spread ------------------------------------------------------------------------------------

function spreadSelector(c: V1TopologySpreadConstraint, p: V1Pod) {
  const sel = structuredClone(c.labelSelector ?? {});
  sel.matchExpressions ??= [];
  for (const k of c.matchLabelKeys ?? []) {
    const v = p.metadata?.labels?.[k];
    if (v !== undefined) sel.matchExpressions.push({ key: k, operator: 'In', values: [v] });
  }
  return sel;
}

function checkSpread(ctx: Ctx, p: V1Pod, node: V1Node): void {
  const constraints = (p.spec?.topologySpreadConstraints ?? []).filter(
    (c) => c.whenUnsatisfiable === 'DoNotSchedule',
  );
  for (const c of constraints) {
    const key = c.topologyKey;
    const value = labelsOf(node)[key];
    if (value === undefined) {
      violate(ctx, p, nodeName(node), 'PodTopologySpread', `node lacks topology key ${key}`);
      continue;
    }
    const sel = spreadSelector(c, p);
    if (!c.labelSelector || (!Object.keys(sel.matchLabels ?? {}).length && !sel.matchExpressions?.length))
      continue;
    const eligible = [...ctx.nodes.values()].filter(
      (n) =>
        constraints.every((k) => labelsOf(n)[k.topologyKey] !== undefined) &&
        ((c.nodeAffinityPolicy ?? 'Honor') !== 'Honor' || nodeAffinityMatches(p, n)) &&
        ((c.nodeTaintsPolicy ?? 'Ignore') !== 'Honor' || !untoleratedTaint(p, n.spec?.taints)),
    );
    const counts = new Map<string, number>();
    for (const n of eligible) {
      const v = labelsOf(n)[key] as string;
      const matching = (ctx.byNode.get(nodeName(n)) ?? []).filter(
        (q) =>
          q !== p &&
          q.metadata?.namespace === p.metadata?.namespace &&
          selectorMatches(sel, q.metadata?.labels),
      );
      counts.set(v, (counts.get(v) ?? 0) + matching.length);
    }
    const self = selectorMatches(sel, p.metadata?.labels) ? 1 : 0;
    const here = (counts.get(value) ?? 0) + self;
    if (counts.has(value)) counts.set(value, here);
    let min = counts.size ? Math.min(...counts.values()) : 0;
    if (counts.size < (c.minDomains ?? 1)) min = 0;
    if (here - min > c.maxSkew) {
      const dist = [...counts].map(([k, v]) => `${k}=${v}`).join(' ');
      violate(
        ctx,
        p,
        nodeName(node),
        'PodTopologySpread',
        `${key}: skew ${here - min} > maxSkew ${c.maxSkew} (${dist}, min ${min})`,
      );
    }
  }
}

// ---- NodeLoadRule (load-aware scenarios, nodeload runs only) --------------------------------------------

export interface RuleForCheck {
  name: string;
  namespace: string;
  maxCPU?: number;
  maxMemory?: number;
  allowedNodes?: string[];
  podSelector?: { matchLabels?: Record<string, string> };
  nodeSelector?: { matchLabels?: Record<string, string> };
  burst?: { maxPlacements: number };
}

/** The rules' guarantees in requests mode: allowed / selected nodes, CPU/memory % after placement, burst cap. */
export function checkRules(
  snap: ClusterSnapshot,
  rules: RuleForCheck[],
  scheduled: (p: V1Pod) => boolean,
): Violation[] {
  const out: Violation[] = [];
  const bound = snap.pods.filter(isActive);
  for (const node of snap.nodes) {
    const name = nodeName(node);
    const onNode = bound.filter((p) => p.spec?.nodeName === name);
    const alloc = toResourceList(node.status?.allocatable);
    const total = (r: string) => onNode.reduce((s, p) => s + (podRequests(p).get(r) ?? 0n), 0n);
    for (const rule of rules) {
      const covered = onNode.filter(
        (p) =>
          scheduled(p) &&
          p.metadata?.namespace === rule.namespace &&
          selectorMatches(rule.podSelector ?? {}, p.metadata?.labels),
      );
      if (!covered.length) continue;
      const who = covered.map(podKey).join(', ');
      const v = (message: string) =>
        out.push({ pod: who, node: name, plugin: `NodeLoadRule ${rule.name}`, message });
      if (rule.allowedNodes?.length && !rule.allowedNodes.includes(name)) v('node not in allowedNodes');
      if (rule.nodeSelector && !selectorMatches(rule.nodeSelector, labelsOf(node)))
        v('node does not match the rule nodeSelector');
      for (const [r, max] of [
        ['cpu', rule.maxCPU ?? 80],
        ['memory', rule.maxMemory ?? 80],
      ] as const) {
        const have = alloc.get(r) ?? 0n;
        if (total(r) * 100n > BigInt(max) * have) v(`${r} ${fmt(total(r))} of ${fmt(have)} > ${max}%`);
      }
      if (rule.burst && covered.length > rule.burst.maxPlacements)
        v(`${covered.length} placements > burst maxPlacements ${rule.burst.maxPlacements}`);
    }
  }
  return out;
}

// Kubernetes semantics the checker needs, written from the API documentation (independent of
// src/scheduler): quantities, label selectors, node selectors, tolerations and a pod's effective requests.
import type {
  V1Container,
  V1LabelSelector,
  V1Node,
  V1NodeSelectorRequirement,
  V1NodeSelectorTerm,
  V1Pod,
  V1Taint,
  V1Toleration,
} from '@kubernetes/client-node';

// ---- quantities -------------------------------------------------------------------------------------

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/** A quantity in thousandths of its unit, rounded up (1 → 1000, "250m" → 250, "1Ki" → 1024000). */
export function milli(q: string | number | undefined): bigint {
  if (q === undefined) return 0n;
  const text = String(q).trim();
  const m = QUANTITY.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new Error(`invalid quantity "${text}"`);
  const [, sign, whole = '', frac = '', suffix = '', exp] = m;
  let num = BigInt(`${whole}${frac}` || '0') * 1000n;
  let pow10 = -frac.length + (exp !== undefined ? Number(exp) : (DECIMAL[suffix] ?? 0));
  const bin = BINARY[suffix];
  if (bin) num *= bin;
  if (pow10 >= 0) num *= 10n ** BigInt(pow10);
  else {
    const div = 10n ** BigInt(-pow10);
    num = (num + div - 1n) / div; // round up, as the API's MilliValue does
    pow10 = 0;
  }
  return sign === '-' ? -num : num;
}

export type ResourceList = Map<string, bigint>;

function addInto(into: ResourceList, from: ResourceList): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0n) + v);
}

function maxInto(into: ResourceList, from: ResourceList): void {
  for (const [k, v] of from) if (v > (into.get(k) ?? 0n)) into.set(k, v);
}

export function toResourceList(list: Record<string, string> | undefined): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of Object.entries(list ?? {})) out.set(k, milli(v));
  return out;
}

function containerRequests(c: V1Container): ResourceList {
  // The API server defaults requests from limits; read back objects already carry them, but be explicit.
  const out = toResourceList(c.resources?.limits);
  for (const [k, v] of toResourceList(c.resources?.requests)) out.set(k, v);
  return out;
}

const isSidecar = (c: V1Container) => c.restartPolicy === 'Always';
const podLevelResource = (name: string) =>
  name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');

/**
 * The requests a pod needs from a node (KEP-753 sidecar formula, pod-level resources, overhead):
 *   sum(app containers) + sum(sidecars), and at least, for each init container i in order,
 *   sidecars up to and including i (a sidecar) or requests(i) + sidecars before i (a regular one);
 *   pod-level spec.resources.requests replace cpu, memory and hugepages-*; overhead is added.
 */
export function podRequests(pod: V1Pod): ResourceList {
  const spec = pod.spec;
  const total: ResourceList = new Map();
  if (!spec) return total;
  for (const c of spec.containers) addInto(total, containerRequests(c));
  const sidecars: ResourceList = new Map();
  const initMax: ResourceList = new Map();
  for (const c of spec.initContainers ?? []) {
    const r = containerRequests(c);
    if (isSidecar(c)) {
      addInto(sidecars, r);
      addInto(total, r);
      maxInto(initMax, sidecars);
    } else {
      const during = new Map(sidecars);
      addInto(during, r);
      maxInto(initMax, during);
    }
  }
  maxInto(total, initMax);
  for (const [k, v] of toResourceList(spec.resources?.requests)) if (podLevelResource(k)) total.set(k, v);
  addInto(total, toResourceList(spec.overhead));
  return total;
}

/** Host ports a pod occupies: app containers and sidecars, hostPort > 0. */
export function hostPorts(pod: V1Pod): Array<{ ip: string; protocol: string; port: number }> {
  const spec = pod.spec;
  if (!spec) return [];
  const containers = [...(spec.initContainers ?? []).filter(isSidecar), ...spec.containers];
  return containers.flatMap((c) =>
    (c.ports ?? [])
      .filter((p) => (p.hostPort ?? 0) > 0)
      .map((p) => ({ ip: p.hostIP || '0.0.0.0', protocol: p.protocol || 'TCP', port: p.hostPort as number })),
  );
}

// ---- selectors --------------------------------------------------------------------------------------

/** metav1.LabelSelector semantics: undefined/null matches nothing, {} matches everything. */
export function selectorMatches(
  sel: V1LabelSelector | undefined,
  labels: Record<string, string> = {},
): boolean {
  if (!sel) return false;
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key];
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(value as string)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(value as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

const INTEGER = /^[+-]?\d+$/;

function requirementMatches(r: V1NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (
        value === undefined ||
        !INTEGER.test(value) ||
        values.length !== 1 ||
        !INTEGER.test(values[0] as string)
      )
        return false;
      const have = BigInt(value);
      const want = BigInt(values[0] as string);
      return r.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

/** A node selector term: all expressions and fields match; a term with neither matches nothing. */
export function termMatches(t: V1NodeSelectorTerm, node: V1Node): boolean {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  const labelValue = (k: string) => (Object.hasOwn(labels, k) ? labels[k] : undefined);
  return (
    exprs.every((r) => requirementMatches(r, labelValue(r.key))) &&
    fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, node.metadata?.name))
  );
}

/** spec.nodeSelector and required node affinity (terms ORed). */
export function nodeAffinityMatches(pod: V1Pod, node: V1Node): boolean {
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const req = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!req) return true;
  return req.nodeSelectorTerms.some((t) => termMatches(t, node));
}

// ---- taints -----------------------------------------------------------------------------------------

export function tolerates(t: V1Toleration, taint: V1Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  const op = t.operator || 'Equal';
  if (!t.key) return op === 'Exists';
  if (t.key !== taint.key) return false;
  if (op === 'Exists') return true;
  return op === 'Equal' && (t.value ?? '') === (taint.value ?? '');
}

/** The first NoSchedule/NoExecute taint of the node the pod does not tolerate. */
export function untoleratedTaint(pod: V1Pod, taints: readonly V1Taint[] | undefined): V1Taint | undefined {
  const tolerations = pod.spec?.tolerations ?? [];
  return (taints ?? []).find(
    (taint) =>
      (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') &&
      !tolerations.some((t) => tolerates(t, taint)),
  );
}

export const UNSCHEDULABLE_TAINT: V1Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

/**
 * What the webhook leaves to the pod's own scheduler, said out loud: the opt-out label, and the
 * capability gate — pods using a part of kube-scheduler's contract nodeload does not implement yet.
 *
 * The gate reads the raw pod JSON of the AdmissionReview (not the parsed PodObject): it must never
 * make a strange pod fail to parse, and it needs fields the patch never touches.
 */
import { parseQuantity } from '../cluster/quantity.js';

/** On a pod or a namespace: nodeload never steers the pod (`kubectl label ns shop nodeload.example.com/scheduling=disabled`). */
export const OPT_OUT_LABEL = 'nodeload.example.com/scheduling';
export const OPT_OUT_VALUE = 'disabled';
/** Why a pod covered by NodeLoadRules was not handed to nodeload's scheduler ("; "-separated reasons). */
export const NOT_STEERED_ANNOTATION = 'nodeload.example.com/not-steered';

export function optedOut(labels: Readonly<Record<string, string>> | null | undefined): boolean {
  return labels?.[OPT_OUT_LABEL] === OPT_OUT_VALUE;
}

// biome-ignore lint/suspicious/noExplicitAny: the pod is raw, untrusted JSON.
type Json = any;

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(v: unknown): Json[] {
  return Array.isArray(v) ? v : [];
}

const SHOWN = 3;

const quoted = (name: string) => `"${name.slice(0, 253)}"`;

/** `ResourceClaim "a"`, `ResourceClaims "a", "b", "c" and 2 more` (items as `show` writes them). */
function named<T>(singular: string, plural: string, items: T[], show: (item: T) => string): string {
  const shown = items.slice(0, SHOWN).map(show);
  const more = items.length > SHOWN ? ` and ${items.length - SHOWN} more` : '';
  return `${items.length === 1 ? singular : plural} ${shown.join(', ')}${more}`;
}

function names(items: Json[], pick: (item: Json) => unknown): string[] {
  return items.flatMap((item) => {
    if (!isObject(item)) return [];
    const v = pick(item);
    return v === undefined || v === null || v === false ? [] : [typeof v === 'string' && v ? v : '?'];
  });
}

/** What the gate may know of the cluster beside the pod. */
export interface GateContext {
  /** The DeviceClass backing an extended resource (src/cluster/device-classes.ts), or undefined. */
  deviceClassFor?(resource: string): string | undefined;
}

const NO_CLUSTER: GateContext = {};

export interface UnsupportedCheck {
  /** The kube-scheduler plugin whose contract nodeload does not implement (the reason's prefix). */
  plugin: string;
  /** False for a gap a later change closes: drop the entry then. */
  permanent: boolean;
  /** What the pod uses that the plugin would handle, or undefined. */
  check(spec: Record<string, Json>, cluster: GateContext): string | undefined;
}

/**
 * The extended resources the pod asks for that a DeviceClass backs: resource → class. Upstream reads the
 * pod's requests (containers, init containers, RuntimeClass overhead) and skips zero amounts; limits are
 * read too, as the API server has defaulted requests from them by now and the two must agree.
 */
function draExtendedResources(spec: Record<string, Json>, cluster: GateContext): Map<string, string> {
  const out = new Map<string, string>();
  if (!cluster.deviceClassFor) return out;
  const add = (amounts: unknown) => {
    if (!isObject(amounts)) return;
    for (const [name, amount] of Object.entries(amounts)) {
      // Extended resources are domain-prefixed; cpu, memory, hugepages-* and the like never are.
      if (!name.includes('/') || out.has(name)) continue;
      if (!((parseQuantity(amount) ?? 0) > 0)) continue;
      const cls = cluster.deviceClassFor?.(name);
      if (cls !== undefined) out.set(name, cls);
    }
  };
  for (const containers of [spec.initContainers, spec.containers]) {
    for (const c of list(containers)) {
      if (!isObject(c) || !isObject(c.resources)) continue;
      add(c.resources.requests);
      add(c.resources.limits);
    }
  }
  add(spec.overhead);
  return out;
}

/**
 * The gate, one entry per gap. Pods with PersistentVolumeClaims and generic ephemeral volumes are steered
 * since the scheduler runs VolumeBinding, VolumeZone, NodeVolumeLimits and VolumeRestrictions; Dynamic
 * Resource Allocation stays outside: claims, and extended resources a DeviceClass backs (kube-scheduler
 * allocates those through DynamicResources on nodes whose allocatable lacks them).
 */
export const UNSUPPORTED: readonly UnsupportedCheck[] = [
  {
    plugin: 'DynamicResources',
    permanent: true,
    check(spec) {
      const claims = names(list(spec.resourceClaims), (c) => c.name ?? '');
      return claims.length
        ? `pod uses ${named('ResourceClaim', 'ResourceClaims', claims, quoted)}`
        : undefined;
    },
  },
  {
    plugin: 'DynamicResources',
    permanent: true,
    check(spec, cluster) {
      const backed = draExtendedResources(spec, cluster);
      if (backed.size === 0) return undefined;
      const what = named('extended resource', 'extended resources', [...backed], ([r, c]) => {
        return `${quoted(r)} (DeviceClass ${quoted(c)})`;
      });
      return `pod requests ${what} served by Dynamic Resource Allocation`;
    },
  },
];

/**
 * Why nodeload's scheduler cannot place this pod correctly, e.g.
 * `DynamicResources: pod uses ResourceClaim "gpu"`; empty when it can.
 */
export function unsupportedReasons(
  rawPod: unknown,
  cluster: GateContext = NO_CLUSTER,
  checks: readonly UnsupportedCheck[] = UNSUPPORTED,
): string[] {
  const spec = isObject(rawPod) && isObject(rawPod.spec) ? rawPod.spec : undefined;
  if (!spec) return [];
  return checks.flatMap((c) => {
    const what = c.check(spec, cluster);
    return what ? [`${c.plugin}: ${what}`] : [];
  });
}

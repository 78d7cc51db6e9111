/**
 * A pod's effective requests (or limits), as kube-scheduler and the kubelet compute them
 * (component-helpers resource.PodRequests with UseStatusResources, which v1.36 sets: in-place pod
 * resize is GA, and InPlacePodLevelResourcesVerticalScaling is beta and on):
 *   apps      = Σ containers + Σ restartable init containers (sidecars run for the pod's lifetime)
 *   initPeak  = max over init containers i, in declaration order, of
 *                 sidecar i : Σ sidecars declared up to and including i
 *                 regular i : requests(i) + Σ sidecars declared before i
 *   total     = max(apps, initPeak) per resource
 *   pod-level spec.resources (cpu, memory, hugepages-*) replaces the container figure for that resource
 *   requests += spec.overhead
 * While a pod is being resized its spec is not what the node holds for it: a container (or sidecar)
 * whose status reports resources counts max(spec, actuated, allocated) per resource — after a
 * downsize the kubelet keeps the larger figure until it has applied the smaller one — or, when the
 * resize is Infeasible (PodResizePending), max(actuated, allocated), since the spec will not be applied.
 * Pod-level requests follow the same rule with status.resources and status.allocatedResources.
 */
import type { ResourceList } from './model.js';
import { toResourceList } from './quantity.js';

// biome-ignore lint/suspicious/noExplicitAny: API objects are untyped JSON at this boundary.
type Json = any;

function addInto(into: ResourceList, list: ResourceList): void {
  for (const name in list) into[name] = (into[name] ?? 0) + (list[name] as number);
}

function maxInto(into: ResourceList, list: ResourceList): void {
  for (const name in list) into[name] = Math.max(into[name] ?? 0, list[name] as number);
}

/** Resources pod-level spec.resources may set (PodLevelResources): cpu, memory and hugepages. */
function podLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');
}

/** What the kubelet reports per container: the resources it actuated and those it allocated. */
interface ResizeState {
  infeasible: boolean;
  /** Container name → its status, for the containers whose status reports resources. */
  byName: Map<string, Json>;
}

/**
 * undefined when no status reports resources (a pending pod, or a node agent without them): every pod
 * event goes through here, and the common one allocates nothing.
 */
function resizeState(status: Json): ResizeState | undefined {
  let byName: Map<string, Json> | undefined;
  for (const list of [status?.containerStatuses, status?.initContainerStatuses]) {
    if (!Array.isArray(list)) continue;
    for (const cs of list as Json[]) {
      if (!cs?.resources || typeof cs.name !== 'string') continue;
      if (!byName) byName = new Map();
      byName.set(cs.name, cs);
    }
  }
  if (!byName && !status?.resources) return undefined;
  const pending = ((status?.conditions ?? []) as Json[]).find((c) => c?.type === 'PodResizePending');
  return { infeasible: pending?.reason === 'Infeasible', byName: byName ?? new Map() };
}

/** upstream's determineEffectiveRequests: max(spec, actuated, allocated), or without spec if Infeasible. */
function effective(spec: ResourceList, actuated: Json, allocated: Json, infeasible: boolean): ResourceList {
  const out: ResourceList = infeasible ? {} : { ...spec };
  maxInto(out, toResourceList(actuated));
  maxInto(out, toResourceList(allocated));
  return out;
}

function containerRequests(
  c: Json,
  field: 'requests' | 'limits',
  resize: ResizeState | undefined,
): ResourceList {
  const own = toResourceList(c?.resources?.[field]);
  const cs = resize?.byName.get(c?.name);
  if (!cs || !resize) return own;
  return effective(own, cs.resources?.requests, cs.allocatedResources, resize.infeasible);
}

/**
 * The pod's effective requests or limits (see the header). `status` (the pod's) is read for requests
 * only; limits are what the spec says.
 */
export function podResourceList(spec: Json, field: 'requests' | 'limits', status?: Json): ResourceList {
  const resize = field === 'requests' ? resizeState(status) : undefined;
  const total: ResourceList = {};
  for (const c of (spec?.containers ?? []) as Json[]) addInto(total, containerRequests(c, field, resize));
  const sidecars: ResourceList = {};
  const initPeak: ResourceList = {};
  for (const c of (spec?.initContainers ?? []) as Json[]) {
    if (c?.restartPolicy === 'Always') {
      // A sidecar runs on: its resize state counts, as a regular container's does.
      const own = containerRequests(c, field, resize);
      addInto(sidecars, own);
      addInto(total, own);
      maxInto(initPeak, sidecars);
    } else {
      const running: ResourceList = { ...sidecars };
      addInto(running, containerRequests(c, field, undefined));
      maxInto(initPeak, running);
    }
  }
  maxInto(total, initPeak);
  // Pod-level figures replace the containers' for the resources the spec names (upstream's loop over
  // spec.resources.requests, each taking its effective value; a name the status lacks counts 0).
  const specPodLevel = toResourceList(spec?.resources?.[field]);
  const podLevel =
    resize && status?.resources
      ? effective(specPodLevel, status.resources.requests, status.allocatedResources, resize.infeasible)
      : specPodLevel;
  for (const name in specPodLevel) if (podLevelResource(name)) total[name] = podLevel[name] ?? 0;
  if (field === 'requests' && spec?.overhead) addInto(total, toResourceList(spec.overhead));
  for (const name in total) if (total[name] === 0) delete total[name];
  return total;
}

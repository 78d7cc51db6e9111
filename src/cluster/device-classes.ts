/**
 * Which DeviceClass backs an extended resource (KEP-5004, DRAExtendedResource: beta and on in 1.36), as
 * upstream's ExtendedResourceCache resolves it:
 *   `deviceclass.resource.kubernetes.io/<class>`            → that class, if it exists (implicit name);
 *   a name some class gives as spec.extendedResourceName    → that class; of several, the newest
 *                                                             (creationTimestamp), then the lower name.
 * kube-scheduler then lets DynamicResources allocate such a resource on nodes whose allocatable lacks it.
 * This resolves from the classes that exist now; upstream's cache is built event by event, so after a
 * clash it can differ (a class losing a clash when added gets no implicit name there, and deleting either
 * class of a clash drops the explicit name). Clashes are a migration's transient state.
 */
import type { DeviceClassInfo, ResourceList } from './model.js';

export const IMPLICIT_EXTENDED_RESOURCE_PREFIX = 'deviceclass.resource.kubernetes.io/';

/** The DeviceClass backing `resource`, or undefined when Dynamic Resource Allocation does not serve it. */
export function deviceClassBacking(
  classes: ReadonlyMap<string, DeviceClassInfo>,
  resource: string,
): string | undefined {
  if (classes.size === 0) return undefined;
  if (resource.startsWith(IMPLICIT_EXTENDED_RESOURCE_PREFIX)) {
    const name = resource.slice(IMPLICIT_EXTENDED_RESOURCE_PREFIX.length);
    return classes.has(name) ? name : undefined;
  }
  let best: DeviceClassInfo | undefined;
  for (const c of classes.values()) {
    if (c.extendedResourceName !== resource) continue;
    if (!best || c.createdAt > best.createdAt || (c.createdAt === best.createdAt && c.name < best.name))
      best = c;
  }
  return best?.name;
}

/**
 * The requested extended resources a DeviceClass backs, [resource, class]: what kube-scheduler delegates to
 * DynamicResources on a node whose allocatable lacks the resource (NodeResourcesFit's
 * shouldDelegateResourceToDRA). Only domain-prefixed names can be extended resources.
 */
export function draBackedRequests(
  classes: ReadonlyMap<string, DeviceClassInfo>,
  requests: ResourceList,
): [resource: string, deviceClass: string][] {
  if (classes.size === 0) return [];
  const out: [string, string][] = [];
  for (const r in requests) {
    if (!((requests[r] as number) > 0) || !r.includes('/')) continue;
    const cls = deviceClassBacking(classes, r);
    if (cls !== undefined) out.push([r, cls]);
  }
  return out;
}

/**
 * API discovery documents. The aggregator reads `/apis` as an aggregated discovery document
 * (apidiscovery.k8s.io v2; 406 makes it fall back to `/apis/<group>/<version>`), and its availability
 * check GETs `/apis/<group>/<version>`, which must answer 2xx for the APIService to turn Available.
 */
import { GROUP, GROUP_VERSION, RESOURCES, type ResourceInfo, VERSION } from './api.js';

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIGroup {
  kind?: 'APIGroup';
  apiVersion?: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroup[];
}

export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

export interface APIResourceDiscovery {
  resource: string;
  responseKind: { group: string; version: string; kind: string };
  scope: 'Cluster' | 'Namespaced';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: `apidiscovery.k8s.io/${'v2' | 'v2beta1'}`;
  metadata: Record<string, never>;
  items: {
    metadata: { name: string };
    versions: { version: string; resources: APIResourceDiscovery[]; freshness: 'Current' }[];
  }[];
}

const groupVersion: GroupVersionForDiscovery = { groupVersion: GROUP_VERSION, version: VERSION };

function group(): APIGroup {
  return { name: GROUP, versions: [groupVersion], preferredVersion: groupVersion };
}

export function apiGroupList(): APIGroupList {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [group()] };
}

export function apiGroup(): APIGroup {
  return { kind: 'APIGroup', apiVersion: 'v1', ...group() };
}

function optionalLists(r: ResourceInfo): { shortNames?: string[]; categories?: string[] } {
  return {
    ...(r.shortNames.length > 0 ? { shortNames: [...r.shortNames] } : {}),
    ...(r.categories.length > 0 ? { categories: [...r.categories] } : {}),
  };
}

export function apiResourceList(resources: readonly ResourceInfo[] = RESOURCES): APIResourceList {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: GROUP_VERSION,
    resources: resources.map((r) => ({
      name: r.plural,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: [...r.verbs],
      ...optionalLists(r),
    })),
  };
}

export function aggregatedDiscovery(
  version: 'v2' | 'v2beta1',
  resources: readonly ResourceInfo[] = RESOURCES,
): APIGroupDiscoveryList {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: [
      {
        metadata: { name: GROUP },
        versions: [
          {
            version: VERSION,
            resources: resources.map((r) => ({
              resource: r.plural,
              responseKind: { group: GROUP, version: VERSION, kind: r.kind },
              scope: r.namespaced ? 'Namespaced' : 'Cluster',
              singularResource: r.singular,
              verbs: [...r.verbs],
              ...optionalLists(r),
            })),
            freshness: 'Current',
          },
        ],
      },
    ],
  };
}

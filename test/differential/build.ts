// Small constructors for writing scenarios as data: nodes, containers, pods and the affinity / spread
// fragments that recur. Everything returns plain objects of the Kubernetes API shape.
import type {
  V1Affinity,
  V1Container,
  V1LabelSelector,
  V1NodeSelectorRequirement,
  V1PodAffinityTerm,
  V1PodSpec,
  V1Taint,
  V1Toleration,
  V1TopologySpreadConstraint,
} from '@kubernetes/client-node';
import type { ExistingPodDef, NodeDef, NodeImageDef, PodDef } from './types.js';

export const ZONE = 'topology.kubernetes.io/zone';
export const HOSTNAME = 'kubernetes.io/hostname';
export const IMAGE = 'registry.invalid/app:1';

export interface NodeOpts {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: V1Taint[];
  /** Further allocatable entries (ephemeral-storage, hugepages-2Mi, example.com/gpu ...). */
  extra?: Record<string, string>;
  unschedulable?: boolean;
  /** status.declaredFeatures. */
  declaredFeatures?: string[];
  /** status.images. */
  images?: NodeImageDef[];
}

export function node(name: string, o: NodeOpts = {}): NodeDef {
  return {
    name,
    ...(o.labels ? { labels: o.labels } : {}),
    ...(o.taints ? { taints: o.taints } : {}),
    ...(o.unschedulable ? { unschedulable: true } : {}),
    ...(o.declaredFeatures ? { declaredFeatures: o.declaredFeatures } : {}),
    ...(o.images ? { images: o.images } : {}),
    allocatable: {
      cpu: o.cpu ?? '4',
      memory: o.memory ?? '8Gi',
      pods: o.pods ?? '110',
      'ephemeral-storage': '100Gi',
      ...o.extra,
    },
  };
}

/** `count` nodes named <prefix>1..N, node i in zone `zones[i % zones.length]`. */
export function zonedNodes(prefix: string, count: number, zones: string[], o: NodeOpts = {}): NodeDef[] {
  return Array.from({ length: count }, (_, i) =>
    node(`${prefix}${i + 1}`, { ...o, labels: { ...o.labels, [ZONE]: zones[i % zones.length] as string } }),
  );
}

export function taint(key: string, effect: string, value?: string): V1Taint {
  return value === undefined ? { key, effect } : { key, value, effect };
}

export function toleration(
  key: string,
  effect?: string,
  value?: string,
  operator = value === undefined ? 'Exists' : 'Equal',
): V1Toleration {
  return {
    key,
    operator,
    ...(value !== undefined ? { value } : {}),
    ...(effect ? { effect } : {}),
  };
}

export interface ContainerOpts {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  /** hostPort entries: [hostPort, protocol?, hostIP?] */
  hostPorts?: Array<[number, string?, string?]>;
  restartPolicy?: 'Always';
}

export function container(name: string, o: ContainerOpts = {}): V1Container {
  return {
    name,
    image: IMAGE,
    ...(o.requests || o.limits
      ? {
          resources: {
            ...(o.requests ? { requests: o.requests } : {}),
            ...(o.limits ? { limits: o.limits } : {}),
          },
        }
      : {}),
    ...(o.hostPorts
      ? {
          ports: o.hostPorts.map(([hostPort, protocol, hostIP], i) => ({
            containerPort: 8000 + i,
            hostPort,
            ...(protocol ? { protocol } : {}),
            ...(hostIP ? { hostIP } : {}),
          })),
        }
      : {}),
    ...(o.restartPolicy ? { restartPolicy: o.restartPolicy } : {}),
  };
}

export interface PodOpts extends ContainerOpts {
  namespace?: string;
  labels?: Record<string, string>;
  /** Merged over the spec (containers default to one container `app` with the requests above). */
  spec?: Partial<V1PodSpec>;
}

export function pod(name: string, o: PodOpts = {}): PodDef {
  const spec: V1PodSpec = { containers: [container('app', o)], ...o.spec };
  return {
    name,
    ...(o.namespace ? { namespace: o.namespace } : {}),
    ...(o.labels ? { labels: o.labels } : {}),
    spec,
  };
}

/** n pods named <prefix>-1..n with the same options. */
export function pods(prefix: string, n: number, o: PodOpts = {}): PodDef[] {
  return Array.from({ length: n }, (_, i) => pod(`${prefix}-${i + 1}`, o));
}

export function existing(name: string, nodeName: string, o: PodOpts = {}): ExistingPodDef {
  return { ...pod(name, o), node: nodeName };
}

export const cpu = (c: string, memory = '64Mi'): ContainerOpts => ({ requests: { cpu: c, memory } });

export function expr(key: string, operator: string, values?: string[]): V1NodeSelectorRequirement {
  return { key, operator, ...(values ? { values } : {}) };
}

/** spec.affinity with required node affinity: one term per argument (terms are ORed). */
export function requiredNodeAffinity(
  ...terms: Array<{ exprs?: V1NodeSelectorRequirement[]; fields?: V1NodeSelectorRequirement[] }>
): V1Affinity {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: terms.map((t) => ({
          ...(t.exprs ? { matchExpressions: t.exprs } : {}),
          ...(t.fields ? { matchFields: t.fields } : {}),
        })),
      },
    },
  };
}

export function selector(matchLabels: Record<string, string>): V1LabelSelector {
  return { matchLabels };
}

export function podTerm(
  topologyKey: string,
  labelSelector: V1LabelSelector,
  extra: Partial<V1PodAffinityTerm> = {},
): V1PodAffinityTerm {
  return { topologyKey, labelSelector, ...extra };
}

export function antiAffinity(...terms: V1PodAffinityTerm[]): V1Affinity {
  return { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } };
}

export function affinity(...terms: V1PodAffinityTerm[]): V1Affinity {
  return { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } };
}

export function spread(
  topologyKey: string,
  labelSelector: V1LabelSelector,
  extra: Partial<V1TopologySpreadConstraint> = {},
): V1TopologySpreadConstraint {
  return { maxSkew: 1, topologyKey, whenUnsatisfiable: 'DoNotSchedule', labelSelector, ...extra };
}

/** spec.volumes mounting these claims (spread into PodOpts.spec). */
export function claims(...names: string[]): Pick<V1PodSpec, 'volumes'> {
  return { volumes: names.map((claimName, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName } })) };
}

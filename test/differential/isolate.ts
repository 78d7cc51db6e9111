// Turns a scenario into the API objects of one run (scenario × engine) so that runs sharing a control
// plane never see each other:
//  * nodes are `<runId>-<name>` and carry RUN_LABEL=<runId>; every incoming pod gets a required node
//    affinity requirement on RUN_LABEL ANDed into each of its nodeSelectorTerms (or a term of its own), so
//    a scheduler only ever finds that run's nodes feasible;
//  * namespaces are `<runId>-<name>` and carry RUN_LABEL too; affinity terms' `namespaces` are mapped and
//    every namespaceSelector is ANDed with RUN_LABEL (an empty selector means "all of this run's");
//  * label values of topology keys (zone, region, hostname) are prefixed with the run id so no domain
//    spans two runs; `privateKeys` are replaced by run-unique keys (PodTopologySpread with
//    nodeAffinityPolicy: Ignore counts every node in the cluster that has the key).
import type {
  V1Namespace,
  V1Node,
  V1NodeSelectorRequirement,
  V1NodeSelectorTerm,
  V1Pod,
  V1PodAffinityTerm,
  V1PodSpec,
  V1RuntimeClass,
} from '@kubernetes/client-node';
import { HOSTNAME, IMAGE } from './build.js';
import { type RunObjects, runObjects } from './isolate-objects.js';
import {
  type Engine,
  type ExistingPodDef,
  type PodDef,
  RUN_LABEL,
  type RuleDef,
  SCHEDULER_NAMES,
  type Scenario,
} from './types.js';

export { RUN_LABEL };

export const KWOK_ANNOTATION = 'kwok.x-k8s.io/node';
const DEFAULT_PREFIXED = [
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  // Their beta predecessors: a PV may still carry them, and VolumeZone compares them with the GA ones.
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
];
export const MAIN_NS = 'main';

export interface RunPlan {
  runId: string;
  engine: Engine;
  namespaces: V1Namespace[];
  nodes: V1Node[];
  existing: V1Pod[];
  incoming: V1Pod[];
  runtimeClasses: V1RuntimeClass[];
  /** NodeLoadRule bodies (nodeload runs only). */
  rules: Record<string, unknown>[];
  /** Storage, priority and disruption objects (isolate-objects.ts). */
  objects: RunObjects;
  /** Actual → logical names, for reports. */
  logicalNode(actual: string): string;
  logicalNamespace(actual: string): string;
  actualNode(logical: string): string;
  actualNamespace(logical: string): string;
}

export class Isolation {
  private readonly prefixed: Set<string>;
  private readonly privateKeys: Set<string>;

  constructor(
    readonly runId: string,
    scenario: Pick<Scenario, 'prefixValuesOf' | 'privateKeys'>,
  ) {
    this.prefixed = new Set(scenario.prefixValuesOf ?? DEFAULT_PREFIXED);
    this.privateKeys = new Set(scenario.privateKeys ?? []);
  }

  node(logical: string): string {
    return `${this.runId}-${logical}`;
  }

  namespace(logical: string | undefined): string {
    return `${this.runId}-${logical ?? MAIN_NS}`;
  }

  runtimeClass(logical: string): string {
    return `${this.runId}-${logical}`;
  }

  /** StorageClasses, PVs, PriorityClasses: cluster-scoped, so run-unique. */
  clusterScoped(logical: string): string {
    return `${this.runId}-${logical}`;
  }

  key(key: string): string {
    if (!this.privateKeys.has(key)) return key;
    return key.includes('/') ? `${this.runId}.${key}` : `${this.runId}.nodeload.test/${key}`;
  }

  value(key: string, value: string): string {
    if (key === HOSTNAME) return this.node(value);
    return this.prefixed.has(key) ? `${this.runId}-${value}` : value;
  }

  labels(labels: Record<string, string> | undefined): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(labels ?? {})) out[this.key(k)] = this.value(k, v);
    return out;
  }

  requirement(r: V1NodeSelectorRequirement): V1NodeSelectorRequirement {
    const values = r.values && (r.operator === 'In' || r.operator === 'NotIn');
    return {
      ...r,
      key: this.key(r.key),
      ...(values ? { values: r.values?.map((v) => this.value(r.key, v)) } : {}),
    };
  }

  field(r: V1NodeSelectorRequirement): V1NodeSelectorRequirement {
    return r.key === 'metadata.name' ? { ...r, values: r.values?.map((v) => this.node(v)) } : r;
  }

  term(t: V1NodeSelectorTerm): V1NodeSelectorTerm {
    return {
      ...(t.matchExpressions ? { matchExpressions: t.matchExpressions.map((r) => this.requirement(r)) } : {}),
      ...(t.matchFields ? { matchFields: t.matchFields.map((r) => this.field(r)) } : {}),
    };
  }

  podTerm(t: V1PodAffinityTerm): V1PodAffinityTerm {
    const out: V1PodAffinityTerm = { ...t, topologyKey: this.key(t.topologyKey) };
    if (t.namespaces) out.namespaces = t.namespaces.map((n) => this.namespace(n));
    if (t.namespaceSelector) {
      out.namespaceSelector = {
        ...t.namespaceSelector,
        matchLabels: { ...t.namespaceSelector.matchLabels, [RUN_LABEL]: this.runId },
      };
    }
    return out;
  }

  /** The spec as one run sends it (no schedulerName, no run affinity yet). */
  spec(spec: V1PodSpec): V1PodSpec {
    const s: V1PodSpec = structuredClone(spec);
    if (s.nodeName) s.nodeName = this.node(s.nodeName);
    if (s.runtimeClassName) s.runtimeClassName = this.runtimeClass(s.runtimeClassName);
    if (s.priorityClassName) s.priorityClassName = this.clusterScoped(s.priorityClassName);
    if (s.nodeSelector) s.nodeSelector = this.labels(s.nodeSelector);
    const na = s.affinity?.nodeAffinity;
    if (na?.requiredDuringSchedulingIgnoredDuringExecution) {
      const req = na.requiredDuringSchedulingIgnoredDuringExecution;
      req.nodeSelectorTerms = req.nodeSelectorTerms.map((t) => this.term(t));
    }
    if (na?.preferredDuringSchedulingIgnoredDuringExecution) {
      for (const p of na.preferredDuringSchedulingIgnoredDuringExecution)
        p.preference = this.term(p.preference);
    }
    for (const kind of ['podAffinity', 'podAntiAffinity'] as const) {
      const a = s.affinity?.[kind];
      if (!a) continue;
      if (a.requiredDuringSchedulingIgnoredDuringExecution) {
        a.requiredDuringSchedulingIgnoredDuringExecution =
          a.requiredDuringSchedulingIgnoredDuringExecution.map((t) => this.podTerm(t));
      }
      for (const w of a.preferredDuringSchedulingIgnoredDuringExecution ?? [])
        w.podAffinityTerm = this.podTerm(w.podAffinityTerm);
    }
    for (const c of s.topologySpreadConstraints ?? []) c.topologyKey = this.key(c.topologyKey);
    for (const c of [...(s.initContainers ?? []), ...s.containers]) c.image ??= IMAGE;
    s.terminationGracePeriodSeconds ??= 0;
    return s;
  }

  /** ANDs `RUN_LABEL In [runId]` into every non-empty required nodeSelectorTerm (or adds a term). */
  confine(spec: V1PodSpec): void {
    const run: V1NodeSelectorRequirement = { key: RUN_LABEL, operator: 'In', values: [this.runId] };
    spec.affinity ??= {};
    spec.affinity.nodeAffinity ??= {};
    const na = spec.affinity.nodeAffinity;
    const terms = na.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    na.requiredDuringSchedulingIgnoredDuringExecution = {
      nodeSelectorTerms: terms.length
        ? terms.map((t) =>
            // A term with no requirements matches no node: ANDing ours into it would make it match.
            t.matchExpressions?.length || t.matchFields?.length
              ? { ...t, matchExpressions: [...(t.matchExpressions ?? []), run] }
              : t,
          )
        : [{ matchExpressions: [run] }],
    };
  }

  pod(def: PodDef | ExistingPodDef, engine: Engine, bound?: string): V1Pod {
    const spec = this.spec(def.spec);
    if (bound) {
      spec.nodeName = this.node(bound);
      spec.schedulerName = 'nodeload-differential-none';
    } else {
      spec.schedulerName = SCHEDULER_NAMES[engine];
      if (!spec.nodeName) this.confine(spec);
    }
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: def.name,
        namespace: this.namespace(def.namespace),
        labels: { ...def.labels },
        ...('finalizers' in def && def.finalizers ? { finalizers: [...def.finalizers] } : {}),
      },
      spec,
    };
  }

  rule(def: RuleDef): Record<string, unknown> {
    const spec: Record<string, unknown> = { ...def.spec };
    if (def.spec.allowedNodes) spec['allowedNodes'] = def.spec.allowedNodes.map((n) => this.node(n));
    if (def.spec.nodeSelector?.matchLabels)
      spec['nodeSelector'] = { matchLabels: this.labels(def.spec.nodeSelector.matchLabels) };
    return {
      apiVersion: 'example.com/v1',
      kind: 'NodeLoadRule',
      metadata: { name: def.name, namespace: this.namespace(def.namespace) },
      spec,
    };
  }
}

const DEFAULT_ALLOCATABLE: Record<string, string> = {
  cpu: '4',
  memory: '8Gi',
  pods: '110',
  'ephemeral-storage': '100Gi',
};

export function planRun(scenario: Scenario, engine: Engine, runId: string): RunPlan {
  const iso = new Isolation(runId, scenario);
  const nsDefs = [{ name: MAIN_NS }, ...(scenario.namespaces ?? [])];
  const namespaces: V1Namespace[] = nsDefs.map((n) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: iso.namespace(n.name),
      labels: { ...('labels' in n ? n.labels : {}), [RUN_LABEL]: runId, 'nodeload.test/integration': 'true' },
    },
  }));
  const nodes: V1Node[] = scenario.nodes.map((n) => {
    const name = iso.node(n.name);
    const allocatable = { ...DEFAULT_ALLOCATABLE, ...n.allocatable };
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        annotations: { [KWOK_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: {
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/os': 'linux',
          type: 'kwok',
          ...iso.labels(n.labels),
          [HOSTNAME]: name,
          [RUN_LABEL]: runId,
        },
      },
      spec: {
        ...(n.taints ? { taints: n.taints } : {}),
        ...(n.unschedulable ? { unschedulable: true } : {}),
      },
      status: {
        capacity: { ...allocatable },
        allocatable: { ...allocatable },
        ...(n.declaredFeatures ? { declaredFeatures: [...n.declaredFeatures] } : {}),
        ...(n.images
          ? { images: n.images.map((i) => ({ names: [...i.names], sizeBytes: i.sizeBytes })) }
          : {}),
      },
    };
  });
  const logical = new Map(scenario.nodes.map((n) => [iso.node(n.name), n.name]));
  const logicalNs = new Map(nsDefs.map((n) => [iso.namespace(n.name), n.name]));
  return {
    runId,
    engine,
    namespaces,
    nodes,
    existing: (scenario.existingPods ?? []).map((p) => iso.pod(p, engine, p.node)),
    incoming: scenario.pods.map((p) => iso.pod(p, engine)),
    runtimeClasses: (scenario.runtimeClasses ?? []).map((rc) => ({
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: iso.runtimeClass(rc.name), labels: { [RUN_LABEL]: runId } },
      handler: 'runc',
      overhead: { podFixed: rc.overhead },
    })),
    rules: engine === 'nodeload' ? (scenario.rules ?? []).map((r) => iso.rule(r)) : [],
    objects: runObjects(iso, scenario.objects ?? {}),
    logicalNode: (actual) => logical.get(actual) ?? `<foreign:${actual}>`,
    logicalNamespace: (actual) => logicalNs.get(actual) ?? actual,
    actualNode: (l) => iso.node(l),
    actualNamespace: (l) => iso.namespace(l),
  };
}

/**
 * The deployable manifests as tests use them: render the kustomize base and overlays (kubectl's built-in
 * kustomize) and the Helm chart (helm built by build-helm.sh), then make a rendering safe to apply to a
 * shared test cluster — its namespace renamed, cluster-scoped names suffixed, references and RBAC
 * resourceNames following — and pick out what running the gateway "as the Deployment does" needs: its
 * RBAC, its container's args and environment.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import { manifestPath } from './manifests.js';

/** The namespace the manifests are written for. */
export const MANIFEST_NAMESPACE = 'nodeload-system';
/** The gateway's ServiceAccount (and Deployment) name in the manifests. */
export const GATEWAY_NAME = 'nodeload-gateway';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

function run(bin: string, args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

/** The objects of a YAML stream (empty documents dropped), as plain data (field names as written). */
export function parseObjects(yaml: string): KubeObject[] {
  return (loadAll(yaml) as (KubeObject | null)[]).filter((o): o is KubeObject => Boolean(o?.kind));
}

/** `kubectl kustomize manifests/<dir>`: the YAML stream the directory renders to. */
export function kustomizeText(kubectl: string, dir: string): Promise<string> {
  return run(kubectl, ['kustomize', manifestPath(dir)]);
}

/** `kubectl kustomize manifests/<dir>`: the objects the directory renders to. */
export async function kustomize(kubectl: string, dir: string): Promise<KubeObject[]> {
  return parseObjects(await kustomizeText(kubectl, dir));
}

/**
 * An admin's overlay of manifests/<resource> with manifests/<component>s added, as a component's
 * kustomization.yaml says (kustomize takes relative paths only): the objects it renders to.
 */
export async function kustomizeWithComponents(
  kubectl: string,
  resource: string,
  components: readonly string[],
): Promise<KubeObject[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'nl-kustomize-'));
  const relative = (p: string) => path.relative(dir, manifestPath(p));
  try {
    writeFileSync(
      path.join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        `resources: [${relative(resource)}]`,
        `components: [${components.map(relative).join(', ')}]`,
        '',
      ].join('\n'),
    );
    return parseObjects(await run(kubectl, ['kustomize', dir]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The chart's directory. */
export const CHART_DIR = manifestPath('chart/nodeload');

/** helm, built from its pinned Go module by build-helm.sh (cached; minutes when cold): the binary's path. */
export async function buildHelm(): Promise<string> {
  const out = await run('bash', [new URL('./build-helm.sh', import.meta.url).pathname], 1_800_000);
  return out.trim().split('\n').at(-1) ?? '';
}

/** `helm template` of the chart with `--set` values (and `--namespace`). */
export async function helmTemplate(
  helm: string,
  opts: { release?: string; namespace?: string; set?: string[] } = {},
): Promise<KubeObject[]> {
  const args = [
    'template',
    opts.release ?? 'nodeload',
    CHART_DIR,
    '--namespace',
    opts.namespace ?? MANIFEST_NAMESPACE,
  ];
  for (const s of opts.set ?? []) args.push('--set', s);
  return parseObjects(await run(helm, args));
}

/** A copy without null fields and empty lists: the API server reads both as absent. */
function dropEmpty(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropEmpty);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0))
        .map(([k, v]) => [k, dropEmpty(v)]),
    );
  }
  return value;
}

/** Labels and annotations only Helm adds: what remains must equal the kustomize rendering. */
const HELM_ONLY = [
  'helm.sh/chart',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
  'helm.sh/resource-policy',
];

/**
 * A rendering in a form two renderers can be compared by: Helm's own labels and annotations left out,
 * empty label/annotation maps, null fields and empty lists dropped, the Namespace left out (Helm installs into one), sorted by kind
 * and name.
 */
export function comparable(objects: KubeObject[]): KubeObject[] {
  const strip = (m: Record<string, string> | undefined) => {
    const out = Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !HELM_ONLY.includes(k)));
    return Object.keys(out).length ? out : undefined;
  };
  return objects
    .filter((o) => o.kind !== 'Namespace')
    .map((o) => {
      const metadata: KubeObject['metadata'] = { ...o.metadata };
      const labels = strip(o.metadata.labels);
      const annotations = strip(o.metadata.annotations);
      if (labels) metadata.labels = labels;
      else delete metadata.labels;
      if (annotations) metadata.annotations = annotations;
      else delete metadata.annotations;
      return dropEmpty({ ...o, metadata }) as KubeObject;
    })
    .sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`));
}

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'APIService',
  'PriorityClass',
  'FlowSchema',
]);

/** Kinds whose names are fixed by what they serve (plural.group, version.group): never renamed. */
const FIXED_NAMES = new Set(['CustomResourceDefinition', 'APIService']);

/** The resource (plural) RBAC names a kind by. */
const RESOURCE_OF: Record<string, string> = {
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  MutatingWebhookConfiguration: 'mutatingwebhookconfigurations',
  ValidatingWebhookConfiguration: 'validatingwebhookconfigurations',
  RoleBinding: 'rolebindings',
};

export function isClusterScoped(o: KubeObject): boolean {
  return CLUSTER_SCOPED.has(o.kind);
}

const NAMESPACE_WORD = new RegExp(`\\b${MANIFEST_NAMESPACE}\\b`, 'g');

function replaceStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => replaceStrings(v, f));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceStrings(v, f)]));
  }
  return value;
}

/**
 * A rendering made safe for a shared cluster: every mention of the manifests' namespace (object
 * namespaces, subjects, Service references, DNS names, `--namespace=` args, cainjector annotations)
 * becomes `namespace`; every cluster-scoped object of ours, and the RoleBinding outside that namespace
 * (kube-system's), gets `-<suffix>`, with role references and RBAC resourceNames following. The CRD and
 * the APIService keep their names: those are fixed by what they serve.
 */
export function isolate(objects: KubeObject[], opts: { namespace: string; suffix: string }): KubeObject[] {
  const renamed = new Map<string, string>(); // `${kind}/${name}` → new name
  const moved = objects.map(
    (o) => replaceStrings(o, (s) => s.replace(NAMESPACE_WORD, opts.namespace)) as KubeObject,
  );
  for (const o of moved) {
    const outside = o.kind === 'RoleBinding' && o.metadata.namespace !== opts.namespace;
    if ((isClusterScoped(o) && o.kind !== 'Namespace' && !FIXED_NAMES.has(o.kind)) || outside) {
      renamed.set(`${o.kind}/${o.metadata.name}`, `${o.metadata.name}-${opts.suffix}`);
    }
  }
  const newName = (kind: string, name: string) => renamed.get(`${kind}/${name}`) ?? name;
  return moved.map((o) => {
    const out: KubeObject = { ...o, metadata: { ...o.metadata, name: newName(o.kind, o.metadata.name) } };
    const roleRef = o['roleRef'] as { kind: string; name: string } | undefined;
    if (roleRef) out['roleRef'] = { ...roleRef, name: newName(roleRef.kind, roleRef.name) };
    const rules = o['rules'] as PolicyRule[] | undefined;
    if ((o.kind === 'ClusterRole' || o.kind === 'Role') && rules) {
      out['rules'] = rules.map((r) => {
        if (!r.resourceNames) return r;
        const kinds = Object.entries(RESOURCE_OF)
          .filter(([, plural]) => r.resources?.includes(plural))
          .map(([kind]) => kind);
        return { ...r, resourceNames: r.resourceNames.map((n) => kinds.reduce((m, k) => newName(k, m), n)) };
      });
    }
    return out;
  });
}

const RBAC_KINDS = new Set([
  'Namespace',
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
]);

/** The namespace, the ServiceAccount and every role and binding: the gateway's identity, nothing else. */
export function identityObjects(objects: KubeObject[]): KubeObject[] {
  return objects.filter((o) => RBAC_KINDS.has(o.kind));
}

/** Every RBAC rule the objects grant (Roles and ClusterRoles alike). */
export function rulesOf(objects: KubeObject[]): PolicyRule[] {
  return objects
    .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
    .flatMap((o) => (o['rules'] as PolicyRule[] | undefined) ?? []);
}

export interface GatewayContainer {
  args: string[];
  /** Literal values; fieldRef values as `fieldRef:<path>`. */
  env: Record<string, string>;
  serviceAccountName: string;
  namespace: string;
}

interface PodTemplate {
  spec: {
    serviceAccountName?: string;
    containers: {
      name: string;
      args?: string[];
      env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
    }[];
  };
}

/** The gateway Deployment's container as the kubelet would start it. */
export function gatewayContainer(objects: KubeObject[]): GatewayContainer {
  const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith(GATEWAY_NAME));
  if (!deployment) throw new Error('no gateway Deployment in the rendering');
  const template = (deployment['spec'] as { template: PodTemplate }).template;
  const container = template.spec.containers.find((c) => c.name === 'gateway');
  if (!container) throw new Error('the gateway Deployment has no container "gateway"');
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    env[e.name] = e.value ?? (e.valueFrom?.fieldRef ? `fieldRef:${e.valueFrom.fieldRef.fieldPath}` : '');
  }
  return {
    args: container.args ?? [],
    env,
    serviceAccountName: template.spec.serviceAccountName ?? 'default',
    namespace: deployment.metadata.namespace ?? 'default',
  };
}

/** Replaces (or adds) `--flag=value` in an argument list. */
export function withFlag(args: readonly string[], flag: string, value: string): string[] {
  const prefix = `--${flag}=`;
  return [...args.filter((a) => !a.startsWith(prefix) && a !== `--${flag}`), `${prefix}${value}`];
}

/** The value of `--flag=value` in an argument list. */
export function flagValue(args: readonly string[], flag: string): string | undefined {
  const prefix = `--${flag}=`;
  return args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

export interface CanIRow {
  resources: string;
  nonResourceURLs: string;
  resourceNames: string;
  verbs: string;
}

/** The rows of `kubectl auth can-i --list` (columns split on the header's positions). */
export function parseCanIList(output: string): CanIRow[] {
  const lines = output.split('\n').filter((l) => l.trim());
  const header = lines.shift() ?? '';
  const starts = ['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs'].map((h) => header.indexOf(h));
  if (starts.some((s) => s < 0)) throw new Error(`not a kubectl auth can-i --list table: ${header}`);
  const cell = (l: string, i: number) =>
    l.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : undefined).trim();
  return lines.map((l) => ({
    resources: cell(l, 0),
    nonResourceURLs: cell(l, 1),
    resourceNames: cell(l, 2),
    verbs: cell(l, 3),
  }));
}

const rowKey = (r: CanIRow) => `${r.resources}|${r.nonResourceURLs}|${r.resourceNames}|${r.verbs}`;

/** Rows of `granted` that `baseline` (an identity with no bindings of ours) lacks: what our roles add. */
export function addedRows(granted: CanIRow[], baseline: CanIRow[]): CanIRow[] {
  const base = new Set(baseline.map(rowKey));
  return granted.filter((r) => !base.has(rowKey(r)));
}

/** A row granting a wildcard anywhere (resource, group, name, URL or verb). */
export function hasWildcard(r: CanIRow): boolean {
  return [r.resources, r.nonResourceURLs, r.resourceNames, r.verbs].some((c) => c.includes('*'));
}

// Fake (KWOK-managed) nodes for the local control plane.
//
// KWOK (started by controlplane.ts with --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake)
// takes over every Node carrying that annotation: its node-initialize stage marks it Ready and keeps the
// capacity/allocatable we put in the create body (a Node create keeps .status, as for a kubelet registering
// itself), and it holds the node lease. Pods bound to such a node are moved to Running by KWOK.
import { ApiException, CoreV1Api, KubeConfig, type V1Node, type V1Taint } from '@kubernetes/client-node';

export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const KWOK_NODE_ANNOTATION_VALUE = 'fake';
/** Label put on every fake node, so they can be listed with a selector. */
const FAKE_NODE_LABEL = 'type';
const FAKE_NODE_LABEL_VALUE = 'kwok';

export interface FakeNodeSpec {
  name: string;
  /** CPU capacity, a Kubernetes quantity: 8, "8", "7500m". */
  cpu: string | number;
  /** Memory capacity, a Kubernetes quantity: "32Gi". */
  memory: string;
  /** Pod capacity (default 110). */
  pods?: string | number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Taints as objects or strings "key=value:Effect" / "key:Effect". */
  taints?: Array<V1Taint | string>;
}

export type KubeConfigSource = string | KubeConfig;

export function loadKubeConfig(source: KubeConfigSource): KubeConfig {
  if (typeof source !== 'string') return source;
  const kc = new KubeConfig();
  kc.loadFromFile(source);
  return kc;
}

function core(source: KubeConfigSource): CoreV1Api {
  return loadKubeConfig(source).makeApiClient(CoreV1Api);
}

const TAINT_EFFECTS = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);

/** Parses "key=value:Effect" or "key:Effect". */
export function parseTaint(text: string): V1Taint {
  const colon = text.lastIndexOf(':');
  if (colon <= 0) throw new Error(`invalid taint "${text}": expected key=value:Effect or key:Effect`);
  const effect = text.slice(colon + 1);
  if (!TAINT_EFFECTS.has(effect)) {
    throw new Error(`invalid taint "${text}": effect must be one of ${[...TAINT_EFFECTS].join(', ')}`);
  }
  const kv = text.slice(0, colon);
  const eq = kv.indexOf('=');
  const key = eq < 0 ? kv : kv.slice(0, eq);
  if (!key) throw new Error(`invalid taint "${text}": empty key`);
  return eq < 0 ? { key, effect } : { key, value: kv.slice(eq + 1), effect };
}

/** Parses "key=value" (a label). */
export function parseLabel(text: string): [string, string] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new Error(`invalid label "${text}": expected key=value`);
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** The Node object createFakeNodes sends (status included: KWOK keeps the capacity given here). */
export function fakeNodeManifest(spec: FakeNodeSpec): V1Node {
  const resources = { cpu: String(spec.cpu), memory: spec.memory, pods: String(spec.pods ?? 110) };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      annotations: {
        ...spec.annotations,
        [KWOK_NODE_ANNOTATION]: KWOK_NODE_ANNOTATION_VALUE,
        'node.alpha.kubernetes.io/ttl': '0',
      },
      labels: {
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': spec.name,
        [FAKE_NODE_LABEL]: FAKE_NODE_LABEL_VALUE,
        ...spec.labels,
      },
    },
    spec: {
      taints: spec.taints?.map((t) => (typeof t === 'string' ? parseTaint(t) : t)),
    },
    status: {
      capacity: { ...resources },
      allocatable: { ...resources },
    },
  };
}

export function isApiException(err: unknown, code?: number): err is ApiException<unknown> {
  return err instanceof ApiException && (code === undefined || err.code === code);
}

/** A short, readable description of a client error (ApiException bodies are JSON strings). */
export function describeApiError(err: unknown): string {
  if (err instanceof ApiException) {
    let message = String(err.body);
    try {
      const body = JSON.parse(String(err.body)) as { message?: string };
      if (body.message) message = body.message;
    } catch {
      // body is not JSON: keep it raw
    }
    return `HTTP ${err.code}: ${message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * Creates KWOK-managed nodes with the given capacity. If the API server dropped the status of the create body,
 * it is written through the status subresource. Returns the created nodes.
 */
export async function createFakeNodes(
  kubeconfig: KubeConfigSource,
  specs: FakeNodeSpec[],
): Promise<V1Node[]> {
  const api = core(kubeconfig);
  const created: V1Node[] = [];
  for (const spec of specs) {
    const body = fakeNodeManifest(spec);
    let node: V1Node;
    try {
      node = await api.createNode({ body });
    } catch (err) {
      throw new Error(`creating node ${spec.name}: ${describeApiError(err)}`);
    }
    if (node.status?.capacity?.['cpu'] !== body.status?.capacity?.['cpu']) {
      node = await setNodeCapacity(api, spec.name, body);
    }
    created.push(node);
  }
  return created;
}

async function setNodeCapacity(api: CoreV1Api, name: string, wanted: V1Node): Promise<V1Node> {
  for (let attempt = 0; ; attempt++) {
    const current = await api.readNodeStatus({ name });
    current.status = {
      ...current.status,
      capacity: wanted.status?.capacity,
      allocatable: wanted.status?.allocatable,
    };
    try {
      return await api.replaceNodeStatus({ name, body: current });
    } catch (err) {
      if (!isApiException(err, 409) || attempt >= 10) {
        throw new Error(`setting capacity of node ${name}: ${describeApiError(err)}`);
      }
    }
  }
}

/** Deletes nodes by name; missing nodes are ignored. Returns the names actually deleted. */
export async function deleteFakeNodes(kubeconfig: KubeConfigSource, names: string[]): Promise<string[]> {
  const api = core(kubeconfig);
  const deleted: string[] = [];
  for (const name of names) {
    try {
      await api.deleteNode({ name });
      deleted.push(name);
    } catch (err) {
      if (!isApiException(err, 404)) throw new Error(`deleting node ${name}: ${describeApiError(err)}`);
    }
  }
  return deleted;
}

/** Lists KWOK-managed nodes (annotated kwok.x-k8s.io/node=fake), optionally only those whose name starts with prefix. */
export async function listFakeNodes(kubeconfig: KubeConfigSource, prefix?: string): Promise<V1Node[]> {
  const list = await core(kubeconfig).listNode({});
  return list.items.filter(
    (n) =>
      n.metadata?.annotations?.[KWOK_NODE_ANNOTATION] === KWOK_NODE_ANNOTATION_VALUE &&
      (prefix === undefined || (n.metadata?.name ?? '').startsWith(prefix)),
  );
}

export function isNodeReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** Waits until every named node exists and has condition Ready=True (set by KWOK). */
export async function waitForNodesReady(
  kubeconfig: KubeConfigSource,
  names: string[],
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const api = core(kubeconfig);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let pending = [...names];
  let lastError = '';
  while (pending.length > 0) {
    const still: string[] = [];
    for (const name of pending) {
      try {
        if (!isNodeReady(await api.readNode({ name }))) still.push(name);
      } catch (err) {
        lastError = describeApiError(err);
        still.push(name);
      }
    }
    pending = still;
    if (pending.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `nodes not Ready after ${timeoutMs / 1000}s: ${pending.join(', ')}` +
          (lastError ? ` (last error: ${lastError})` : '') +
          ' — is kwok running? (npm run cluster:status)',
      );
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
}

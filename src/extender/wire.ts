/**
 * kube-scheduler's extender wire format (k8s.io/kube-scheduler/extender/v1), pure: parsing what its
 * HTTPExtender sends and building what it decodes. The Go types carry no json tags, so the fields are
 * the Go names ("Pod", "NodeNames", "FailedNodes", "Host", "Score", …); Go's decoder matches them
 * case-insensitively, and so does the parser here.
 *
 * filter/prioritize: ExtenderArgs {Pod, Nodes, NodeNames} — NodeNames when nodeCacheCapable (the
 * manifests' setting), else Nodes (a NodeList), and the answer must use the same one.
 * filter → ExtenderFilterResult {Nodes, NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error}:
 *   kube-scheduler counts each failed node's message in its FailedScheduling message, so a node's
 *   message is the standalone scheduler's aggregatable reason text ("node(s) exceed rule web cpu 80%").
 * prioritize → HostPriorityList [{Host, Score}], Score an integer 0–MaxExtenderPriority (10), which
 *   kube-scheduler multiplies by the extender's weight and by MaxNodeScore / 10.
 * bind: ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node} → ExtenderBindingResult {Error}.
 */
import { toPodInfo } from '../cluster/convert.js';
import type { PodInfo } from '../cluster/model.js';
import { type NodeVerdict, primaryReasons } from '../scheduler/framework/verdict.js';

export const MAX_EXTENDER_PRIORITY = 10;

// biome-ignore lint/suspicious/noExplicitAny: request bodies are untyped JSON until checked here.
type Json = any;

export class BadRequest extends Error {}

/** The value of `name` in `obj`: the exact key first, then one equal ignoring case (Go's rule). */
function field(obj: Json, name: string): Json {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  if (name in obj) return obj[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}

function requireObject(body: Json, what: string): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest(`expected a JSON object (${what})`);
  }
}

function nonEmptyString(v: Json, what: string): string {
  if (typeof v !== 'string' || v === '') throw new BadRequest(`${what} must be a non-empty string`);
  return v;
}

export interface ExtenderArgs {
  pod: PodInfo;
  nodeNames: string[];
  /** The nodes as sent when kube-scheduler is not nodeCacheCapable (answered with Nodes, not NodeNames). */
  nodeObjects?: Json[];
}

export function parseExtenderArgs(body: Json): ExtenderArgs {
  requireObject(body, 'ExtenderArgs');
  const raw = field(body, 'Pod');
  requireObject(raw, 'ExtenderArgs.Pod');
  const meta = field(raw, 'metadata');
  requireObject(meta, 'ExtenderArgs.Pod.metadata');
  nonEmptyString(meta.name, 'Pod.metadata.name');
  nonEmptyString(meta.namespace, 'Pod.metadata.namespace');
  let pod: PodInfo;
  try {
    pod = toPodInfo(raw);
  } catch (err) {
    throw new BadRequest(`Pod: ${(err as Error).message}`);
  }
  const names = field(body, 'NodeNames');
  if (Array.isArray(names)) {
    return { pod, nodeNames: names.map((n, i) => nonEmptyString(n, `NodeNames[${i}]`)) };
  }
  const items = field(field(body, 'Nodes'), 'items');
  if (Array.isArray(items)) {
    const nodeNames = items.map((n, i) =>
      nonEmptyString(n?.metadata?.name, `Nodes.items[${i}].metadata.name`),
    );
    return { pod, nodeNames, nodeObjects: items };
  }
  throw new BadRequest('ExtenderArgs needs NodeNames (nodeCacheCapable: true) or Nodes');
}

export interface ExtenderBindingArgs {
  namespace: string;
  name: string;
  uid: string;
  node: string;
}

export function parseBindingArgs(body: Json): ExtenderBindingArgs {
  requireObject(body, 'ExtenderBindingArgs');
  const uid = field(body, 'PodUID');
  if (uid !== undefined && uid !== null && typeof uid !== 'string')
    throw new BadRequest('PodUID must be a string');
  return {
    namespace: nonEmptyString(field(body, 'PodNamespace'), 'PodNamespace'),
    name: nonEmptyString(field(body, 'PodName'), 'PodName'),
    uid: uid ?? '',
    node: nonEmptyString(field(body, 'Node'), 'Node'),
  };
}

export interface ExtenderFilterResult {
  Nodes: { items: Json[] } | null;
  NodeNames: string[] | null;
  FailedNodes: Record<string, string>;
  FailedAndUnresolvableNodes: Record<string, string>;
  Error: string;
}

/** The message kube-scheduler counts for a node: its first failing plugin's distinct reasons. */
export function failureMessage(verdict: NodeVerdict): string {
  return [...new Set(primaryReasons(verdict).map((r) => r.reason))].join(', ');
}

/** Preempting pods cannot help a node one of whose primary reasons is unresolvable (not allowed by a rule). */
function unresolvable(verdict: NodeVerdict): boolean {
  return primaryReasons(verdict).some((r) => r.unresolvable === true);
}

/** In the shape the request used: names for nodeCacheCapable, node objects otherwise. */
function passing(
  args: ExtenderArgs,
  keep: (name: string) => boolean,
): Pick<ExtenderFilterResult, 'Nodes' | 'NodeNames'> {
  if (args.nodeObjects) {
    return { Nodes: { items: args.nodeObjects.filter((n) => keep(n.metadata.name)) }, NodeNames: null };
  }
  return { Nodes: null, NodeNames: args.nodeNames.filter(keep) };
}

/** Every node passes (a pod outside every rule). */
export function passThroughFilter(args: ExtenderArgs): ExtenderFilterResult {
  return { ...passing(args, () => true), FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' };
}

export function filterResult(args: ExtenderArgs, verdicts: readonly NodeVerdict[]): ExtenderFilterResult {
  const failed: Record<string, string> = {};
  const unresolved: Record<string, string> = {};
  const feasible = new Set<string>();
  for (const v of verdicts) {
    if (v.feasible) feasible.add(v.node);
    else (unresolvable(v) ? unresolved : failed)[v.node] = failureMessage(v);
  }
  return {
    ...passing(args, (n) => feasible.has(n)),
    FailedNodes: failed,
    FailedAndUnresolvableNodes: unresolved,
    Error: '',
  };
}

export interface HostPriority {
  Host: string;
  Score: number;
}

/** 0–100 → the extender's integer range 0–10 (Go decodes Score into an int64: never a fraction). */
export function extenderScore(score: number): number {
  if (!Number.isFinite(score)) return 0;
  return Math.min(MAX_EXTENDER_PRIORITY, Math.max(0, Math.round(score / 10)));
}

export function priorityList(scores: readonly { node: string; score: number }[]): HostPriority[] {
  return scores.map((s) => ({ Host: s.node, Score: extenderScore(s.score) }));
}

/** Every node scores the same: kube-scheduler's own plugins decide. */
export function flatPriorities(nodeNames: readonly string[]): HostPriority[] {
  return nodeNames.map((Host) => ({ Host, Score: 0 }));
}

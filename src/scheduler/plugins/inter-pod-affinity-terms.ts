/**
 * InterPodAffinity's view of a PodAffinityTerm, as kube-scheduler's framework.AffinityTerm holds it:
 *
 *   labelSelector absent → selects no pod; {} → every pod (of the term's namespaces).
 *   namespaces of a term of pod P: namespaces ∪ {ns : namespaceSelector matches ns's labels};
 *     both absent/empty (and namespaceSelector absent) → {P's namespace}; namespaceSelector {} → every namespace.
 *   matchLabelKeys / mismatchLabelKeys are NOT applied here: since MatchLabelKeysInPodAffinity (beta 1.31,
 *     GA 1.33) the API server merges them into labelSelector when the pod is created
 *     (pkg/registry/core/pod/strategy.go mutatePodAffinity) and the scheduler's newAffinityTerm reads
 *     labelSelector alone — re-applying them would be redundant for such pods and wrong for pods created
 *     before the merge existed, so parity means reading labelSelector as stored.
 *
 * Two directions, as upstream:
 *   - the incoming pod's terms (IncomingTerm) are matched against many existing pods: upstream unrolls
 *     namespaceSelector into the namespace set once per cycle (mergeAffinityTermNamespacesIfNotEmpty,
 *     listing only namespaces that exist); here each term memoises the answer per namespace, from
 *     ctx.namespaceLabels (an unknown namespace matches only an empty `{}` selector).
 *   - existing pods' terms are matched against the one incoming pod (existingTermMatches), with the
 *     incoming pod's namespace labels (upstream's GetNamespaceLabelsSnapshot: unknown namespace → no labels).
 */
import { selectorAnchors, selectorMatches } from '../../cluster/labels.js';
import type { LabelSelector, PodAffinityTerm, PodInfo } from '../../cluster/model.js';
import type { PodMatcher } from '../framework/pod-counts.js';

/** Topology pair key: label keys cannot contain '=', so `key=value` is unambiguous. */
export function pair(key: string, value: string): string {
  return `${key}=${value}`;
}

function isEmptySelector(sel: LabelSelector): boolean {
  return Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0;
}

/** A selector in kube's String() shape (app=web,tier in (a,b),!legacy). */
export function describeSelector(sel: LabelSelector | undefined): string {
  if (!sel) return '<no selector: matches no pod>';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) parts.push(`${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    const vals = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${vals})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${e.operator} (${vals})`);
  }
  return parts.length ? parts.join(',') : '<empty selector: matches every pod>';
}

/** One term of the pod being scheduled, with its namespace answers memoised for the cycle. */
export class IncomingTerm {
  readonly topologyKey: string;
  readonly description: string;
  private readonly selector: LabelSelector | undefined;
  private readonly namespaces: ReadonlySet<string>;
  private readonly nsSelector: LabelSelector | undefined;
  private readonly allNamespaces: boolean;
  private readonly nsMemo = new Map<string, boolean>();

  constructor(
    term: PodAffinityTerm,
    ownNamespace: string,
    private readonly namespaceLabels: (ns: string) => Record<string, string> | undefined,
    readonly weight = 0,
  ) {
    this.topologyKey = term.topologyKey;
    this.selector = term.labelSelector;
    this.description = describeSelector(term.labelSelector);
    const own = term.namespaces.length === 0 && term.namespaceSelector === undefined;
    this.namespaces = new Set(own ? [ownNamespace] : term.namespaces);
    this.nsSelector = term.namespaceSelector;
    this.allNamespaces = term.namespaceSelector !== undefined && isEmptySelector(term.namespaceSelector);
  }

  /** Whether the term can select any pod at all (it has a labelSelector). */
  get selects(): boolean {
    return this.selector !== undefined;
  }

  get labelSelector(): LabelSelector | undefined {
    return this.selector;
  }

  private namespaceOk(ns: string): boolean {
    if (this.allNamespaces || this.namespaces.has(ns)) return true;
    const sel = this.nsSelector;
    if (!sel) return false;
    let ok = this.nsMemo.get(ns);
    if (ok === undefined) {
      const labels = this.namespaceLabels(ns);
      ok = labels !== undefined && selectorMatches(sel, labels);
      this.nsMemo.set(ns, ok);
    }
    return ok;
  }

  matches(pod: PodInfo): boolean {
    return (
      this.selector !== undefined &&
      this.namespaceOk(pod.namespace) &&
      selectorMatches(this.selector, pod.labels)
    );
  }

  /**
   * The namespaces this term selects among `candidates` (the namespaces that hold pods: no other can
   * hold a match), or undefined for every namespace — namespaceSelector resolved now, as upstream's
   * mergeAffinityTermNamespacesIfNotEmpty does per cycle, so that a cached count keyed by the result
   * stays right when namespace labels change.
   */
  namespacesAmong(candidates: Iterable<string>): ReadonlySet<string> | undefined {
    if (this.allNamespaces) return undefined;
    if (!this.nsSelector) return this.namespaces;
    const out = new Set(this.namespaces);
    for (const ns of candidates) if (this.namespaceOk(ns)) out.add(ns);
    return out;
  }
}

/**
 * The existing pods `terms` all select (upstream's podMatchesAllAffinityTerms), as a PodMatcher for the
 * snapshot's counts; undefined when no pod can match (no terms, or a term without a labelSelector).
 */
export function matcherOfAll(
  terms: readonly IncomingTerm[],
  namespacesWithPods: () => Iterable<string>,
): PodMatcher | undefined {
  if (terms.length === 0 || terms.some((t) => !t.selects)) return undefined;
  let namespaces: Set<string> | undefined;
  for (const t of terms) {
    const own = t.namespacesAmong(namespacesWithPods());
    if (own === undefined) continue;
    namespaces = namespaces ? new Set([...namespaces].filter((ns) => own.has(ns))) : new Set(own);
  }
  const nsKey = namespaces ? [...namespaces].sort() : null;
  // The snapshot keeps the matcher beyond this cycle: it holds the selectors, not the terms (whose
  // namespace lookups belong to the cycle).
  const selectors = terms.map((t) => t.labelSelector as LabelSelector);
  const inNamespaces = namespaces;
  // A match satisfies every selector, so it carries every selector's anchors.
  const anchors = selectors.flatMap(selectorAnchors);
  return {
    key: JSON.stringify([nsKey, selectors]),
    namespaces: inNamespaces,
    anchors,
    matches: (pod) =>
      (inNamespaces === undefined || inNamespaces.has(pod.namespace)) &&
      selectors.every((sel) => selectorMatches(sel, pod.labels)),
  };
}

export function incomingTerms(
  terms: readonly PodAffinityTerm[] | undefined,
  pod: PodInfo,
  nsLabels: (ns: string) => Record<string, string> | undefined,
): IncomingTerm[] {
  return (terms ?? []).map((t) => new IncomingTerm(t, pod.namespace, nsLabels));
}

/** Upstream's podMatchesAllAffinityTerms: false for no terms. */
export function matchesAll(terms: readonly IncomingTerm[], pod: PodInfo): boolean {
  if (terms.length === 0) return false;
  for (const t of terms) if (!t.matches(pod)) return false;
  return true;
}

/** Whether the term of a pod in `ownerNamespace` selects `pod` (whose namespace carries `podNsLabels`). */
export function existingTermMatches(
  term: PodAffinityTerm,
  ownerNamespace: string,
  pod: PodInfo,
  podNsLabels: Record<string, string>,
): boolean {
  if (!term.labelSelector) return false;
  const ns = pod.namespace;
  let inNs: boolean;
  if (term.namespaces.length === 0 && term.namespaceSelector === undefined) inNs = ownerNamespace === ns;
  else {
    inNs =
      term.namespaces.includes(ns) ||
      (term.namespaceSelector !== undefined && selectorMatches(term.namespaceSelector, podNsLabels));
  }
  return inNs && selectorMatches(term.labelSelector, pod.labels);
}

/** Adds `delta` to a pair's count, dropping the entry at zero (counts go negative only transiently). */
export function bump(counts: Map<string, number>, key: string, delta: number): void {
  const n = (counts.get(key) ?? 0) + delta;
  if (n === 0) counts.delete(key);
  else counts.set(key, n);
}
